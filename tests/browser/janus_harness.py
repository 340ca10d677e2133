"""Janus from its Debian package, run by the tests and the benchmark: a generated configuration (only the
streaming plugin and the HTTP transport, one RTP H.264 mountpoint with an RTCP port), the streaming API over
Janus's HTTP transport, and a headless-Chromium page that plays a mountpoint (or, for comparison, zerohop's
WHEP directly) and measures decoded fps and capture->display latency from the pixel timecode with
the viewer page's own reader (web/timecode.js).

Janus ignores loopback for ICE: run inside zerohop_browser.enter_private_network(lan=True), which makes
the veth pair zh0 (10.77.0.1) <-> zh1 (10.77.0.2); Janus gathers on zh0 only.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import zerohop_browser as zb

JANUS_LIB = Path("/usr/lib/x86_64-linux-gnu/janus")
MOUNTPOINT_ID = 7
VIDEOROOM_ID = 1234
JANUS_IP = "10.77.0.1"
WEB = Path(__file__).resolve().parents[2] / "web"


def find_janus() -> str | None:
    exe = shutil.which("janus") or ("/usr/bin/janus" if os.access("/usr/bin/janus", os.X_OK) else None)
    if not exe:
        return None
    for lib in ("plugins/libjanus_streaming.so", "transports/libjanus_http.so"):
        if not (JANUS_LIB / lib).exists():
            return None
    return exe


class Janus:
    """janus with a private configuration folder; RTP mountpoint MOUNTPOINT_ID takes H.264 (pt 96) on
    rtp_port and sends RTCP (its keyframe requests) from rtcp_port, and Opus (pt 111) on rtp_port + 2."""

    def __init__(self, log_path: Path, rtp_port: int = 5004, rtcp_port: int = 5005, http_port: int = 8088,
                 videoroom: bool = False):
        exe = find_janus()
        if not exe:
            raise FileNotFoundError("janus (apt-get install janus)")
        self.rtp_port, self.rtcp_port, self.http_port = rtp_port, rtcp_port, http_port
        self.audio_port = rtp_port + 2  # the camera's sound (Opus), when serve has some
        self.dir = Path(tempfile.mkdtemp(prefix="zerohop-janus-"))
        for sub, lib in (("plugins", "libjanus_streaming.so"), ("transports", "libjanus_http.so")):
            (self.dir / sub).mkdir()
            (self.dir / sub / lib).symlink_to(JANUS_LIB / sub / lib)
        if videoroom:  # the SFU: room VIDEOROOM_ID, one H.264 publisher, simulcast as it comes
            (self.dir / "plugins" / "libjanus_videoroom.so").symlink_to(JANUS_LIB / "plugins" / "libjanus_videoroom.so")
            (self.dir / "janus.plugin.videoroom.jcfg").write_text(f"""
general: {{
}}
room-{VIDEOROOM_ID}: {{
  description = "zerohop serve --whip"
  publishers = 1
  videocodec = "h264"
  h264_profile = "42e01f"
  fir_freq = 10
  bitrate = 0
}}
""")
        (self.dir / "none").mkdir()
        d = self.dir
        (d / "janus.jcfg").write_text(f"""
general: {{
  configs_folder = "{d}"
  plugins_folder = "{d}/plugins"
  transports_folder = "{d}/transports"
  events_folder = "{d}/none"
  loggers_folder = "{d}/none"
  debug_level = 4
  debug_timestamps = true
  session_timeout = 120
}}
media: {{
  rtp_port_range = "20000-20999"
}}
nat: {{
  ice_enforce_list = "zh0"
  ignore_mdns = true
}}
""")
        (d / "janus.transport.http.jcfg").write_text(f"""
general: {{
  json = "compact"
  base_path = "/janus"
  http = true
  port = {http_port}
  https = false
}}
admin: {{
  admin_http = false
}}
""")
        (d / "janus.plugin.streaming.jcfg").write_text(f"""
