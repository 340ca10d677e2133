#!/usr/bin/python3
"""End-to-end benchmark: capture->display latency in headless Chromium, read from the pixel timecode of
every presented frame by the viewer page (web/viewer.js), for `zerohop serve` and, in the same run, for a
plain GStreamer sender (x264enc -> webrtcbin, tests/browser/gst_whep_reference.py) with the same settings.

For each sender and size it starts the server, plays it in one headless Chromium viewer, waits for the
first frames plus a warm-up, then measures for --seconds: every confirmed latency sample, presented fps,
the server's CPU (utime+stime from /proc/<pid>/stat, % of one core) and Chromium's (all its processes).
Prints a markdown table (and writes it to --out if given).

usage: scripts/bench-e2e.py [--zerohop build/apps/zerohop/zerohop] [--seconds 30]
                            [--sizes 1280x720@30 1920x1080@30] [--bitrate 2500] [--preset veryfast]
                            [--keyint 120] [--no-reference] [--no-zerohop] [--netns] [--out FILE]
                            [--repeat N] [--wire] [--variant LABEL=SERVE_ARGS ...]
--rtsp puts an IP camera in front (issue 38): per size, a first `serve --source test:SIZE --share` feeds
GStreamer's RTSP server (tests/rtsp/rtsp_camera.py: x264 ultrafast of the share's frames, --bitrate, an IDR a
second), and the senders compared relay that camera: `serve --source rtsp://...?latency=0` (its H.264 passed
through) against the plain GStreamer relay `rtspsrc ! rtph264depay ! h264parse ! rtph264pay ! webrtcbin`
(gst_whep_reference.py --source rtsp://...). Capture is the first serve's, so both figures include the
camera's encode; their difference is the relay.

The browser's parts of each run (capture→received from abs-capture-time, received→compositor,
compositor→expected on screen) are the viewer page's p50 of its last 5 s, read every 2 s, medianed. --wire
adds capture→wire from the packets themselves (tests/browser/rtp_wire_probe.py).
--repeat N runs every sender N times per size, interleaved (A B, B A, A B ...), and reports the median of the
run medians and the median of the per-round ratios: one run locks onto one phase between capture, the
receiver's playout and the display's vsync, so single-run medians of the same sender scatter by a frame.
Run as root for --netns. Needs chromium, chromium-driver, python3-selenium (and for the reference
python3-gi with GStreamer's webrtcbin/x264enc), i.e. scripts/install-deps.sh.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import zerohop_browser as zb  # noqa: E402

REFERENCE_PY = ROOT / "tests" / "browser" / "gst_whep_reference.py"
REFERENCE_NATIVE = ROOT / "build" / "bench" / "e2e" / "zerohop-gst-baseline"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, seconds (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return 0.0


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def tree_cpu_seconds(root: int) -> dict[int, float]:
    return {p: cpu_seconds(p) for p in [root, *descendants(root)]}


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    # Processes that ended in between are lost; those that started count from zero.
    return sum(after[p] - before.get(p, 0.0) for p in after)


def server_stats(url: str) -> dict:
    try:
        with urllib.request.urlopen(url + "stats", timeout=2) as r:
            return json.load(r)
    except (OSError, ValueError):
        return {}


def measure(sender: str, binary: str, size: str, args, chromium: str, chromedriver: str, logs: Path,
            wire, extra: list[str], camera_url: str | None = None) -> dict:
    row = {"sender": sender, "source": size}
    port = zb.free_port()
    if camera_url:  # both relay the camera: no encode settings of their own
        serve_args = ["--source", camera_url, "--listen", f"127.0.0.1:{port}"]
    else:
        serve_args = ["--source", f"test:{size}", "--listen", f"127.0.0.1:{port}", "--bitrate", str(args.bitrate),
                      "--encoder", "x264", "--preset", args.preset, "--keyint", str(args.keyint)]
    tag = f"{sender.replace(' ', '_')}_{size.replace('@', '_')}"
    serve = zb.Serve(binary, serve_args + extra, logs / f"bench_{tag}.serve.log")
    driver = None
    try:
        url = serve.wait_url(30)
        if not url:
            row["error"] = "no 'open http://' line: " + serve.tail(5).replace("\n", " | ")
            return row
        driver = zb.start_chromium(chromium, chromedriver)
        driver.get(url)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and driver.execute_script(
                "return !(window.zerohop && window.zerohop.state === 'playing')"):
            time.sleep(0.2)
        if driver.execute_script("return window.zerohop.state") != "playing":
            row["error"] = "did not play: " + str(driver.execute_script("return window.zerohop.error"))
            return row
        time.sleep(args.warmup)
        snap = "const z = window.zerohop; return [z.latencyCount, z.framesPresented, z.freezes, performance.now()]"
        parts_js = ("const z = window.zerohop; return [z.captureToReceiveP50, z.receiveToPresentationP50, "
                    "z.presentationToDisplayP50]")
        parts: list[list[float]] = [[], [], []]  # the page's p50 of its last 5 s, read every 2 s
        wire_mark = wire.mark() if wire else 0
        count0, frames0, freezes0, t0 = driver.execute_script(snap)
        browser_root = driver.service.process.pid
        cpu_s0, cpu_b0, wall0 = cpu_seconds(serve.proc.pid), tree_cpu_seconds(browser_root), time.monotonic()
        samples: list[float] = []
        seen = count0
        end = wall0 + args.seconds
        while True:
            time.sleep(min(2.0, max(0.0, end - time.monotonic())))
            count, lat = driver.execute_script("return [window.zerohop.latencyCount, window.zerohop.latencyMs.slice(-1000)]")
            for values, v in zip(parts, driver.execute_script(parts_js)):
                if isinstance(v, (int, float)):
                    values.append(v)
            new = count - seen
            if new > 0:
                samples += lat[-new:] if new <= len(lat) else lat
            seen = count
            if time.monotonic() >= end:
                break
        wall = time.monotonic() - wall0
        cpu_s1, cpu_b1 = cpu_seconds(serve.proc.pid), tree_cpu_seconds(browser_root)
        count1, frames1, freezes1, t1 = driver.execute_script(snap)
        stats = server_stats(url)
        wire_samples = wire.samples(wire_mark) if wire else []
        driver.save_screenshot(str(logs / f"bench_{tag}.png"))
        row.update(
            samples=len(samples),
            p50=zb.percentile(samples, 0.5), p99=zb.percentile(samples, 0.99),
            fps=(frames1 - frames0) * 1000.0 / (t1 - t0),
            freezes=freezes1 - freezes0,
            serve_cpu=100.0 * (cpu_s1 - cpu_s0) / wall,
            browser_cpu=100.0 * cpu_delta(cpu_b0, cpu_b1) / wall,
            server_total_p50=(stats.get("total") or {}).get("p50_ms"),
            server_stages={k: v.get("p50_ms") for k, v in (stats.get("stages") or {}).items()},
            encoder=stats.get("encoder"),
            wire_p50=zb.percentile([w[1] for w in wire_samples], 0.5) if wire_samples else None,
            wire_p99=zb.percentile([w[1] for w in wire_samples], 0.99) if wire_samples else None,
            receive_p50=zb.percentile(parts[0], 0.5) if parts[0] else None,
            present_p50=zb.percentile(parts[1], 0.5) if parts[1] else None,
            display_p50=zb.percentile(parts[2], 0.5) if parts[2] else None,
        )
        return row
    finally:
        serve.stop(3.0)
        if driver is not None:
            try:
                driver.quit()
            except Exception:
                pass


def fmt(v, spec=".1f", unit=""):
    return "–" if v is None else f"{v:{spec}}{unit}"


SCATTER_PARTS = (("p50", "capture→display"), ("wire_p50", "capture→wire"), ("receive_p50", "capture→received"),
                 ("present_p50", "received→compositor"), ("display_p50", "compositor→expected on screen"))


def scatter_lines(rows: list[dict], sizes: list[str], repeat: int) -> list[str]:
    """Run-to-run scatter (max - min of the run medians) of every part, per sender and size: where a
    difference between runs of the same sender comes from."""
    if repeat < 2:
        return []
    out = ["", "Run-to-run scatter (max − min of the run medians), by part:"]
    for size in sizes:
        for sender in dict.fromkeys(r["sender"] for r in rows if r["source"] == size and "error" not in r):
            runs = [r for r in rows if r["sender"] == sender and r["source"] == size and "error" not in r]
            cells = []
            for key, name in SCATTER_PARTS:
                values = [r[key] for r in runs if r.get(key) is not None]
                if len(values) >= 2:
                    cells.append(f"{name} {max(values) - min(values):.1f} ms ({min(values):.1f}–{max(values):.1f})")
            out.append(f"- {sender} {size}, {len(runs)} runs: " + "; ".join(cells))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_bin = ROOT / "build" / "apps" / "zerohop" / "zerohop"
    ap.add_argument("--zerohop", default=str(default_bin), help=f"zerohop binary (default {default_bin})")
    ap.add_argument("--sizes", nargs="+", default=["1280x720@30", "1920x1080@30"])
    ap.add_argument("--seconds", type=float, default=30.0, help="measured seconds per run")
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds of playback before measuring")
    ap.add_argument("--bitrate", type=int, default=2500, help="kbit/s, both senders")
    ap.add_argument("--preset", default="superfast",
                    help="x264 preset, both senders (serve's auto picks superfast up to 1080p30's macroblock rate, 720p60 included)")
    ap.add_argument("--keyint", type=int, default=120, help="frames between keyframes, both senders")
    ap.add_argument("--no-reference", action="store_true", help="skip the plain GStreamer sender")
    ap.add_argument("--reference", choices=["native", "python"], default="native",
                    help="native: build/bench/e2e/zerohop-gst-baseline (our test frames -> x264enc -> webrtcbin); "
                         "python: tests/browser/gst_whep_reference.py (its own pattern, its own webrtcbin signalling)")
    ap.add_argument("--no-zerohop", action="store_true", help="only the GStreamer reference")
    ap.add_argument("--netns", action="store_true", help="run in a private network namespace (needs root)")
    ap.add_argument("--logs", default="/tmp/zerohop-bench", help="server logs and screenshots")
    ap.add_argument("--out", help="also write the markdown to this file")
    ap.add_argument("--repeat", type=int, default=1, help="interleaved runs per sender and size (default 1)")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=SERVE_ARGS",
                    help="also run zerohop with these extra serve arguments, as sender 'zerohop LABEL', interleaved "
                         "with the others (repeatable), e.g. --variant pd0-100='--playout-delay 0,100'")
    ap.add_argument("--rtsp", action="store_true",
                    help="relay an IP camera (GStreamer's RTSP server fed by a first serve's share): serve's "
                         "passthrough against GStreamer's rtspsrc ! rtph264depay ! h264parse ! rtph264pay ! webrtcbin")
    ap.add_argument("--wire", action="store_true",
                    help="also measure capture -> wire from the packets on loopback (abs-capture-time against the "
                         "kernel's timestamp of each frame's last packet; tests/browser/rtp_wire_probe.py); needs "
                         "--netns and root")
    args = ap.parse_args()

    chromium, chromedriver = zb.find_browser()
    if args.wire and not args.netns:
        print("error: --wire reads every packet on loopback: give --netns too, so it sees only this benchmark's",
              file=sys.stderr)
        return 2
    if args.netns:
        zb.enter_private_network()
    wire = None
    if args.wire:
        from rtp_wire_probe import WireProbe
        try:
            wire = WireProbe("lo")
        except PermissionError:
            print("error: --wire needs CAP_NET_RAW (run as root)", file=sys.stderr)
            return 2
    logs = Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    senders = []
    if not args.no_zerohop:
        if not Path(args.zerohop).exists():
            print(f"error: {args.zerohop} not found: build it (cmake --build build) or pass --zerohop", file=sys.stderr)
            return 2
        senders.append(("zerohop", args.zerohop, []))
        for variant in args.variant:
            label, _, extra = variant.partition("=")
            if not label or not extra:
                print(f"error: --variant {variant!r}: give LABEL=SERVE_ARGS, e.g. pd0-100='--playout-delay 0,100'",
                      file=sys.stderr)
                return 2
            senders.append((f"zerohop {label}", args.zerohop, extra.split()))
    if not args.no_reference:
        # Default: the same test frames (picture, noise, timecode, pacing) through GStreamer's x264enc
        # into the same webrtcbin sender, so only the convert+encode path differs.
        if args.reference == "native" and not args.rtsp:
            if not REFERENCE_NATIVE.exists():
                print(f"error: {REFERENCE_NATIVE} not found: build it (cmake --build build)", file=sys.stderr)
                return 2
            senders.append(("gstreamer", str(REFERENCE_NATIVE), []))
        else:
            senders.append(("gstreamer-py", str(REFERENCE_PY), []))

    rows = []
    for size in args.sizes:
        camera = zb.ShareFedRtspCamera(args.zerohop, f"test:{size}", bitrate=args.bitrate) if args.rtsp else None
        try:
            rows += measure_size(size, args, senders, chromium, chromedriver, logs, wire, camera)
        finally:
            if camera:
                camera.stop()
    return report(rows, args, senders)


def measure_size(size: str, args, senders, chromium: str, chromedriver: str, logs: Path, wire, camera) -> list[dict]:
    rows = []
    for rnd in range(args.repeat):
        # Alternate the order each round so neither sender always runs first (warm caches, drift).
        for name, binary, extra in (senders if rnd % 2 == 0 else list(reversed(senders))):
            print(f"... {name} {size} (run {rnd + 1}/{args.repeat}): {args.seconds:.0f} s", file=sys.stderr, flush=True)
            row = measure(name, binary, size, args, chromium, chromedriver, logs, wire, extra,
                          camera.url if camera else None)
            row["round"] = rnd
            if "error" in row:
                print(f"    {row['error']}", file=sys.stderr)
            rows.append(row)
    return rows


def report(rows: list[dict], args, senders) -> int:
    lines = [
        f"capture→display latency in headless Chromium ({datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, "
        f"{platform.node()}, {os.cpu_count()} CPUs), {args.seconds:.0f} s per run after {args.warmup:.0f} s warm-up, " +
        (f"through an IP camera (x264 ultrafast, {args.bitrate} kbit/s, an IDR a second) that both relay, "
         if args.rtsp else f"x264 {args.preset}, {args.bitrate} kbit/s, keyframe every {args.keyint} frames, ") +
        "one viewer on loopback:",
        "",
        "| sender | source | viewer fps | samples | latency p50 | latency p99 | server capture→send p50 "
        "| capture→wire p50 / p99 | capture→received | →compositor | →expected on screen "
        "| serve CPU (% of one core) | Chromium CPU |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['sender']} | {r['source']} | failed: {r['error'][:80]} |" + " |" * 10)
            continue
        wire_cell = "–" if r["wire_p50"] is None else f"{r['wire_p50']:.1f} / {r['wire_p99']:.1f} ms"
        lines.append(
            f"| {r['sender']} | {r['source']} | {fmt(r['fps'])} | {r['samples']} | {fmt(r['p50'], unit=' ms')} "
            f"| {fmt(r['p99'], unit=' ms')} | {fmt(r['server_total_p50'], unit=' ms')} | {wire_cell} "
            f"| {fmt(r['receive_p50'], unit=' ms')} | {fmt(r['present_p50'], unit=' ms')} "
            f"| {fmt(r['display_p50'], unit=' ms')} | {fmt(r['serve_cpu'], '.0f', ' %')} "
            f"| {fmt(r['browser_cpu'], '.0f', ' %')} |")
    ratios = []
    reference = next((name for name, _, _ in senders if name.startswith("gstreamer")), None)
    for size in args.sizes:
        for ours in [name for name, _, _ in senders if name.startswith("zerohop")] if reference else []:
            per_round = []
            for rnd in range(args.repeat):
                z = next((r for r in rows if r["sender"] == ours and r["source"] == size and r["round"] == rnd
                          and r.get("p50")), None)
                g = next((r for r in rows if r["sender"] == reference and r["source"] == size and r["round"] == rnd
                          and r.get("p50")), None)
                if z and g:
                    per_round.append((z["p50"], g["p50"], z["p50"] / g["p50"], z["p99"] / g["p99"]))
            if not per_round:
                continue
            if len(per_round) == 1:
                _, _, m, q = per_round[0]
                ratios.append(f"{size}: {ours}/{reference} median {m:.2f}×, p99 {q:.2f}×")
                continue
            zs, gs, ms = [r[0] for r in per_round], [r[1] for r in per_round], [r[2] for r in per_round]
            wins = sum(1 for r in ms if r <= 1.0)
            ratios.append(
                f"{size}: over {len(per_round)} interleaved rounds, median of run medians {ours} "
                f"{zb.percentile(zs, 0.5):.1f} ms vs {reference} {zb.percentile(gs, 0.5):.1f} ms "
                f"({zb.percentile(zs, 0.5) / zb.percentile(gs, 0.5):.2f}×); per-round ratios "
                f"{', '.join(f'{r:.2f}' for r in ms)} (median {zb.percentile(ms, 0.5):.2f}×; ≤ 1.0× in {wins} of {len(ms)})")
    if ratios:
        lines += ["", "Ratio: " + ";\n".join(ratios) + "."]
    lines += scatter_lines(rows, args.sizes, args.repeat)
    for r in rows:
        if r.get("server_stages"):
            lines.append(f"\n{r['sender']} {r['source']} server stages p50: " + ", ".join(
                f"{k} {fmt(v, unit=' ms')}" for k, v in r["server_stages"].items()) + f" ({r.get('encoder')})")
    if any(r["sender"] == "gstreamer" for r in rows):
        lines += ["", "The GStreamer reference (bench/e2e/gst_baseline.cpp) takes the same test-camera frames "
                      "(picture, noise, timecode, pacing) through appsrc → videoconvert → x264enc (tune=zerolatency, same "
                      "preset, threads=1, CBR, one-frame VBV, no B-frames, constrained baseline) → appsink, and sends the "
                      "access units through the same webrtcbin sender as serve, without the playout-delay extension (GStreamer's "
                      "webrtcbin sends none): the convert+encode path and that extension differ."]
    if args.rtsp:
        lines += ["", "Both relay the same IP camera (a first serve's test camera, shared into GStreamer's RTSP server "
                      "through x264): serve passes its H.264 through; the reference is rtspsrc latency=0 ! rtph264depay ! "
                      "h264parse ! rtph264pay ! webrtcbin (tests/browser/gst_whep_reference.py --source rtsp://...). "
                      "Capture is the first serve's: the camera's encode is in both figures."]
    elif any(r["sender"] == "gstreamer-py" for r in rows):
        lines += ["", "The Python GStreamer reference (tests/browser/gst_whep_reference.py) is a plain appsrc → x264enc "
                      "→ rtph264pay → webrtcbin sender with its own signalling, drawing the same timecode into its own "
                      "panning texture (no sensor noise); its CPU includes the Python frame generation."]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
