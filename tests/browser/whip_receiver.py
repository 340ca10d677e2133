#!/usr/bin/python3
"""A WHIP endpoint that is not zerohop's sender code: GStreamer's own webrtcbin as the receiver
(recvonly answerer), decoding the H.264 it gets with openh264dec and counting the frames, and the Opus
sound when the offer has it (opusdec: its samples counted, their RMS kept). The tests
point `zerohop serve --whip` at it (test_whip_publish.py).

HTTP (standard WHIP, non-trickle):
  POST   /whip            Content-Type application/sdp offer -> 201, Location /whip/session/<id>, answer
                          (401 without the right `Authorization: Bearer` when --token is given,
                          415 for another Content-Type)
  DELETE /whip/session/ID -> 200 (404 unknown)
  PATCH  /whip/session/ID -> 405 (no trickle)
Test controls (not WHIP):
  GET  /status -> JSON {posts, deletes, unauthorized, sessions, frames, keyframes, audio_samples, audio_rms}
  POST /pli    -> the receiver asks for a keyframe the way a decoder does (RTCP PLI via webrtcbin)

usage: whip_receiver.py --port N [--host 127.0.0.1] [--token T]
Prints `listening on PORT` once ready; SIGINT/SIGTERM stop it.
"""

from __future__ import annotations

import argparse
import http.server
import json
import signal
import sys
import threading
import uuid
from pathlib import Path

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstVideo", "1.0")
from gi.repository import Gst, GstVideo, GstWebRTC  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gst_webrtc_answer import answer_offer  # noqa: E402


class Receiver:
    def __init__(self, loopback: bool):
        self.loopback = loopback
        self.lock = threading.Lock()
        self.sessions: dict[str, Gst.Pipeline] = {}
        self.counts = dict(posts=0, deletes=0, unauthorized=0, frames=0, keyframes=0, audio_samples=0)
        self.audio_square_sum = 0.0
        self.depays: list[Gst.Element] = []

    def _on_pad(self, webrtc, pad, pipeline):
        if pad.direction != Gst.PadDirection.SRC:
            return
        caps = pad.get_current_caps() or pad.query_caps(None)
        if caps and caps.get_structure(0).get_string("media") == "audio":
            self._on_audio_pad(pad, pipeline)
            return
        chain = Gst.parse_bin_from_description(
            "rtph264depay name=depay request-keyframe=true ! h264parse name=parse ! openh264dec "
            "! fakesink name=sink sync=false", True)
        pipeline.add(chain)
        chain.sync_state_with_parent()
        pad.link(chain.get_static_pad("sink"))
        depay = chain.get_by_name("depay")
        with self.lock:
            self.depays.append(depay)

        def on_parsed(_pad, info):
            buf = info.get_buffer()
            if buf and not buf.has_flags(Gst.BufferFlags.DELTA_UNIT):
                with self.lock:
                    self.counts["keyframes"] += 1
            return Gst.PadProbeReturn.OK

        def on_decoded(_pad, info):
            with self.lock:
                self.counts["frames"] += 1
            return Gst.PadProbeReturn.OK

        chain.get_by_name("parse").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, on_parsed)
        chain.get_by_name("sink").get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_decoded)

    def _on_audio_pad(self, pad, pipeline):
        """The publisher's sound: Opus decoded to S16, its samples counted and their power summed."""
        chain = Gst.parse_bin_from_description(
            "rtpopusdepay ! opusdec ! audioconvert ! audio/x-raw,format=S16LE ! fakesink name=sink sync=false", True)
        pipeline.add(chain)
        chain.sync_state_with_parent()
        pad.link(chain.get_static_pad("sink"))

        def on_samples(_pad, info):
            buf = info.get_buffer()
            ok, mapped = buf.map(Gst.MapFlags.READ)
            if ok:
                samples = memoryview(mapped.data).cast("h")
                square = float(sum(s * s for s in samples))
                buf.unmap(mapped)
                with self.lock:
                    self.counts["audio_samples"] += len(samples)
                    self.audio_square_sum += square
            return Gst.PadProbeReturn.OK

        chain.get_by_name("sink").get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_samples)

    def answer(self, offer_sdp: str) -> tuple[str, str]:
        pipeline = Gst.Pipeline.new()
        webrtc = Gst.ElementFactory.make("webrtcbin")
        webrtc.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
        pipeline.add(webrtc)
        webrtc.connect("pad-added", self._on_pad, pipeline)
        if self.loopback:  # libnice skips loopback interfaces unless told
            ice = webrtc.get_property("ice-agent")
            ice.set_property("ice-tcp", False)
            ice.emit("add-local-ip-address", "127.0.0.1")
        pipeline.set_state(Gst.State.PLAYING)

        def receive_only(w):  # the publisher's video is sendonly: we only receive
            for i in range(8):
                t = w.emit("get-transceiver", i)
                if t is None:
                    break
                t.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.RECVONLY)
        try:
            answer = answer_offer(webrtc, offer_sdp, receive_only, gather_timeout=3)
        except ValueError:
            pipeline.set_state(Gst.State.NULL)
            raise
        sid = uuid.uuid4().hex[:16]
        with self.lock:
            self.sessions[sid] = pipeline
        return sid, answer

    def delete(self, sid: str) -> bool:
        with self.lock:
            pipeline = self.sessions.pop(sid, None)
            self.depays.clear()
        if pipeline is None:
            return False
        pipeline.set_state(Gst.State.NULL)
        return True

    def pli(self) -> bool:
        with self.lock:
            depays = list(self.depays)
        for d in depays:  # upstream force-key-unit from the depayloader: the RTP session sends PLI
            d.get_static_pad("sink").push_event(
                GstVideo.video_event_new_upstream_force_key_unit(Gst.CLOCK_TIME_NONE, True, 0))
        return bool(depays)

    def status(self) -> dict:
        with self.lock:
            n = self.counts["audio_samples"]
            rms = (self.audio_square_sum / n) ** 0.5 if n else 0.0
            return dict(self.counts, sessions=len(self.sessions), audio_rms=round(rms, 1))


