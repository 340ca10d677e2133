#!/usr/bin/python3
"""Audio against video at a receiver (issue 35): `zerohop serve --source test:640x360@30 --audio test`
(the CPU path) and zerohop-av-sync-receive, a webrtcbin WHEP viewer that decodes the H.264 and the Opus,
finds each marker frame (the test camera's white block) and each click of the test tone, and times them
on rtpbin's lip-synced timeline. At least 4 marker/click pairs must be matched and the median of
click - marker must be within 100 ms (the issue's goal is 20 ms; the figure is printed). Against a port
nothing listens on the receiver must fail, so the check cannot pass without media.

usage: av_sync_test.py ZEROHOP_BINARY RECEIVER_BINARY     exit: 0 pass, 1 fail, 77 skipped (sanitizer build)
"""
import json
import socket
import subprocess
import sys
import time
import urllib.request

MARKERS = 4
BOUND_MS = 100.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def receive(receiver: str, port: int, markers: int, timeout: float) -> tuple[int, dict]:
    r = subprocess.run([receiver, f"http://127.0.0.1:{port}/whep", "--markers", str(markers), "--timeout",
                        str(timeout)], capture_output=True, text=True, timeout=timeout + 20)
    lines = r.stdout.strip().splitlines()
    return r.returncode, (json.loads(lines[-1]) if lines else {"error": "no output: " + r.stderr[-500:]})


def instrumented(binary: str) -> str:
    """The sanitizer runtime `binary` links (libasan, libtsan), or ""."""
    with open(binary, "rb") as f:
        data = f.read()
    return next((name for name in ("libasan", "libtsan") if name.encode() + b".so" in data), "")


def main() -> int:
    zerohop, receiver = sys.argv[1], sys.argv[2]
    if sanitizer := instrumented(zerohop) or instrumented(receiver):
        # A timing comparison: an instrumented encode and decode run several times slower and unevenly
        # (227 ms measured under ASan); the marker and the tone's schedule are unit tests there.
        print(f"SKIP: {sanitizer} build: a timing measurement, checked in the default build")
        return 77
    rc, nothing = receive(receiver, free_port(), 1, 3)
    if rc == 0 or not nothing.get("error"):
        print(f"FAIL: with nothing listening the receiver exited {rc}: {nothing}")
        return 1
    print(f"nothing listening: exit {rc}, {nothing['error']!r}")

    port = free_port()
    serve = subprocess.Popen([zerohop, "serve", "--source", "test:640x360@30", "--gpu", "off", "--audio", "test",
                              "--listen", f"127.0.0.1:{port}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=2).read()
                break
            except OSError:
                if serve.poll() is not None or time.monotonic() > deadline:
                    print(f"FAIL: serve did not answer /stats: {serve.stderr.read() if serve.poll() is not None else ''}")
                    return 1
                time.sleep(0.2)
        rc, r = receive(receiver, port, MARKERS, 30)
        print(json.dumps(r))
        bad = []
        if rc != 0:
            bad.append(f"receiver exit {rc}: {r.get('error')}")
        if r.get("matched", 0) < MARKERS:
            bad.append(f"{r.get('matched')} marker/click pairs matched, want {MARKERS}")
        p50, p90 = r.get("offset_ms", {}).get("p50"), r.get("abs_offset_ms", {}).get("p90")
        print(f"audio - video (click - marker) at the receiver: p50 {p50} ms, |offset| p90 {p90} ms "
              f"over {r.get('matched')} markers (goal: 20 ms at p50)")
        if p50 is None or abs(p50) > BOUND_MS:
            bad.append(f"median click - marker {p50} ms, want within {BOUND_MS} ms")
        for b in bad:
            print("FAIL:", b)
        return 1 if bad else 0
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=15)
        except subprocess.TimeoutExpired:
            serve.kill()


if __name__ == "__main__":
    sys.exit(main())
