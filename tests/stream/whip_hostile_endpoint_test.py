#!/usr/bin/python3
"""`zerohop serve --whip URL --whip-token T` against hostile WHIP endpoints (http.server on 127.0.0.1, port 0),
one serve each, all at once:
  redirect  a 307 to another origin (another port): followed without the token, said so in the log; the
            other origin never sees an Authorization header, the endpoint's own origin does;
  redirect308  a 308 to another origin whose answer serve refuses (audio only): the resource there is
            DELETEd, and neither that POST nor that DELETE carries the token;
  huge      a 201 whose body never ends (100 MB a try): refused past 256 KB, saying so, and tried twice more
            (unbounded, it read the whole body: 84 -> 1,118 MB in one try);
  headers   a 201 whose header lines never end (1 GB of them): cut off past 320 KB, saying so (cpp-httplib
            keeps every header line: it took serve's RSS up 281 MB in 5 s), and tried again;
  trickle   an answer trickled a byte a second: cut off after 5 s with a line that says so; SIGTERM comes
            in the middle of the next trickled answer;
  audio     a 201 whose SDP has only an audio m-line: refused, saying it has no usable video section, and
            the resource DELETEd.
In every case serve's peak RSS (sampled every 20 ms) grows by at most 4 MB from its first POST (16 under
ASan), SIGTERM, sent while the endpoint still misbehaves, ends it (status 0) within 3 s, and no serve log
line holds the token.

usage: whip_hostile_endpoint_test.py ZEROHOP_BINARY     exit: 0 pass, 1 fail
"""
import http.server
import re
import signal
import socket
import subprocess
import sys
import threading
import time

