#!/usr/bin/python3
"""GET /metrics of a running `zerohop serve`, parsed by the real Prometheus text parser
(prometheus_client): every zerohop_ family is well-formed, counters count, histograms are
cumulative and consistent; with --renditions on, each rung of the ladder has its series per codec (H264, and VP8: the ladder is made in VP8 too); with
--audio test, the sound's families, its Opus packets counting.

usage: metrics_test.py ZEROHOP_BINARY     exit: 0 pass, 1 fail, 77 skipped (no prometheus_client)
"""
import socket
import subprocess
import sys
import time
import urllib.request

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("SKIP: python3-prometheus-client is not installed (apt-get install python3-prometheus-client)")
    sys.exit(77)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def enough_frames(text: str) -> bool:
    """Whether /metrics counts >= 30 frames, >= 30 samples in every stage histogram and >= 50 Opus packets."""
    try:
        families = {f.name: f for f in text_string_to_metric_families(text)}
        frames = families["zerohop_frames"].samples[0].value
        counts = [s.value for s in families["zerohop_stage_latency_seconds"].samples if s.name.endswith("_count")]
        packets = families["zerohop_audio_packets"].samples[0].value
    except (KeyError, IndexError, ValueError):
        return False
    return frames >= 30 and bool(counts) and min(counts) >= 30 and packets >= 50


def main() -> int:
    port = free_port()
    serve = subprocess.Popen([sys.argv[1], "serve", "--source", "test:640x360@30", "--gpu", "off",
                              "--renditions", "on", "--audio", "test", "--listen", f"127.0.0.1:{port}"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = []
        for line in serve.stdout:  # log lines (stderr) come first; the URL line is on stdout
            seen.append(line)
            if line.startswith("open http://"):
                break
        else:
            print("FAIL: serve printed no 'open http://' line:\n" + "".join(seen))
            return 1
        # Until 30 frames went through every stage (1 s at 30 fps), within a deadline: not a fixed sleep.
        deadline = time.monotonic() + 20.0
        while True:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                ctype = r.headers["Content-Type"]
                text = r.read().decode()
            if enough_frames(text) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if "text/plain" not in ctype or "0.0.4" not in ctype:
            print(f"FAIL: Content-Type {ctype}")
            return 1
        families = {f.name: f for f in text_string_to_metric_families(text)}
        for name, kind in [("zerohop_info", "gauge"), ("zerohop_frames", "counter"), ("zerohop_viewers", "gauge"),
                           ("zerohop_dropped_frames", "counter"), ("zerohop_fps", "gauge"),
                           ("zerohop_passthrough_held_back", "counter"),
                           ("zerohop_stage_latency_seconds", "histogram"),
                           ("zerohop_capture_to_send_seconds", "histogram")]:
            if name not in families or families[name].type != kind:
                print(f"FAIL: family {name} ({kind}) missing or mistyped; got {sorted(families)}")
                return 1
        info = families["zerohop_info"].samples[0].labels
        if info.get("path") != "cpu":  # --gpu off
            print(f"FAIL: zerohop_info path label {info.get('path')!r}, want 'cpu'")
            return 1
        frames = families["zerohop_frames"].samples[0].value
        if frames < 30:
            print(f"FAIL: zerohop_frames_total {frames} after 20 s at 30 fps")
            return 1
        stages = {}
        for s in families["zerohop_stage_latency_seconds"].samples:
            stages.setdefault(s.labels["stage"], []).append(s)
        if not {"ingest", "convert", "encode", "send"} <= set(stages):
            print(f"FAIL: stages {sorted(stages)}")
            return 1
        for stage, samples in stages.items():
            buckets = [(float(s.labels["le"]), s.value) for s in samples if s.name.endswith("_bucket")]
            count = next(s.value for s in samples if s.name.endswith("_count"))
            values = [v for _, v in sorted(buckets)]
            if values != sorted(values) or values[-1] != count or count < 30:
                print(f"FAIL: histogram for {stage} not cumulative/consistent: {buckets} count {count}")
                return 1
        # The ladder (--renditions on): a series per rung, rung 0 (the main encode) counting its frames.
        for name, kind in [("zerohop_rendition_viewers", "gauge"), ("zerohop_rendition_bitrate_bits_per_second", "gauge"),
                           ("zerohop_rendition_frames", "counter"), ("zerohop_rendition_keyframes", "counter"),
                           ("zerohop_rendition_keyframes_forced", "counter"), ("zerohop_rendition_switches", "counter")]:
            if name not in families or families[name].type != kind:
                print(f"FAIL: family {name} ({kind}) missing or mistyped; got {sorted(families)}")
                return 1
        rung_frames = [s for s in families["zerohop_rendition_frames"].samples if s.name.endswith("_total")]
        rungs = {s.labels["rung"]: s for s in rung_frames if s.labels.get("codec") == "H264"}
        if sorted(rungs) != ["0", "1", "2"] or rungs["0"].labels.get("size") != "640x360" or rungs["0"].value < 30:
            print(f"FAIL: zerohop_rendition_frames_total per H.264 rung: {[(s.labels, s.value) for s in rung_frames]}")
            return 1
        # The same ladder's VP8 encodes (made where the pipeline makes VP8), labelled codec="VP8".
        vp8_rungs = sorted(s.labels["rung"] for s in rung_frames if s.labels.get("codec") == "VP8")
        if vp8_rungs != ["0", "1", "2"]:
            print(f"FAIL: zerohop_rendition_frames_total per VP8 rung: {[(s.labels, s.value) for s in rung_frames]}")
            return 1
        # The sound (--audio test): its families, the tone's blocks and packets counted, nothing lost.
        for name, kind in [("zerohop_audio_running", "gauge"), ("zerohop_audio_blocks", "counter"),
                           ("zerohop_audio_overruns", "counter"), ("zerohop_audio_capture_errors", "counter"),
                           ("zerohop_audio_reopens", "counter"), ("zerohop_audio_queue_drops", "counter"),
                           ("zerohop_audio_failures", "counter"), ("zerohop_audio_packets", "counter"),
                           ("zerohop_audio_encode_seconds", "gauge"), ("zerohop_audio_sent_packets", "counter"),
                           ("zerohop_audio_send_dropped_packets", "counter")]:
            if name not in families or families[name].type != kind:
                print(f"FAIL: family {name} ({kind}) missing or mistyped; got {sorted(families)}")
                return 1
        sound = {name: families[name].samples[0].value for name in
                 ("zerohop_audio_running", "zerohop_audio_blocks", "zerohop_audio_packets", "zerohop_audio_failures")}
        if (sound["zerohop_audio_running"] != 1 or sound["zerohop_audio_packets"] < 50
                or sound["zerohop_audio_blocks"] < sound["zerohop_audio_packets"] or sound["zerohop_audio_failures"] != 0):
            print(f"FAIL: the sound's series: {sound}")
            return 1
        print(f"PASS: {len(families)} families, {frames:.0f} frames, stages {sorted(stages)}, rungs {sorted(rungs)}, "
              f"{sound['zerohop_audio_packets']:.0f} Opus packets")
        return 0
    finally:
        serve.terminate()
        serve.wait(5)


if __name__ == "__main__":
    sys.exit(main())
