#!/usr/bin/python3
"""zerohop-whep-receive against a running `zerohop serve` (test camera, CPU path): it must decode 60
pictures, each with the timecode the test camera drew, and say capture -> decoded latency; against a
port nothing listens on it must fail, saying why (so it cannot pass without video). Then a VP8-only
receiver (as Firefox ESR offers) and an H.264 one watch at once: both decode 60 timecoded pictures,
/stats shows one viewer of each codec and the VP8 encode running, and once both left it stops.

usage: whep_receive_test.py ZEROHOP_BINARY RECEIVER_BINARY     exit: 0 pass, 1 fail
"""
import concurrent.futures
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


def receive(receiver: str, port: int, frames: int, timeout: float, codec: str = "h264") -> tuple[int, dict]:
    r = subprocess.run([receiver, f"http://127.0.0.1:{port}/whep", "--frames", str(frames), "--timeout", str(timeout),
                        "--codec", codec], capture_output=True, text=True, timeout=timeout + 20)
    lines = r.stdout.strip().splitlines()
    return r.returncode, (json.loads(lines[-1]) if lines else {"error": "no output: " + r.stderr[-500:]})


def stats(port: int) -> dict:
    return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=2).read())


def check_decoded(name: str, rc: int, r: dict, bad: list) -> None:
    if rc != 0:
        bad.append(f"{name} receiver exit {rc}: {r.get('error')}")
    if r.get("frames_decoded") != 60 or r.get("timecodes_read") != 60:
        bad.append(f"{name}: {r.get('frames_decoded')} pictures decoded, {r.get('timecodes_read')} timecodes, want 60 and 60")
    if (r.get("width"), r.get("height")) != (640, 360):
        bad.append(f"{name}: picture {r.get('width')}x{r.get('height')}, want 640x360")


def both_codecs(receiver: str, port: int) -> list:
    """A VP8 and an H.264 receiver at once; /stats while they watch and after they left."""
    bad = []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        vp8 = pool.submit(receive, receiver, port, 60, 20, "vp8")
        h264 = pool.submit(receive, receiver, port, 60, 20, "h264")
        seen = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (vp8.done() and h264.done()):
            s = stats(port)
            codecs = sorted(v["codec"] for v in s["viewer_sessions"])
            if codecs == ["H264", "VP8"] and s["vp8"]["running"] and s["vp8"]["frames"] > 0:
                seen = s
                break
            time.sleep(0.1)
        for name, f in (("vp8", vp8), ("h264", h264)):
            rc, r = f.result()
            print(name, json.dumps(r))
            check_decoded(name, rc, r, bad)
    if seen is None:
        bad.append("/stats never showed an H264 and a VP8 viewer with the VP8 encode running")
    else:
        print("while both watched:", json.dumps(seen["vp8"]))
    deadline = time.monotonic() + 10
    while stats(port)["vp8"]["running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    after = stats(port)["vp8"]
    if after["running"] or after["starts"] != 1:
        bad.append(f"after both left the VP8 encode should be stopped after one run: {after}")
    return bad


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
        check_decoded("h264", rc, r, bad)
        p50 = r.get("latency_ms", {}).get("p50", -1)
        if not 0 <= p50 < 1000:
            bad.append(f"capture -> decoded p50 {p50} ms")
        if stats(port)["vp8"]["starts"] != 0:
            bad.append("the VP8 encode ran with no VP8 viewer")
        bad += both_codecs(receiver, port)
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