general: {{
}}
zerohop: {{
  type = "rtp"
  id = {MOUNTPOINT_ID}
  description = "zerohop serve --janus"
  media = (
    {{
      type = "video"
      mid = "v"
      label = "camera"
      port = {rtp_port}
      rtcpport = {rtcp_port}
      pt = 96
      codec = "h264"
      fmtp = "profile-level-id=42e01f;packetization-mode=1"
    }},
    {{
      type = "audio"
      mid = "a"
      label = "sound"
      port = {self.audio_port}
      pt = 111
      codec = "opus"
    }}
  )
}}
""")
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([exe, "-C", str(d / "janus.jcfg"), "-F", str(d), "-o"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while True:
            try:
                self.request("", {"janus": "info"})
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"janus did not answer on port {http_port} (see {log_path})")
                time.sleep(0.2)

    def request(self, path: str, body: dict | None = None, timeout: float = 5) -> dict:
        url = f"http://127.0.0.1:{self.http_port}/janus{path}"
        if body is not None:
            body = dict(body, transaction=f"t{random.randrange(1 << 30)}")
            req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        else:
            req = urllib.request.Request(url)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.load(r)

    def watch(self) -> "JanusSubscriber":
        return JanusSubscriber(self)

    def stop(self) -> None:
        zb.terminate(self.proc)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class JanusSubscriber:
    """One viewer of the mountpoint through the streaming plugin's API: create a session, attach, "watch"
    (Janus offers), then start() with the browser's answer."""

    def __init__(self, janus: Janus):
        self.janus = janus
        self.session = janus.request("", {"janus": "create"})["data"]["id"]
        self.handle = janus.request(f"/{self.session}", {"janus": "attach", "plugin": "janus.plugin.streaming"})[
            "data"]["id"]
        r = janus.request(f"/{self.session}/{self.handle}",
                          {"janus": "message", "body": {"request": "watch", "id": MOUNTPOINT_ID}})
        if r.get("janus") not in ("ack", "event"):
            raise RuntimeError(f"watch refused: {r}")
        self.offer = self._event_with_jsep(r)["jsep"]["sdp"]

    def _event_with_jsep(self, first: dict) -> dict:
        if first.get("jsep"):
            return first
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            ev = self.janus.request(f"/{self.session}?maxev=1", timeout=12)
            if ev.get("janus") == "event" and ev.get("jsep"):
                return ev
            if ev.get("janus") == "event" and "error" in json.dumps(ev.get("plugindata", {})):
                raise RuntimeError(f"janus: {ev}")
        raise RuntimeError("janus sent no offer within 10 s")

    def start(self, answer_sdp: str) -> None:
        r = self.janus.request(f"/{self.session}/{self.handle}",
                               {"janus": "message", "body": {"request": "start"},
                                "jsep": {"type": "answer", "sdp": answer_sdp}})
        if r.get("janus") not in ("ack", "event"):
            raise RuntimeError(f"start refused: {r}")

    def keepalive(self) -> None:
        self.janus.request(f"/{self.session}", {"janus": "keepalive"})


class JanusSession:
    """A Janus session with one plugin handle, its events read by long polling (one session per peer, so
    no peer reads another's events)."""

    def __init__(self, janus: Janus, plugin: str):
        self.janus = janus
        self.session = janus.request("", {"janus": "create"})["data"]["id"]
        self.handle = janus.request(f"/{self.session}", {"janus": "attach", "plugin": plugin})["data"]["id"]

    def message(self, body: dict, jsep: dict | None = None) -> dict:
        """Sends `body` to the plugin; returns its synchronous answer or, for an asynchronous one (ack),
        the plugin's event (waited for: at most 10 s)."""
        msg = {"janus": "message", "body": body}
        if jsep:
            msg["jsep"] = jsep
        r = self.janus.request(f"/{self.session}/{self.handle}", msg, timeout=10)
        if r.get("janus") == "success":
            return r
        if r.get("janus") != "ack":
            raise RuntimeError(f"janus refused {body.get('request')}: {r}")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            ev = self.janus.request(f"/{self.session}?maxev=1", timeout=12)
            if ev.get("janus") == "event":
                data = ev.get("plugindata", {}).get("data", {})
                if "error" in data:
                    raise RuntimeError(f"janus: {body.get('request')}: {data['error']}")
                return ev
        raise RuntimeError(f"janus sent no event for {body.get('request')} within 10 s")

    def keepalive(self) -> None:
        self.janus.request(f"/{self.session}", {"janus": "keepalive"})

    def destroy(self) -> None:
        try:
            self.janus.request(f"/{self.session}", {"janus": "destroy"}, timeout=2)
        except OSError:
            pass


