#!/usr/bin/python3
"""Soak: `zerohop serve --share soak` runs for DURATION while WHEP sessions (a real Chromium offer,
negotiated through webrtcbin, then DELETEd) and `zerohop tap` readers come and go. Asserts that the
server keeps encoding at the source rate, that its RSS grows by less than 5 % between the end of the
warm-up and the end, and that its file-descriptor and thread counts come back to where they were.
GPU memory: when serve logs that it runs the GPU path, the driver's figure for the serve process
(nvidia-smi --query-compute-apps) at the end of the warm-up and at the end, which must stay within
2 MiB; otherwise it prints "gpu memory: not measured (no GPU)" (or why not), never a number.
A progress line every --report-every seconds (RSS, fds, threads, sessions, GPU memory).

usage: soak.py [--seconds 120] [--warmup 20] [--no-taps | --no-whep] [--pause S] [--report-every S] ZEROHOP_BINARY OFFER_SDP
(30-minute version: --seconds 1800; a session-heavy one for memory per session: --no-taps --pause 0;
readers only: --no-whep; see docs/reliability.md)
exit 0 pass, 1 fail
"""
import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_stats(pid: int) -> dict:
    status = open(f"/proc/{pid}/status").read().split("\n")
    rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    threads = next(int(line.split()[1]) for line in status if line.startswith("Threads:"))
    return {"rss_kb": rss, "fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": threads}


def gpu_memory_mib(pid: int, log_path: str) -> tuple[int | None, str]:
    """(MiB of GPU memory the serve process holds, "") when it runs the GPU path and nvidia-smi lists it,
    else (None, why not). Only the driver's per-process figure is used: no number is made up."""
    log = open(log_path).read()
    if " info GPU path" not in log:  # the data-path decision, logged once at start (choose_path.cpp)
        no_gpu = shutil.which("nvidia-smi") is None or "no usable CUDA device" in log or "has no CUDA" in log
        return None, "no GPU" if no_gpu else "serve is on the CPU path"
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"nvidia-smi failed: {e}"
    if out.returncode != 0:
        return None, f"nvidia-smi exited {out.returncode}: {out.stderr.strip()[:200]}"
    for line in out.stdout.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 2 and fields[0] == str(pid) and fields[1].isdigit():
            return int(fields[1]), ""
    return None, f"nvidia-smi does not list pid {pid} (in a container without the host's pid namespace?)"


def gpu_note(gpu: tuple[int | None, str]) -> str:
    if gpu[0] is not None:
        return f"{gpu[0]} MiB"
    return f"not measured ({gpu[1]})"