TOKEN = "whip-hostile-secret-31"
FIRST_POST_S = 60  # serve's start to its first POST: WebRTC's start-up, four serves at once, maybe under ASan
CASE_S = FIRST_POST_S + 60  # each case's whole run
# serve's peak RSS over its first POST's, in every case: a few MB (0.4 MB measured in each case); under
# ASan, whose quarantine keeps freed memory, 16 (up to 9.7 measured: the trickle case).
RSS_GROWTH_MB = 4
RSS_GROWTH_ASAN_MB = 16
FINGERPRINT = "a=fingerprint:sha-256 " + ":".join(["AB"] * 32)
AUDIO_ONLY = ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n" + FINGERPRINT + "\r\n"
              "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=ice-ufrag:u\r\n"
              "a=ice-pwd:pppppppppppppppppppppp\r\na=setup:passive\r\na=recvonly\r\na=rtpmap:111 opus/48000/2\r\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Endpoint:
    """A WHIP endpoint that misbehaves as `mode` says, recording what it was sent."""

    def __init__(self, mode: str, redirect_to: "Endpoint | None" = None, redirect_status: int = 307):
        self.mode, self.redirect_to, self.redirect_status = mode, redirect_to, redirect_status
        self.lock = threading.Lock()
        self.posts, self.deletes, self.auth_seen, self.delete_auth = 0, 0, [], []
        ep = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_OPTIONS(self):
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_DELETE(self):
                with ep.lock:
                    ep.deletes += 1
                    ep.delete_auth.append(self.headers.get("Authorization"))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with ep.lock:
                    ep.posts += 1
                    ep.auth_seen.append(self.headers.get("Authorization"))
                try:
                    getattr(ep, "answer_" + ep.mode)(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # serve hung up: what it should do

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/whip"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer_redirect(self, h):
        h.send_response(self.redirect_status)
        h.send_header("Location", self.redirect_to.url)
        h.send_header("Content-Length", "0")
        h.end_headers()

    def answer_refuse(self, h):  # the other origin: whatever it is sent, it does not serve
        h.send_response(403)
        h.send_header("Content-Length", "0")
        h.end_headers()

    def answer_huge(self, h):
        h.send_response(201)
        h.send_header("Location", "/whip/r1")
        h.send_header("Content-Type", "application/sdp")
        h.send_header("Content-Length", str(1 << 30))
        h.end_headers()
        chunk = b"a=x:" + b"y" * 65530 + b"\r\n"
        for _ in range(1600):  # up to 100 MB, as fast as serve reads it
            h.wfile.write(chunk)

    def answer_headers(self, h):  # header lines without end, as fast as serve reads them
        h.wfile.write(b"HTTP/1.1 201 Created\r\nLocation: /whip/r1\r\n")
        chunk = (b"X-Flood: " + b"y" * 40 + b"\r\n") * 1000
        for _ in range(20000):  # up to 1 GB
            h.wfile.write(chunk)

    def answer_trickle(self, h):
        for byte in b"HTTP/1.1 201 Created\r\nLocation: /whip/r1\r\n":
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
            time.sleep(1)

    def answer_audio(self, h):
        body = AUDIO_ONLY.encode()
        h.send_response(201)
        h.send_header("Location", "/whip/r1")
        h.send_header("Content-Type", "application/sdp")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def stats(self):
        with self.lock:
            return self.posts, self.deletes, list(self.auth_seen)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Serve:
    def __init__(self, binary: str, whip_url: str):
        self.proc = subprocess.Popen([binary, "serve", "--source", "test:320x180@15", "--listen",
                                      f"127.0.0.1:{free_port()}", "--whip", whip_url, "--whip-token", TOKEN],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.lines, self.lock = [], threading.Lock()
        self.baseline_mb, self.peak_mb = None, 0.0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._sample_rss, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            with self.lock:
                self.lines.append(raw.decode("utf-8", "replace").rstrip())

    def log(self) -> str:
        with self.lock:
            return "\n".join(self.lines)

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024

    def _sample_rss(self):
        """The peak RSS from mark_baseline() on, sampled every 20 ms (a burst between two readings counts)."""
        while self.proc.poll() is None:
            try:
                rss = self.rss_mb()
            except (OSError, AttributeError):
                return
            with self.lock:
                if self.baseline_mb is not None:
                    self.peak_mb = max(self.peak_mb, rss)
            time.sleep(0.02)

    def under_asan(self) -> bool:
        with open(f"/proc/{self.proc.pid}/maps") as f:
            return "libasan" in f.read()

    def mark_baseline(self):
        with self.lock:
            self.baseline_mb = self.peak_mb = self.rss_mb()

    def rss_growth_mb(self) -> float:
        with self.lock:
            return self.peak_mb - (self.baseline_mb or self.peak_mb)

    def terminate_within(self, case: str, seconds: float, bad: list) -> None:
        """SIGTERM; serve must exit (status 0) within `seconds`, whatever the endpoint is doing."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            rc = None
        took = time.monotonic() - t0
        print(f"{case}: SIGTERM: exit {rc} in {took:.2f} s")
        if rc != 0 or took > seconds:
            bad.append(f"{case}: SIGTERM took {took:.2f} s (exit {rc}); want exit 0 within {seconds:.0f} s")

    def wait_log(self, pattern: str, timeout: float) -> "str | None":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(pattern, self.log())
            if m:
                return m.group(0)
            if self.proc.poll() is not None:
                return None
            time.sleep(0.1)
        return None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait(cond, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def first_post(case: str, ep: "Endpoint", serve: "Serve", bad: list) -> bool:
    """Waits for serve's first POST to the endpoint. Each case's own bounds count from there: serve posts
    once WebRTC is ready, which takes seconds on a loaded 2-core box and more under ASan (four serves start
    at once here)."""
    if wait(lambda: ep.stats()[0] >= 1, FIRST_POST_S):
        serve.mark_baseline()
        return True
    bad.append(f"{case}: serve never posted its offer within {FIRST_POST_S} s (serve log:\n{serve.log()})")
    return False


def end_case(case: str, serve: "Serve", bad: list) -> None:
    """Every case ends the same way: serve's peak RSS since its first POST grew by at most RSS_GROWTH_MB
    (whatever the endpoint sent), and SIGTERM, sent while the endpoint still misbehaves, ends it within 3 s."""
    growth = serve.rss_growth_mb()
    bound = RSS_GROWTH_ASAN_MB if serve.under_asan() else RSS_GROWTH_MB
    print(f"{case}: serve's peak RSS grew {growth:.1f} MB from its first POST ({serve.baseline_mb:.1f} MB)")
    if growth > bound:
        bad.append(f"{case}: serve's peak RSS grew {growth:.1f} MB (at most {bound} MB)")
    if TOKEN in serve.log():
        bad.append(f"{case}: serve's log holds the token")
    serve.terminate_within(case, 3, bad)


def case_redirect(ep: "Endpoint", serve: "Serve", other: "Endpoint | None", bad: list) -> None:
    if not wait(lambda: other.stats()[0] >= 2, 20):
        bad.append(f"redirect: the other origin got {other.stats()[0]} POSTs, want 2 (serve log:\n{serve.log()})")
    line = serve.wait_log(r"redirected \(307\) to another origin.*without the bearer token[^\n]*", 5)
    print(f"redirect: {line}")
    if not line:
        bad.append("redirect: no log line saying the redirect is followed without the token")
    if any(a is not None for a in other.stats()[2]):
        bad.append(f"redirect: the other origin was sent Authorization: {other.stats()[2]}")
    if not ep.stats()[2] or ep.stats()[2][0] != "Bearer " + TOKEN:
        bad.append(f"redirect: the endpoint's own origin did not get the token: {ep.stats()[2]}")
    end_case("redirect", serve, bad)


def case_redirect_delete(ep: "Endpoint", serve: "Serve", other: "Endpoint | None", bad: list) -> None:
    """A 308 to another origin whose answer serve refuses (audio only): the resource there is DELETEd, and
    neither that POST nor that DELETE carries the token."""
    line = serve.wait_log(r"redirected \(308\) to another origin.*without the bearer token[^\n]*", 20)
    print(f"redirect308: {line}")
    if not line:
        bad.append(f"redirect308: no line saying the 308 is followed without the token (serve log:\n{serve.log()})")
    if not wait(lambda: other.stats()[1] >= 1, 20):
        bad.append(f"redirect308: the other origin's resource was not DELETEd (serve log:\n{serve.log()})")
    with other.lock:
        posts_auth, deletes_auth = list(other.auth_seen), list(other.delete_auth)
    print(f"redirect308: the other origin got {len(posts_auth)} POST(s), {len(deletes_auth)} DELETE(s)")
    if any(a is not None for a in posts_auth + deletes_auth):
        bad.append(f"redirect308: the other origin was sent Authorization: POST {posts_auth}, DELETE {deletes_auth}")
    if not ep.stats()[2] or ep.stats()[2][0] != "Bearer " + TOKEN:
        bad.append(f"redirect308: the endpoint's own origin did not get the token: {ep.stats()[2]}")
    end_case("redirect308", serve, bad)


def case_huge(ep: "Endpoint", serve: "Serve", other: "Endpoint | None", bad: list) -> None:
    line = serve.wait_log(r"body is over 256 KB[^\n]*", 20)
    print(f"huge: {line}")
    if not line:
        bad.append(f"huge: no line refusing the body past 256 KB (serve log:\n{serve.log()})")
        return
    before, posts = serve.rss_mb(), ep.stats()[0]
    if not wait(lambda: ep.stats()[0] >= posts + 2, 10):  # two more endless answers
        bad.append("huge: serve did not try again after the refusal")
    wait(lambda: serve.log().count("body is over 256 KB") >= 3, 5)
    after = serve.rss_mb()
    print(f"huge: serve RSS {before:.1f} -> {after:.1f} MB over {ep.stats()[0] - posts} more endless answers")
    end_case("huge", serve, bad)  # the peak, over all three endless answers


def case_headers(ep: "Endpoint", serve: "Serve", other: "Endpoint | None", bad: list) -> None:
    line = serve.wait_log(r"the endpoint sent over 320 KB[^\n]*", 20)
    print(f"headers: {line}")
    if not line:
        bad.append(f"headers: no line cutting off the header flood past 320 KB (serve log:\n{serve.log()})")
        return
    posts = ep.stats()[0]
    if not wait(lambda: ep.stats()[0] >= posts + 1, 10):
        bad.append("headers: serve did not try again after cutting the flood off")
    end_case("headers", serve, bad)


def case_trickle(ep: "Endpoint", serve: "Serve", other: "Endpoint | None", bad: list) -> None:
    t0 = time.monotonic()
    line = serve.wait_log(r"no complete answer \(headers and body\) within 5000 ms[^\n]*", 12)
    print(f"trickle: {time.monotonic() - t0:.1f} s after the POST: {line}")
    if not line:
        bad.append(f"trickle: no line saying the trickled answer timed out (serve log:\n{serve.log()})")
        return
    if not wait(lambda: ep.stats()[0] >= 2, 5):
        bad.append("trickle: no second attempt after the time-out")
        return
    time.sleep(1)  # well inside the second trickled answer
    end_case("trickle", serve, bad)


def case_audio(ep: "Endpoint", serve: "Serve", other: "Endpoint | None", bad: list) -> None:
    line = serve.wait_log(r"no usable video section[^\n]*", 20)
    print(f"audio: {line}")
    if not line:
        bad.append(f"audio: an audio-only answer was not refused as such (serve log:\n{serve.log()})")
    elif "m=audio" not in line:
        bad.append(f"audio: the refusal does not say what the answer had: {line}")
    if not wait(lambda: ep.stats()[1] >= 1, 5):
        bad.append("audio: the refused session's resource was not DELETEd")
    if "ICE failed" in serve.log():
        bad.append("audio: serve still tried the session (\"ICE failed\")")
    end_case("audio", serve, bad)


# Each case: its name, its body, the endpoint's mode and, for a redirect, the other origin's mode and the status.
CASES = [
    ("redirect", case_redirect, "redirect", "refuse", 307),
    ("redirect308", case_redirect_delete, "redirect", "audio", 308),
    ("huge", case_huge, "huge", None, 0),
    ("headers", case_headers, "headers", None, 0),
    ("trickle", case_trickle, "trickle", None, 0),
    ("audio", case_audio, "audio", None, 0),
]


def run_case(binary: str, bad: list, name: str, body, mode: str, other_mode: "str | None", status: int) -> None:
    """One serve against its endpoint(s): the case's body runs once serve has posted; both are ended after."""
    other = Endpoint(other_mode) if other_mode else None
    ep = Endpoint(mode, redirect_to=other, redirect_status=status or 307)
    serve = Serve(binary, ep.url)
    try:
        if first_post(name, ep, serve, bad):
            body(ep, serve, other, bad)
    finally:
        serve.stop()
        ep.close()
        if other:
            other.close()


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 1
    binary, bad = sys.argv[1], []
    cases = [threading.Thread(target=run_case, args=(binary, bad) + case) for case in CASES]
    for c in cases:
        c.start()
    for c in cases:
        c.join(CASE_S)
    if any(c.is_alive() for c in cases):
        bad.append(f"a case did not finish within {CASE_S} s")
    for b in bad:
        print("FAIL: " + b)
    if not bad:
        print("PASS")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