class WhipToVideoRoom:
    """A WHIP endpoint in front of the VideoRoom, as the WHIP servers in front of Janus do (Meetecho's
    simple-whip-server): POST /whip with an SDP offer -> the offer "joinandconfigure"s a publisher of
    room VIDEOROOM_ID -> 201 with Janus's answer and a Location; DELETE there -> the publisher leaves.
    `answers` keeps each answer Janus gave; `publisher_id` the last publisher's feed id."""

    def __init__(self, janus: Janus, host: str, port: int):
        import http.server
        import threading
        bridge = self
        self.janus, self.host, self.port = janus, host, port
        self.answers: list[str] = []
        self.offers: list[str] = []
        self.publisher_id: int | None = None
        self.sessions: dict[str, JanusSession] = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_OPTIONS(self):
                self.send_response(204)
                self.end_headers()

            def do_POST(self):
                offer = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                try:
                    sess = JanusSession(bridge.janus, "janus.plugin.videoroom")
                    ev = sess.message({"request": "joinandconfigure", "room": VIDEOROOM_ID, "ptype": "publisher",
                                       "display": "zerohop"}, {"type": "offer", "sdp": offer})
                    answer = ev["jsep"]["sdp"]
                except (RuntimeError, KeyError, OSError) as e:
                    body = str(e).encode()
                    self.send_response(502)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                bridge.offers.append(offer)
                bridge.answers.append(answer)
                bridge.publisher_id = ev["plugindata"]["data"].get("id")
                rid = str(len(bridge.answers))
                bridge.sessions[rid] = sess
                body = answer.encode()
                self.send_response(201)
                self.send_header("Content-Type", "application/sdp")
                self.send_header("Location", f"/whip/{rid}")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_DELETE(self):
                sess = bridge.sessions.pop(self.path.rsplit("/", 1)[-1], None)
                if sess:
                    sess.destroy()
                self.send_response(200 if sess else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer((host, port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/whip"

    def keepalive(self) -> None:
        for sess in list(self.sessions.values()):
            sess.keepalive()

    def stop(self) -> None:
        self.server.shutdown()
        for sess in self.sessions.values():
            sess.destroy()


def browser_answer(driver, offer: str) -> str:
    """The meter page's answer to Janus's offer, with all its candidates (Janus takes no trickle here)."""
    answer = driver.execute_async_script("""
      const [offer, done] = arguments;
      (async () => {
        await pc.setRemoteDescription({type: 'offer', sdp: offer});
        await pc.setLocalDescription(await pc.createAnswer());
        await gathered();
        done(pc.localDescription.sdp);
      })().catch((e) => done('ERROR ' + e));""", offer)
    if answer.startswith("ERROR"):
        raise RuntimeError(f"the browser could not answer Janus: {answer}")
    return answer


def watch_videoroom(driver, janus: Janus, feed: int) -> tuple[JanusSession, str]:
    """The browser (a meter page) subscribes to publisher `feed` of room VIDEOROOM_ID; returns the
    subscriber's session and the mid of its video stream (for "configure" with a substream)."""
    open_meter(driver)
    sub = JanusSession(janus, "janus.plugin.videoroom")
    ev = sub.message({"request": "join", "room": VIDEOROOM_ID, "ptype": "subscriber", "streams": [{"feed": feed}]})
    streams = ev["plugindata"]["data"].get("streams", [])
    mid = next((st["mid"] for st in streams if st.get("type") == "video"), None)
    answer = browser_answer(driver, ev["jsep"]["sdp"])
    sub.message({"request": "start"}, {"type": "answer", "sdp": answer})
    return sub, mid


# The page: a <video>, the viewer's timecode reader (web/timecode.js), and a meter that reads
# the timecode of every presented frame (requestVideoFrameCallback), like the viewer page does.
PAGE = "data:text/html,<!doctype html><meta charset=utf-8><title>meter</title><video id=v autoplay muted playsinline></video>"

METER_JS = r"""
const v = document.getElementById('v');
const m = window.meter = {frames: 0, read: 0, latency: [], first: null};
const canvas = document.createElement('canvas');
const ctx = canvas.getContext('2d', {willReadFrequently: true, alpha: false});
function onFrame(now, md) {
  v.requestVideoFrameCallback(onFrame);
  m.frames++;
  if (m.first === null) m.first = now;
  const width = md.width || v.videoWidth;
  const cell = zerohopTimecodeCellSize(width);
  const w = cell * ZEROHOP_TC_CELLS;
  if (canvas.width !== w || canvas.height !== cell) { canvas.width = w; canvas.height = cell; }
  ctx.drawImage(v, 0, 0, w, cell, 0, 0, w, cell);
  const tc = zerohopReadTimecode(ctx.getImageData(0, Math.floor(cell / 2), w, 1), width);
  if (!tc) return;
  m.read++;
  const at = md.expectedDisplayTime > 0 ? md.expectedDisplayTime : performance.now();
  m.latency.push(zerohopLatencyMs(performance.timeOrigin + at, tc.wallClockMs));
  if (m.latency.length > 3000) m.latency.shift();
}
v.requestVideoFrameCallback(onFrame);
window.pc = new RTCPeerConnection();
// Every track (Janus's video and audio may come in separate streams) in the one element, muted: a
// muted element still plays the sound out, so the audio receiver decodes it.
const tracks = new MediaStream();
pc.ontrack = (e) => { tracks.addTrack(e.track); v.srcObject = tracks; };
window.gathered = () => new Promise((ok) => {
  if (pc.iceGatheringState === 'complete') return ok();
  pc.addEventListener('icegatheringstatechange', () => { if (pc.iceGatheringState === 'complete') ok(); });
  setTimeout(ok, 3000);
});
window.heard = async () => {
  const s = await pc.getStats();
  let n = 0, concealed = 0;
  s.forEach((r) => {
    if (r.type === 'inbound-rtp' && r.kind === 'audio') { n = r.totalSamplesReceived || 0; concealed = r.concealedSamples || 0; }
  });
  return {samples: n, concealed: concealed};
};
window.decoded = async () => {
  const s = await pc.getStats();
  let n = 0;
  s.forEach((r) => { if (r.type === 'inbound-rtp' && r.kind === 'video') n = r.framesDecoded || 0; });
  return n;
};
"""


def timecode_reader_js() -> str:
    return (WEB / "timecode.js").read_text()


def open_meter(driver, origin: str | None = None) -> None:
    """A data: page, or (`origin`, for fetch() to serve without Chromium's private-network checks) a plain
    document of that origin (serve's /stats) turned into the same page."""
    if origin:
        driver.get(origin + "stats")
        driver.execute_script("document.body.innerHTML = '<video id=v autoplay muted playsinline></video>';")
    else:
        driver.get(PAGE)
    driver.execute_script(timecode_reader_js() + "\n" + METER_JS)


def play_janus(driver, janus: Janus) -> JanusSubscriber:
    """The browser answers Janus's offer (all candidates in the SDP) and the mountpoint starts."""
    open_meter(driver)
    sub = janus.watch()
    answer = browser_answer(driver, sub.offer)
    sub.start(answer)
    return sub


def play_whep(driver, base_url: str) -> None:
    """The same page and meter, straight from serve's WHEP (for the comparison)."""
    open_meter(driver, base_url)
    result = driver.execute_async_script("""
      const [url, done] = arguments;
      (async () => {
        pc.addTransceiver('video', {direction: 'recvonly'});
        await pc.setLocalDescription(await pc.createOffer());
        await gathered();
        const r = await fetch(url + 'whep', {method: 'POST', headers: {'Content-Type': 'application/sdp'},
                                             body: pc.localDescription.sdp});
        if (r.status !== 201) throw new Error('POST /whep ' + r.status + ' ' + await r.text());
        await pc.setRemoteDescription({type: 'answer', sdp: await r.text()});
        done('ok');
      })().catch((e) => done('ERROR ' + e));""", base_url)
    if result != "ok":
        raise RuntimeError(f"WHEP from the meter page failed: {result}")


def meter(driver) -> dict:
    return driver.execute_script("return {frames: meter.frames, read: meter.read, n: meter.latency.length};")


def latency_since(driver, start_index: int) -> list[float]:
    return driver.execute_script("return meter.latency.slice(arguments[0]);", start_index)
