#!/usr/bin/python3
"""A plain GStreamer WebRTC sender with the same HTTP face as `zerohop serve`: the reference the end-to-end
benchmark compares zerohop against, and a stand-in server for developing the viewer page.

Frames: a scrolling noisy YUY2 texture with the zerohop pixel timecode (src/core/timecode.cpp format, luma
235/16, neutral chroma) drawn into every frame at capture time, pushed into
  appsrc -> x264enc (zerolatency, no B-frames, CBR, constrained baseline) -> tee -> per viewer:
  queue -> rtph264pay -> webrtcbin
HTTP: GET / and the files of --web, POST /whep (SDP offer -> 201 + answer + Location), DELETE /whep/<id>,
GET /stats (fps/frames/viewers only; no per-stage figures), CORS as zerohop.

With --source rtsp://HOST:PORT/PATH it is the plain GStreamer relay of an IP camera's H.264 that the RTSP
benchmark compares `serve --source rtsp://...` (passthrough) against (issue 38):
  rtspsrc (latency=0, TCP) -> rtph264depay -> h264parse -> tee -> per viewer: queue -> rtph264pay -> webrtcbin
(the camera's own access units, no decode, no encode; the first frames a viewer gets start at the camera's
next IDR).

With --audio (the sound benchmark's reference, scripts/bench-av-sync.py --reference) a live tone goes to every
viewer whose offer has audio: audiotestsrc (live, 10 ms buffers, each stamped at its start less its duration:
handed on at its end, as a microphone's) -> opusenc (VOIP, --audio-frame-ms, 64 kb/s)
-> tee -> per viewer: queue -> rtpopuspay -> webrtcbin; the sender reports map RTP to the capture instant
(rtpbin rtcp-sync-send-time off, as zerohop serve does), so a browser's estimatedPlayoutTimestamp reads
capture -> playout for both senders alike.

usage: gst_whep_reference.py [--source test:1280x720@30] [--listen 127.0.0.1:8080] [--bitrate 2500]
                             [--preset veryfast] [--keyint 120] [--web DIR] [--audio [--audio-frame-ms 20]]
Prints `open http://HOST:PORT/`; SIGINT/SIGTERM stop it (exit 0).
"""

from __future__ import annotations

import argparse
import http.server
import json
import math
import mimetypes
import os
import random
import re
import signal
import sys
import threading
import time
import uuid
from pathlib import Path

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstVideo", "1.0")
from gi.repository import Gst, GstVideo, GstWebRTC  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gst_webrtc_answer import answer_offer  # noqa: E402

CELLS = 76


def crc8(data: bytes) -> int:
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def timecode_bits(ms: int, seq: int) -> list[int]:
    payload = ((ms & ((1 << 44) - 1)) << 20) | (seq & ((1 << 20) - 1))
    crc = crc8(payload.to_bytes(8, "big"))
    return [1, 0, 1, 0] + [(payload >> (63 - i)) & 1 for i in range(64)] + [(crc >> (7 - i)) & 1 for i in range(8)]


