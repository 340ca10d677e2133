#!/usr/bin/python3
"""The sound's capture -> playout in headless Chromium, alone and beside the picture (docs/audio.md,
"Capture -> playout"; docs/benchmarks.md): does the video track, and the receiver's lip sync with it,
hold the sound back? `zerohop serve --source TEST --audio test` and bench/audio/playout_page.html (served
from a copy of web/ with `--web-root`): one WHEP session whose offer has the audio only, or audio and
video; the page times each click of the test tone where its audio graph plays it (web/avsync.js's
AudioWorklet, mapped by AudioContext.getOutputTimestamp, so the graph's output latency is inside) against
the instant the server's capture clock gave it (the tone clicks on each full second of that clock; /stats
says its offset from the wall clock). The two kinds alternate, a fresh serve and Chromium each round,
--clicks clicks a round after 6 s of playing. Prints each round (capture -> playout p50, Chromium's audio
jitter buffer, its target, the audio context's base and output latency) and the medians of the rounds.

usage: scripts/bench-audio-playout.py [--zerohop build/apps/zerohop/zerohop] [--source test:1280x720@30]
                                      [--rounds 3] [--clicks 12] [--pulse] [--out FILE]
--pulse gives Chromium a PulseAudio of its own whose only sink is a null sink (a sound server paced by
the clock) instead of no sound device. Runs in a private network namespace (loopback only), as root;
needs chromium, chromium-driver, python3-selenium (scripts/install-deps.sh), and pulseaudio for --pulse.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import zerohop_browser as zb  # noqa: E402

WARM_UP_S = 6  # Chromium's jitter buffer settles over the first seconds


def one_round(args, browser: tuple[str, str], web_root: Path, with_video: bool, out: Path) -> dict:
    port = zb.free_port()
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--audio", "test", "--gpu", "off", "--web-root",
                                    str(web_root), "--listen", f"127.0.0.1:{port}"], out / "bench_audio_playout.serve.log")
    pulse = zb.PulseNullSink(out / "bench_audio_playout.pulse.log") if args.pulse else None
    driver = None
    try:
        if pulse and not pulse.available:
            raise SystemExit(pulse.reason)
        if not serve.wait_url(20):
            raise SystemExit("serve printed no URL in 20 s:\n" + serve.tail())
        os.environ.pop("PULSE_SERVER", None)
        os.environ.update(pulse.env if pulse else {})
        driver = zb.start_chromium(*browser, None, ("--autoplay-policy=no-user-gesture-required",))
        driver.get(f"http://127.0.0.1:{port}/playout_page.html" + ("?video=1" if with_video else ""))
        count = "const b = window.bench; if (b.error) throw new Error(b.error); return b.playout.length;"
        zb.wait_until("the first click timed", lambda: driver.execute_script(count) > 0, 30)
        time.sleep(WARM_UP_S)
        n0 = driver.execute_script(count)
        j0 = driver.execute_script("return window.bench.jitter;")
        zb.wait_until(f"{args.clicks} more clicks", lambda: driver.execute_script(count) >= n0 + args.clicks,
                      args.clicks + 15)
        b = driver.execute_script("return window.bench;")
        j1 = b["jitter"]
        emitted = max(1, j1[1] - j0[1])
        return {"video": with_video, "clicks": len(b["playout"][n0:]),
                "capture_to_playout_p50_ms": statistics.median(b["playout"][n0:]),
                "jitter_buffer_ms": 1000 * (j1[0] - j0[0]) / emitted,
                "jitter_buffer_target_ms": 1000 * j1[2] / max(1, j1[1]),
                "base_latency_ms": 1000 * (b["latency"] or [0, 0])[0],
                "output_latency_ms": 1000 * (b["latency"] or [0, 0])[1]}
    finally:
        zb.quit_browser(driver)
        serve.stop(5)
        if pulse:
            pulse.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zerohop", default=str(ROOT / "build/apps/zerohop/zerohop"))
    ap.add_argument("--source", default="test:1280x720@30")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clicks", type=int, default=12, help="clicks timed a round (one a second)")
    ap.add_argument("--pulse", action="store_true", help="Chromium plays into a PulseAudio null sink")
    ap.add_argument("--out", help="also write the summary as JSON here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: the benchmark makes a private network namespace (loopback only)")
    browser = zb.find_browser()
    zb.enter_private_network()
    out = zb.artifacts_dir(Path(tempfile.gettempdir()) / "zerohop-bench-audio-playout")
    with tempfile.TemporaryDirectory(prefix="zh-playout-web-") as tmp:
        web_root = Path(tmp) / "web"
        shutil.copytree(ROOT / "web", web_root)
        shutil.copy(ROOT / "bench/audio/playout_page.html", web_root / "playout_page.html")
        rounds: dict[str, list[dict]] = {"audio alone": [], "audio + video": []}
        for r in range(args.rounds):
            for name in rounds:
                x = one_round(args, browser, web_root, name == "audio + video", out)
                rounds[name].append(x)
                print(f"round {r + 1}, {name}: click capture -> playout p50 {x['capture_to_playout_p50_ms']:.1f} ms "
                      f"({x['clicks']} clicks), jitter buffer {x['jitter_buffer_ms']:.1f} ms (target "
                      f"{x['jitter_buffer_target_ms']:.1f}), base/output latency {x['base_latency_ms']:.0f}/"
                      f"{x['output_latency_ms']:.0f} ms", flush=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    summary = {"command": " ".join(sys.argv), "commit": commit,
               "machine": f"{platform.node()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
               "output": "PulseAudio null sink" if args.pulse else "none", "rounds": rounds}
    for name, xs in rounds.items():
        med = statistics.median(x["capture_to_playout_p50_ms"] for x in xs)
        summary[f"{name} capture_to_playout_ms_median"] = med
        print(f"{name}, median of {len(xs)} rounds: click capture -> playout {med:.0f} ms, jitter buffer "
              f"{statistics.median(x['jitter_buffer_ms'] for x in xs):.1f} ms")
    print(f"commit {commit}, {summary['machine']}, Chromium's output: {summary['output']}")
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
