#!/usr/bin/python3
"""Sound over plain RTP (issue 35): `zerohop serve --source test:320x240@30 --audio test --janus
127.0.0.1:VPORT?audio=APORT` (the direct form, no Janus: what a Janus mountpoint or any RTP receiver takes)
and a GStreamer receiver on those ports that decodes both: the H.264 (rtph264depay, openh264dec) and the Opus
(rtpopusdepay, opusdec). Passes when, within 20 s, it has decoded 30 pictures and a second of sound whose RMS
is the tone's (a 440 Hz sine at a quarter of full scale: ~5,800; silence or noise fails). Without audio=
serve must send no sound there: the same receiver hears nothing while 30 pictures come.

usage: rtp_sound_test.py ZEROHOP_BINARY     exit: 0 pass, 1 fail, 77 skipped (no GStreamer Python bindings)
"""
import math
import socket
import subprocess
import sys
import threading
import time

try:
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
except (ImportError, ValueError) as e:
    print(f"SKIP: GStreamer's Python bindings are missing ({e}): apt-get install python3-gi gir1.2-gstreamer-1.0")
    sys.exit(77)


def free_udp_ports(n: int) -> list[int]:
    """n even ports p whose p+1 is free too (RTP and RTCP)."""
    ports: list[int] = []
    while len(ports) < n:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as a, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as b:
            a.bind(("127.0.0.1", 0))
            p = a.getsockname()[1]
            try:
                b.bind(("127.0.0.1", p + 1))
            except OSError:
                continue
            if p not in ports and p + 1 not in ports:
                ports.append(p)
    return ports


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    """Counts decoded pictures and sound samples (and the sound's sum of squares) from RTP on two ports."""

    def __init__(self, video_port: int, audio_port: int):
        self.pictures = 0
        self.samples = 0
        self.squares = 0.0
        self.lock = threading.Lock()
        # Two pipelines: a branch that receives nothing (no sound sent) must not hold the other back.
        self.pipelines = [
            Gst.parse_launch(
                f'udpsrc port={video_port} caps="application/x-rtp,media=video,encoding-name=H264,'
                f'clock-rate=90000,payload=96" ! rtpjitterbuffer latency=50 ! rtph264depay ! h264parse ! '
                f'openh264dec ! appsink name=sink emit-signals=true sync=false'),
            Gst.parse_launch(
                f'udpsrc port={audio_port} caps="application/x-rtp,media=audio,encoding-name=OPUS,'
                f'clock-rate=48000,payload=111" ! rtpjitterbuffer latency=50 ! rtpopusdepay ! opusdec ! '
                f'audioconvert ! audio/x-raw,format=S16LE,channels=1 ! appsink name=sink emit-signals=true sync=false')]
        self.pipelines[0].get_by_name("sink").connect("new-sample", self._on_picture)
        self.pipelines[1].get_by_name("sink").connect("new-sample", self._on_sound)
        for p in self.pipelines:
            p.set_state(Gst.State.PLAYING)

    def _on_picture(self, sink):
        sink.emit("pull-sample")
        with self.lock:
            self.pictures += 1
        return Gst.FlowReturn.OK

    def _on_sound(self, sink):
        buf = sink.emit("pull-sample").get_buffer()
        ok, info = buf.map(Gst.MapFlags.READ)
        if ok:
            data = memoryview(info.data).cast("h")
            with self.lock:
                self.samples += len(data)
                self.squares += sum(x * x for x in data)
            buf.unmap(info)
        return Gst.FlowReturn.OK

    def counts(self) -> tuple[int, int, float]:
        with self.lock:
            rms = math.sqrt(self.squares / self.samples) if self.samples else 0.0
            return self.pictures, self.samples, rms

    def stop(self) -> None:
        for p in self.pipelines:
            p.set_state(Gst.State.NULL)


def serve(zerohop: str, target: str) -> subprocess.Popen:
    # A keyframe a second: the receiver starts within one.
    return subprocess.Popen([zerohop, "serve", "--source", "test:320x240@30", "--keyint", "30", "--audio", "test",
                             "--janus", target,
                             "--listen", f"127.0.0.1:{free_tcp_port()}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def run(zerohop: str, with_audio: bool, seconds: float) -> tuple[tuple[int, int, float], str]:
    video_port, audio_port = free_udp_ports(2)
    rx = Receiver(video_port, audio_port)
    target = f"127.0.0.1:{video_port}" + (f"?audio={audio_port}" if with_audio else "")
    proc = serve(zerohop, target)
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and proc.poll() is None:
            pictures, samples, _ = rx.counts()
            if pictures >= 30 and (samples >= 48000 or not with_audio):
                break
            time.sleep(0.1)
        return rx.counts(), ""
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        rx.stop()
        if proc.returncode not in (0, -15):
            print(f"serve exited {proc.returncode}:\n{err[-2000:]}")


def main() -> int:
    Gst.init(None)
    zerohop = sys.argv[1]
    (pictures, samples, rms), _ = run(zerohop, True, 20)
    print(f"with audio=: {pictures} pictures, {samples} samples of sound at RMS {rms:.0f}")
    if pictures < 30 or samples < 48000:
        print("FAIL: the receiver did not get 30 pictures and a second of sound within 20 s")
        return 1
    if not 4000 < rms < 8000:
        print(f"FAIL: the sound's RMS is {rms:.0f}, not the tone's (~5,800)")
        return 1
    (pictures, samples, _), _ = run(zerohop, False, 15)
    print(f"without audio=: {pictures} pictures, {samples} samples of sound")
    if pictures < 30 or samples != 0:
        print("FAIL: without audio= the receiver should get the pictures alone")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