def make_handler(rx: Receiver, token: str | None):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            sys.stderr.write("whip_receiver: " + (fmt % args) + "\n")

        def _send(self, code: int, body: str = "", ctype: str = "text/plain", headers: dict | None = None):
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if token is None or self.headers.get("Authorization") == f"Bearer {token}":
                return True
            with rx.lock:
                rx.counts["unauthorized"] += 1
            self._send(401, "bad or missing bearer token\n", headers={"WWW-Authenticate": "Bearer"})
            return False

        def _body(self) -> str:
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n).decode()

        def do_GET(self):
            if self.path == "/status":
                self._send(200, json.dumps(rx.status()), "application/json")
            else:
                self._send(404, "no such thing\n")

        def do_POST(self):
            body = self._body()
            if self.path == "/pli":
                self._send(200 if rx.pli() else 409, "ok\n")
                return
            if self.path != "/whip":
                self._send(404, "no such thing\n")
                return
            if not self._authorized():
                return
            if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/sdp":
                self._send(415, "want application/sdp\n")
                return
            with rx.lock:
                rx.counts["posts"] += 1
            try:
                sid, answer = rx.answer(body)
            except ValueError as e:
                self._send(400, f"{e}\n")
                return
            self._send(201, answer, "application/sdp", {"Location": f"/whip/session/{sid}"})

        def do_DELETE(self):
            if not self.path.startswith("/whip/session/"):
                self._send(404, "no such thing\n")
                return
            if not self._authorized():
                return
            if rx.delete(self.path.rsplit("/", 1)[1]):
                with rx.lock:
                    rx.counts["deletes"] += 1
                self._send(200, "ended\n")
            else:
                self._send(404, "unknown session\n")

        def do_PATCH(self):
            self._body()
            self._send(405, "no trickle\n", headers={"Allow": "DELETE"})

    return Handler


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token", default=None)
    args = ap.parse_args()
    stop_signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)  # before any thread starts: all inherit it
    Gst.init(None)
    for f in ("webrtcbin", "rtph264depay", "h264parse", "openh264dec"):
        if Gst.ElementFactory.find(f) is None:
            print(f"whip_receiver: GStreamer element {f} is missing", flush=True)
            return 77
    rx = Receiver(loopback=args.host.startswith("127."))
    server = http.server.ThreadingHTTPServer((args.host, args.port), make_handler(rx, args.token))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening on {args.port}", flush=True)
    signal.sigwait(stop_signals)
    server.shutdown()
    for sid in list(rx.sessions):
        rx.delete(sid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