class TestFrames:
    """YUY2 frames: a textured picture twice the frame size, panned slowly diagonally (as zerohop's test
    pattern pans), with the timecode strip drawn on top. Cheap enough to render in Python at 1080p30."""

    def __init__(self, width: int, height: int):
        self.w, self.h = width, height
        self.cell = max(4, width // 80)
        rnd = random.Random(1)
        tw = width * 2
        # One long line: a random walk (structure at many scales) plus fine noise; chroma drifting slowly.
        n = tw * 2
        luma, v = [], 120.0
        for _ in range(n):
            v = min(225.0, max(30.0, v + rnd.uniform(-6, 6)))
            luma.append(int(v) + rnd.randrange(-8, 9))
        line = bytearray(n * 2)
        for x in range(0, n, 2):
            line[2 * x] = luma[x]
            line[2 * x + 1] = 128 + int(40 * math.sin(x / 300))
            line[2 * x + 2] = luma[x + 1]
            line[2 * x + 3] = 128 + int(40 * math.cos(x / 410))
        line = bytes(line)
        # Texture rows: the line at a different (even) offset per row, brighter in a checker of 48-pixel tiles.
        self.rows = []
        for y in range(height * 2):
            off = ((y * 37 + (y // 48) * 211) % tw) & ~1
            self.rows.append(line[off * 2:(off + tw) * 2])
        self.white = bytes([235, 128]) * self.cell
        self.black = bytes([16, 128]) * self.cell

    def frame(self, n: int, ms: int) -> bytes:
        dx = int((self.w / 2) * (1 + math.sin(n * 0.013))) & ~1
        dy = int((self.h / 2) * (1 + math.sin(n * 0.017 + 1)))
        a, b = dx * 2, (dx + self.w) * 2
        buf = bytearray(b"".join(self.rows[y + dy][a:b] for y in range(self.h)))
        rb = self.w * 2
        strip = b"".join(self.white if bit else self.black for bit in timecode_bits(ms, n))
        for y in range(self.cell):
            buf[y * rb:y * rb + len(strip)] = strip
        return bytes(buf)


class Sender:
    def __init__(self, width: int, height: int, fps: int, bitrate_kbps: int, loopback_ice: bool,
                 preset: str = "veryfast", keyint: int = 120, rtsp: str | None = None, audio_frame_ms: int = 0):
        self.width, self.height, self.fps = width, height, fps
        self.loopback_ice = loopback_ice
        self.rtsp = rtsp
        self.viewers: dict[str, dict] = {}
        self.lock = threading.Lock()
        self.frames = 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        self.thread = None
        if rtsp:
            # The camera's access units relayed as they come: what a user builds with GStreamer alone.
            self.encoder = "GStreamer rtspsrc ! rtph264depay ! h264parse (the camera's H.264, relayed)"
            self.pipeline = Gst.parse_launch(
                f"rtspsrc location={rtsp} latency=0 protocols=tcp ! rtph264depay ! h264parse config-interval=-1 "
                f"! video/x-h264,stream-format=byte-stream,alignment=au ! tee name=t allow-not-linked=true")
            self.tee = self.pipeline.get_by_name("t")
            self.audio_tee = None

            def count(_pad, _info):
                self.frames += 1
                return Gst.PadProbeReturn.OK
            self.tee.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, count)
            self.pipeline.set_state(Gst.State.PLAYING)
            return
        self.encoder = f"GStreamer x264enc ({preset}, zerolatency, CBR {bitrate_kbps} kb/s, keyint {keyint})"
        sound = (f" audiotestsrc name=tone is-live=true wave=sine freq=440 volume=0.3 samplesperbuffer=480 "
                 f"! audio/x-raw,rate=48000,channels=1 ! opusenc audio-type=voice bitrate=64000 "
                 f"frame-size={audio_frame_ms} ! tee name=at allow-not-linked=true") if audio_frame_ms else ""
        self.pipeline = Gst.parse_launch(
            f"appsrc name=src is-live=true format=time do-timestamp=false "
            f"caps=video/x-raw,format=YUY2,width={width},height={height},framerate={fps}/1 "
            f"! queue max-size-buffers=1 leaky=downstream ! videoconvert ! video/x-raw,format=I420 "
            f"! x264enc name=enc tune=zerolatency speed-preset={preset} bitrate={bitrate_kbps} "
            f"key-int-max={keyint} bframes=0 vbv-buf-capacity={max(1, 1000 // fps)} "
            f"option-string=nal-hrd=cbr:force-cfr=1 "
            f"! video/x-h264,profile=constrained-baseline,stream-format=byte-stream "
            f"! tee name=t allow-not-linked=true" + sound)
        self.audio_tee = self.pipeline.get_by_name("at")
        if audio_frame_ms:
            # A live audiotestsrc pushes each buffer at its own timestamp (its start): a microphone's block
            # exists only at its end, which is when zerohop's tone and ALSA hand theirs on. Each buffer is
            # stamped one buffer earlier, so both senders' sound comes out one block after its stamp.
            def as_captured(_pad, info):
                buf = info.get_buffer()
                if buf is not None and buf.pts != Gst.CLOCK_TIME_NONE and buf.duration != Gst.CLOCK_TIME_NONE:
                    buf.pts = max(0, buf.pts - buf.duration)
                return Gst.PadProbeReturn.OK
            self.pipeline.get_by_name("tone").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, as_captured)
        self.src = self.pipeline.get_by_name("src")
        self.tee = self.pipeline.get_by_name("t")
        self.pipeline.set_state(Gst.State.PLAYING)
        self.gen = TestFrames(width, height)
        self.thread = threading.Thread(target=self._produce, daemon=True)
        self.thread.start()

    def _produce(self) -> None:
        period = 1.0 / self.fps
        t0 = time.monotonic()
        n = 0
        while not self._stop.is_set():
            target = t0 + n * period
            delay = target - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            ms = time.time_ns() // 1_000_000
            data = self.gen.frame(n, ms)
            buf = Gst.Buffer.new_wrapped(data)
            buf.pts = n * Gst.SECOND // self.fps
            buf.duration = Gst.SECOND // self.fps
            self.src.emit("push-buffer", buf)
            self.frames += 1
            n += 1

    def add_viewer(self, offer_sdp: str) -> tuple[str, str]:
        m = None
        # The H.264 payload type the browser offers for constrained baseline, packetization-mode 1.
        for pt, fmtp in re.findall(r"a=fmtp:(\d+) (.*)", offer_sdp):
            if "packetization-mode=1" in fmtp and "profile-level-id=42e01f" in fmtp:
                if re.search(rf"a=rtpmap:{pt} H264/90000", offer_sdp):
                    m = int(pt)
                    break
        if m is None:
            raise ValueError("the offer has no H.264 42e01f packetization-mode=1 payload type")
        vid = uuid.uuid4().hex[:12]
        q = Gst.ElementFactory.make("queue")
        q.set_property("max-size-buffers", 30)
        q.set_property("leaky", 2)
        pay = Gst.ElementFactory.make("rtph264pay")
        pay.set_property("config-interval", -1)
        pay.set_property("pt", m)
        pay.set_property("aggregate-mode", "zero-latency")
        webrtc = Gst.ElementFactory.make("webrtcbin")
        webrtc.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
        caps = Gst.Caps.from_string(
            f"application/x-rtp,media=video,encoding-name=H264,payload={m},clock-rate=90000,"
            f"packetization-mode=(string)1,profile-level-id=(string)42e01f")
        # Above 720p x264 signals a higher level in the SPS (4.0 for 1080p30) than the offer's 42e01f (3.1);
        # Chrome offers level-asymmetry-allowed=1, so the SDP keeps 42e01f while the stream says its level.
        fix = Gst.ElementFactory.make("capssetter")
        fix.set_property("caps", Gst.Caps.from_string("application/x-rtp,profile-level-id=(string)42e01f"))
        for e in (q, pay, fix, webrtc):
            self.pipeline.add(e)
        q.link(pay)
        pay.link(fix)
        fix.link_filtered(webrtc, caps)
        for e in (webrtc, fix, pay, q):
            e.sync_state_with_parent()
        if self.loopback_ice:  # as zerohop does: libnice skips loopback interfaces unless told
            ice = webrtc.get_property("ice-agent")
            ice.set_property("ice-tcp", False)
            if not ice.emit("add-local-ip-address", "127.0.0.1"):
                print("warning: could not add 127.0.0.1 to the ICE agent", file=sys.stderr)
        trans = webrtc.emit("get-transceiver", 0)
        trans.set_property("codec-preferences", caps)
        trans.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
        tee_pad = self.tee.request_pad_simple("src_%u")
        tee_pad.link(q.get_static_pad("sink"))
        sound = self._add_sound(webrtc, offer_sdp)

        try:
            sdp = answer_offer(webrtc, offer_sdp)
        except ValueError:
            self._remove(dict(q=q, pay=pay, fix=fix, webrtc=webrtc, tee_pad=tee_pad, sound=sound))
            raise
        with self.lock:
            self.viewers[vid] = dict(q=q, pay=pay, fix=fix, webrtc=webrtc, tee_pad=tee_pad, sound=sound)
        # A new viewer needs a keyframe now, not at the next GOP.
        q.get_static_pad("src").send_event(
            GstVideo.video_event_new_upstream_force_key_unit(Gst.CLOCK_TIME_NONE, True, 0))
        return vid, sdp

    def _add_sound(self, webrtc, offer_sdp: str) -> dict | None:
        """The tone to this viewer when the sender has one and the offer has Opus: its second transceiver;
        the sender reports map RTP to the capture instant (the buffer's running time), as zerohop does."""
        if self.audio_tee is None:
            return None
        pts = re.findall(r"a=rtpmap:(\d+) opus/48000/2", offer_sdp, flags=re.IGNORECASE)
        if "m=audio" not in offer_sdp or not pts:
            return None
        pt = int(pts[0])
        rtpbin = webrtc.get_by_name("rtpbin")
        if rtpbin is not None and rtpbin.find_property("rtcp-sync-send-time"):
            rtpbin.set_property("rtcp-sync-send-time", False)
        q = Gst.ElementFactory.make("queue")
        q.set_property("max-size-buffers", 50)
        q.set_property("leaky", 2)
        pay = Gst.ElementFactory.make("rtpopuspay")
        pay.set_property("pt", pt)
        caps = Gst.Caps.from_string(f"application/x-rtp,media=audio,encoding-name=OPUS,payload={pt},clock-rate=48000")
        for e in (q, pay):
            self.pipeline.add(e)
        q.link(pay)
        pay.link_filtered(webrtc, caps)
        for e in (pay, q):
            e.sync_state_with_parent()
        trans = webrtc.emit("get-transceiver", 1)
        trans.set_property("codec-preferences", caps)
        trans.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
        tee_pad = self.audio_tee.request_pad_simple("src_%u")
        tee_pad.link(q.get_static_pad("sink"))
        return dict(q=q, pay=pay, tee_pad=tee_pad)

    def _remove(self, v: dict) -> None:
        v["tee_pad"].unlink(v["q"].get_static_pad("sink"))
        self.tee.release_request_pad(v["tee_pad"])
        if v.get("sound"):
            a = v["sound"]
            a["tee_pad"].unlink(a["q"].get_static_pad("sink"))
            self.audio_tee.release_request_pad(a["tee_pad"])
            for e in (a["q"], a["pay"]):
                e.set_state(Gst.State.NULL)
                self.pipeline.remove(e)
        for e in (v["q"], v["pay"], v["fix"], v["webrtc"]):
            e.set_state(Gst.State.NULL)
            self.pipeline.remove(e)

    def remove_viewer(self, vid: str) -> bool:
        with self.lock:
            v = self.viewers.pop(vid, None)
        if v is None:
            return False
        self._remove(v)
        return True

    def stats(self) -> dict:
        up = time.monotonic() - self.started
        return {"source": self.rtsp or f"reference test pattern {self.width}x{self.height}@{self.fps} yuy2",
                "encoder": self.encoder, "fps": self.frames / up if up else 0,
                "frames": self.frames, "drops": 0, "viewers": len(self.viewers), "stages": {}, "uptime_s": up}

    def stop(self) -> None:
        self._stop.set()
        if self.thread:
            self.thread.join(2)
        for vid in list(self.viewers):
            self.remove_viewer(vid)
        self.pipeline.set_state(Gst.State.NULL)


def make_handler(sender: Sender, web: Path):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _cors(self):
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
            self.send_header("Access-Control-Allow-Headers", "Content-Type")
            self.send_header("Access-Control-Expose-Headers", "Location")

        def _send(self, code: int, body: bytes, ctype: str, extra: dict | None = None):
            self.send_response(code)
            self._cors()
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_OPTIONS(self):
            self._send(204, b"", "text/plain")

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/stats":
                return self._send(200, json.dumps(sender.stats()).encode(), "application/json")
            name = "index.html" if path == "/" else path.lstrip("/")
            f = (web / name).resolve()
            if web.resolve() not in f.parents or not f.is_file():
                return self._send(404, b"not found\n", "text/plain")
            self._send(200, f.read_bytes(), mimetypes.guess_type(f.name)[0] or "application/octet-stream")

        def do_POST(self):
            if self.path.split("?")[0] != "/whep":
                return self._send(404, b"not found\n", "text/plain")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            try:
                vid, answer = sender.add_viewer(body)
            except Exception as e:  # a bad offer is the client's problem: say why
                return self._send(400, f"{e}\n".encode(), "text/plain")
            self._send(201, answer.encode(), "application/sdp", {"Location": f"/whep/{vid}"})

        def do_DELETE(self):
            m = re.fullmatch(r"/whep/(\w+)", self.path)
            if m and sender.remove_viewer(m.group(1)):
                return self._send(200, b"", "text/plain")
            self._send(404, b"no such session\n", "text/plain")

    return Handler


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default="test:1280x720@30")
    ap.add_argument("--listen", default="127.0.0.1:8080")
    ap.add_argument("--bitrate", type=int, default=2500, help="kbit/s")
    ap.add_argument("--preset", default="veryfast", help="x264 speed preset (zerohop serve's default: veryfast)")
    ap.add_argument("--keyint", type=int, default=120, help="frames between keyframes (zerohop serve's default)")
    ap.add_argument("--encoder", default="x264", help="accepted for command-line compatibility; only x264")
    ap.add_argument("--web", default=str(Path(__file__).resolve().parents[2] / "web"))
    ap.add_argument("--audio", nargs="?", const="tone", default=None,
                    help="also a live tone (Opus) to viewers whose offer has audio (serve's --audio test: any value)")
    ap.add_argument("--audio-frame-ms", type=int, choices=(10, 20), default=20)
    args = ap.parse_args()
    rtsp = args.source.split("?")[0] if args.source.startswith("rtsp://") else None
    m = re.fullmatch(r"test:(\d+)x(\d+)@(\d+)", args.source)
    if not m and not rtsp:
        print(f"error: --source {args.source}: want test:WIDTHxHEIGHT@FPS or rtsp://HOST:PORT/PATH", file=sys.stderr)
        return 2
    host, _, port = args.listen.rpartition(":")
    Gst.init(None)
    loopback = host in ("127.0.0.1", "localhost", "::1", "[::1]")
    size = [int(m.group(i)) for i in (1, 2, 3)] if m else [0, 0, 0]
    sender = Sender(*size, args.bitrate, loopback, args.preset, args.keyint, rtsp,
                    args.audio_frame_ms if args.audio and not rtsp else 0)
    httpd = http.server.ThreadingHTTPServer((host, int(port)), make_handler(sender, Path(args.web)))
    httpd.daemon_threads = True
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    print(f"open http://{host}:{httpd.server_address[1]}/", flush=True)
    while not stop.wait(0.2):
        pass
    httpd.shutdown()
    sender.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
