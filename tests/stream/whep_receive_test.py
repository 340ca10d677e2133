#!/usr/bin/python3
"""zerohop-whep-receive against a running `zerohop serve` (test camera, CPU path): it must decode 60
pictures, each with the timecode the test camera drew, and say capture -> decoded latency; against a
port nothing listens on it must fail, saying why (so it cannot pass without video).

usage: whep_receive_test.py ZEROHOP_BINARY RECEIVER_BINARY     exit: 0 pass, 1 fail
"""
import json
import socket
import subprocess
import sys
import time
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def receive(receiver: str, port: int, frames: int, timeout: float) -> tuple[int, dict]:
    r = subprocess.run([receiver, f"http://127.0.0.1:{port}/whep", "--frames", str(frames), "--timeout", str(timeout)],
                       capture_output=True, text=True, timeout=timeout + 20)
    lines = r.stdout.strip().splitlines()
    return r.returncode, (json.loads(lines[-1]) if lines else {"error": "no output: " + r.stderr[-500:]})


def main() -> int:
    zerohop, receiver = sys.argv[1], sys.argv[2]
    rc, nothing = receive(receiver, free_port(), 10, 3)
    if rc == 0 or not nothing.get("error"):
        print(f"FAIL: with nothing listening the receiver exited {rc}: {nothing}")
        return 1
    print(f"nothing listening: exit {rc}, {nothing['error']!r}")

    port = free_port()
    serve = subprocess.Popen([zerohop, "serve", "--source", "test:640x360@30", "--gpu", "off",
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
        rc, r = receive(receiver, port, 60, 20)
        print(json.dumps(r))
        bad = []
        if rc != 0:
            bad.append(f"receiver exit {rc}: {r.get('error')}")
        if r.get("frames_decoded") != 60 or r.get("timecodes_read") != 60:
            bad.append(f"{r.get('frames_decoded')} pictures decoded, {r.get('timecodes_read')} timecodes, want 60 and 60")
        if (r.get("width"), r.get("height")) != (640, 360):
            bad.append(f"picture {r.get('width')}x{r.get('height')}, want 640x360")
        p50 = r.get("latency_ms", {}).get("p50", -1)
        if not 0 <= p50 < 1000:
            bad.append(f"capture -> decoded p50 {p50} ms")
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