def request(method: str, url: str, body: bytes | None = None, ctype: str | None = None):
    req = urllib.request.Request(url, data=body, method=method)
    if ctype:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def dump_stacks(pid: int) -> str:
    """Every thread's stack of a server that stopped answering (gdb, when installed)."""
    try:
        out = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                             capture_output=True, text=True, timeout=60)
        return out.stdout[-20000:]
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"(no stacks: {e})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("zerohop")
    ap.add_argument("offer")
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--warmup", type=float, default=20)
    ap.add_argument("--source", default="test:640x360@30")
    ap.add_argument("--no-taps", action="store_true", help="WHEP sessions only, no share readers")
    ap.add_argument("--no-whep", action="store_true", help="share readers only, no WHEP sessions")
    ap.add_argument("--pause", type=float, default=0.5, help="longest random pause between rounds (s)")
    ap.add_argument("--report-every", type=float, default=300, help="a progress line every this many seconds")
    args = ap.parse_args()
    if args.no_taps and args.no_whep:
        ap.error("--no-taps and --no-whep leave nothing to do")
    offer = open(args.offer, "rb").read()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # serve's output goes to a file: an undrained pipe would fill up and block the server's logging.
    log_path = f"/tmp/zerohop-soak-{os.getpid()}.log"
    log_file = open(log_path, "w")
    serve = subprocess.Popen([args.zerohop, "serve", "--source", args.source, "--listen", f"127.0.0.1:{port}",
                              "--share", f"soak{os.getpid()}", "--status-interval", "30"],
                             stdout=log_file, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 20
        while "open http://" not in open(log_path).read():
            if time.monotonic() > deadline or serve.poll() is not None:
                print("FAIL: serve printed no URL:\n" + open(log_path).read())
                return 1
            time.sleep(0.1)
        rng = random.Random(1)
        t0 = time.monotonic()
        baseline = None
        next_report = args.report_every
        sessions = taps = 0
        frames0 = json.loads(request("GET", base + "/stats")[2])["frames"]
        while time.monotonic() - t0 < args.seconds:
            try:
                # A viewer arrives and leaves; sometimes two at once.
                locs = []
                for _ in range(0 if args.no_whep else rng.choice([1, 1, 2])):
                    status, headers, body = request("POST", base + "/whep", offer, "application/sdp")
                    if status != 201:
                        print(f"FAIL: POST /whep answered {status}: {body[:200]!r}")
                        return 1
                    locs.append(headers["Location"])
                    sessions += 1
                # A reader attaches, reads a few frames in place and goes.
                tap = subprocess.CompletedProcess([], 0) if args.no_taps else subprocess.run([args.zerohop, "tap", f"soak{os.getpid()}",
                                      "--count", str(rng.randint(3, 15)), "--json"], capture_output=True, text=True,
                                     timeout=20)
                if tap.returncode != 0:
                    print(f"FAIL: zerohop tap exited {tap.returncode}: {tap.stderr}")
                    return 1
                taps += 0 if args.no_taps else 1
                for loc in locs:
                    status, _, _ = request("DELETE", base + loc)
                    if status != 200:
                        print(f"FAIL: DELETE {loc} answered {status}")
                        return 1
                time.sleep(rng.uniform(min(0.1, args.pause), args.pause))
                if baseline is None and time.monotonic() - t0 >= args.warmup:
                    baseline = proc_stats(serve.pid)
                    baseline_sessions = sessions
                    baseline_taps = taps
                    baseline_gpu = gpu_memory_mib(serve.pid, log_path)
                    print(f"after {args.warmup:.0f} s warm-up: {baseline}, gpu memory: {gpu_note(baseline_gpu)}")
                if time.monotonic() - t0 >= next_report:
                    next_report += args.report_every
                    print(f"at {time.monotonic() - t0:.0f} s: {proc_stats(serve.pid)}; {sessions} WHEP sessions, "
                          f"{taps} tap readers, gpu memory: {gpu_note(gpu_memory_mib(serve.pid, log_path))}")

            except (OSError, TimeoutError) as e:
                print(f"FAIL: the server stopped answering after {time.monotonic() - t0:.0f} s "
                      f"({sessions} sessions, {taps} taps): {e!r}")
                print(dump_stacks(serve.pid))
                return 1
        time.sleep(1.0)
        end = proc_stats(serve.pid)
        end_gpu = gpu_memory_mib(serve.pid, log_path)
        stats = json.loads(request("GET", base + "/stats")[2])
        elapsed = time.monotonic() - t0
        fps = (stats["frames"] - frames0) / elapsed
        print(f"end after {elapsed:.0f} s: {end}; {sessions} WHEP sessions, {taps} tap readers, "
              f"{fps:.1f} fps encoded, frames dropped {stats.get('drops')}, viewers now {stats['viewers']}, "
              f"share readers {stats.get('share_readers')}")
        growth = (end["rss_kb"] - baseline["rss_kb"]) / baseline["rss_kb"]
        per_session = (end["rss_kb"] - baseline["rss_kb"]) * 1024 / max(1, sessions - baseline_sessions)
        if args.no_whep:
            per_tap = (end["rss_kb"] - baseline["rss_kb"]) * 1024 / max(1, taps - baseline_taps)
            print(f"RSS per tap reader after the warm-up: {per_tap:+.0f} bytes ({taps - baseline_taps} readers)")
        else:
            print(f"RSS per WHEP session after the warm-up: {per_session:+.0f} bytes "
                  f"({sessions - baseline_sessions} sessions)")
        print(f"gpu memory: {gpu_note(baseline_gpu)} -> {gpu_note(end_gpu)}" if end_gpu[0] is not None
              else f"gpu memory: {gpu_note(end_gpu)}")
        failures = []
        if growth >= 0.05:
            failures.append(f"RSS grew {growth * 100:.1f} % ({baseline['rss_kb']} -> {end['rss_kb']} kB)")
        if end["fds"] > baseline["fds"] + 2:
            failures.append(f"file descriptors {baseline['fds']} -> {end['fds']}")
        if end["threads"] > baseline["threads"] + 2:
            failures.append(f"threads {baseline['threads']} -> {end['threads']}")
        if stats["viewers"] != 0:
            failures.append(f"{stats['viewers']} viewers left after every session was deleted")
        if baseline_gpu[0] is not None and end_gpu[0] is not None and end_gpu[0] > baseline_gpu[0] + 2:
            failures.append(f"GPU memory {baseline_gpu[0]} -> {end_gpu[0]} MiB")
        if fps < 25:
            failures.append(f"only {fps:.1f} fps encoded under churn")
        if failures:
            print("FAIL: " + "; ".join(failures))
            return 1
        print(f"PASS: RSS {growth * 100:+.1f} %, fds {baseline['fds']} -> {end['fds']}, "
              f"threads {baseline['threads']} -> {end['threads']}")
        return 0
    finally:
        log_file.close()
        serve.terminate()
        try:
            serve.wait(5)
        except subprocess.TimeoutExpired:
            serve.kill()


if __name__ == "__main__":
    sys.exit(main())
