#!/usr/bin/python3
"""A second test IP camera, independent of GStreamer: FFmpeg packetizes and sends, this script speaks RTSP.

It makes a short H.264 clip with FFmpeg (libx264, testsrc2, --size at --fps, an IDR every --keyint frames,
MP4; --codec h265: libx265), then runs `ffmpeg -re -stream_loop -1 -i clip.mp4 -c copy -f rtp` (FFmpeg's own RTP packetizer and
RTCP sender reports, its SDP with sprop-parameter-sets) into a local UDP port, and serves that stream over
a minimal RTSP/1.0 of its own (OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER): RTP over TCP
interleaved or over UDP to the client's ports. Any path is the stream. (Neither live555 nor an FFmpeg
that serves RTSP is in Debian 12 main: FFmpeg's `-rtsp_flags listen` only receives a RECORD.)

Prints `PORT <n>` once it listens (--port 0: the kernel's choice), then `CONNECT <address>` per RTSP
connection and `PLAY` per PLAY. Exits on SIGTERM/SIGINT, stopping FFmpeg.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def say(line):
    print(line, flush=True)


class Stream:
    """FFmpeg's RTP and RTCP packets (received on two local UDP sockets), fanned out to playing clients."""

    def __init__(self):
        self.rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rtp.bind(("127.0.0.1", 0))
        self.rtcp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # FFmpeg sends RTCP to the RTP port + 1: find an even/odd pair.
        for _ in range(100):
            port = self.rtp.getsockname()[1]
            try:
                self.rtcp.bind(("127.0.0.1", port + 1))
                break
            except OSError:
                self.rtp.close()
                self.rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                self.rtp.bind(("127.0.0.1", 0))
        # An IDR of a 1080p clip is 100-200 packets FFmpeg sends at once: the default receive buffer (~200 KB)
        # drops part of that burst while the pump thread forwards, and the camera then "loses" its IDRs.
        for sock in (self.rtp, self.rtcp):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)  # capped by net.core.rmem_max
            try:
                sock.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE (Linux): past the cap, as root
            except OSError:
                pass
        self.lock = threading.Lock()
        self.clients = []  # callables(channel, packet)
        for sock, channel in ((self.rtp, 0), (self.rtcp, 1)):
            threading.Thread(target=self._pump, args=(sock, channel), daemon=True).start()

    def port(self):
        return self.rtp.getsockname()[1]

    def _pump(self, sock, channel):
        while True:
            packet = sock.recv(65536)
            with self.lock:
                clients = list(self.clients)
            for send in clients:
                try:
                    send(channel, packet)
                except OSError:
                    self.remove(send)

    def add(self, send):
        with self.lock:
            self.clients.append(send)

    def remove(self, send):
        with self.lock:
            if send in self.clients:
                self.clients.remove(send)


STRIP_SPROP = False  # --no-sprop


def without_sprop(fmtp):
    """An a=fmtp line without its parameter sets (sprop-parameter-sets, sprop-vps/sps/pps)."""
    head, _, params = fmtp.partition(" ")
    kept = [p for p in params.split(";") if p.strip() and not p.strip().startswith("sprop-")]
    return head + " " + ";".join(kept)


def describe(sdp_path, timeout=20.0):
    """FFmpeg's SDP, turned into a DESCRIBE answer (no fixed port, one control track); with --no-sprop
    its fmtp lists no parameter sets (they come in band only, before each IDR)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(sdp_path) and "a=rtpmap" in open(sdp_path).read():
            break
        time.sleep(0.05)
    lines = []
    for line in open(sdp_path).read().splitlines():
        if line.startswith("c="):
            line = "c=IN IP4 0.0.0.0"
        elif line.startswith("m=video"):
            parts = line.split()
            parts[1] = "0"
            line = " ".join(parts)
        elif line.startswith("a=control"):
            continue
        elif line.startswith("a=fmtp") and STRIP_SPROP:
            line = without_sprop(line)
        lines.append(line)
        if line.startswith("m=video"):
            lines.append("a=control:track0")
    return "\r\n".join(lines) + "\r\n"


def serve_client(conn, address, stream, sdp_path):
    say(f"CONNECT {address[0]}")
    session = f"{os.getpid()}{address[1]}"
    senders = []
    udp = None
    buf = b""
    lock = threading.Lock()  # interleaved packets and replies share the connection

    def reply(cseq, status="200 OK", headers=(), body=""):
        head = [f"RTSP/1.0 {status}", f"CSeq: {cseq}", *headers]
        if body:
            head += ["Content-Type: application/sdp", f"Content-Length: {len(body.encode())}"]
        with lock:
            conn.sendall(("\r\n".join(head) + "\r\n\r\n" + body).encode())

    try:
        while True:
            while True:
                while buf[:1] == b"$" and len(buf) >= 4:  # interleaved RTCP from the client: skip it
                    size = int.from_bytes(buf[2:4], "big")
                    if len(buf) < 4 + size:
                        break
                    buf = buf[4 + size:]
                if buf[:1] != b"$" and b"\r\n\r\n" in buf:
                    break
                chunk = conn.recv(4096)
                if not chunk:
                    return
                buf += chunk
            head, buf = buf.split(b"\r\n\r\n", 1)
            lines = head.decode(errors="replace").split("\r\n")
            method = lines[0].split()[0]
            headers = {}
            for line in lines[1:]:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            while len(buf) < length:
                buf += conn.recv(4096)
            buf = buf[length:]
            cseq = headers.get("cseq", "0")
            if method == "OPTIONS":
                reply(cseq, headers=["Public: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER"])
            elif method == "DESCRIBE":
                base = lines[0].split()[1].rstrip("/") + "/"
                reply(cseq, headers=[f"Content-Base: {base}"], body=describe(sdp_path))
            elif method == "SETUP":
                transport = headers.get("transport", "")
                if "interleaved=" in transport:
                    def send_tcp(channel, packet):
                        with lock:
                            conn.sendall(b"$" + bytes([channel]) + len(packet).to_bytes(2, "big") + packet)
                    senders.append(send_tcp)
                    reply(cseq, headers=["Transport: RTP/AVP/TCP;unicast;interleaved=0-1",
                                         f"Session: {session};timeout=60"])
                elif "client_port=" in transport:
                    ports = transport.split("client_port=")[1].split(";")[0].split("-")
                    rtp_port = int(ports[0])
                    rtcp_port = int(ports[1]) if len(ports) > 1 else rtp_port + 1
                    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    udp.bind(("127.0.0.1", 0))
                    server_port = udp.getsockname()[1]

                    def send_udp(channel, packet):
                        udp.sendto(packet, (address[0], rtp_port if channel == 0 else rtcp_port))
                    senders.append(send_udp)
                    reply(cseq, headers=[f"Transport: RTP/AVP;unicast;client_port={rtp_port}-{rtcp_port};"
                                         f"server_port={server_port}-{server_port + 1}",
                                         f"Session: {session};timeout=60"])
                else:
                    reply(cseq, "461 Unsupported Transport")
            elif method == "PLAY":
                reply(cseq, headers=[f"Session: {session}", "Range: npt=0.000-"])
                say("PLAY")
                for send in senders:
                    stream.add(send)
            elif method == "TEARDOWN":
                reply(cseq, headers=[f"Session: {session}"])
                return
            elif method == "GET_PARAMETER":
                reply(cseq, headers=[f"Session: {session}"])
            else:
                reply(cseq, "405 Method Not Allowed")
    except OSError:
        pass
    finally:
        for send in senders:
            stream.remove(send)
        if udp:
            udp.close()
        conn.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--size", default="320x240")
    p.add_argument("--fps", type=int, default=30)
    p.add_argument("--keyint", type=int, default=30, help="frames between IDRs")
    p.add_argument("--seconds", type=float, default=2.0, help="clip length (it loops)")
    p.add_argument("--codec", choices=("h264", "h265"), default="h264",
                   help="the clip it makes: libx264 constrained baseline, or libx265 Main (no B-frames, closed GOPs)")
    p.add_argument("--clip", help="stream this H.264 or H.265 MP4 (it loops) instead of making one (--size, --fps, "
                   "--keyint and --seconds are then the clip's own); FFmpeg then only packetizes, no libx264")
    p.add_argument("--no-sprop", action="store_true",
                   help="describe the stream without its parameter sets (a camera whose SDP states no size: they come "
                   "in band before each keyframe)")
    args = p.parse_args()
    global STRIP_SPROP
    STRIP_SPROP = args.no_sprop
    ffmpeg = shutil.which("ffmpeg")
    if not ffmpeg:
        sys.exit("rtsp_clip_server: ffmpeg not found (scripts/install-deps.sh installs it)")

    work = tempfile.mkdtemp(prefix="zerohop-rtsp-clip-")
    clip, sdp = os.path.join(work, "clip.mp4"), os.path.join(work, "clip.sdp")
    if args.clip:
        clip = os.path.abspath(args.clip)
    encoder = (["-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-profile:v", "baseline",
                "-g", str(args.keyint), "-bf", "0",
                # --no-sprop: the parameter sets in band before each keyframe, as such cameras send them
                *(["-x264-params", "repeat-headers=1"] if args.no_sprop else [])] if args.codec == "h264" else
               ["-c:v", "libx265", "-preset", "ultrafast", "-tag:v", "hvc1", "-x265-params",
                f"bframes=0:keyint={args.keyint}:min-keyint={args.keyint}:scenecut=0:open-gop=0:repeat-headers=1:"
                "log-level=error"])
    made = subprocess.CompletedProcess([], 0) if args.clip else subprocess.run(
        [ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", f"testsrc2=size={args.size}:rate={args.fps}",
         "-t", str(args.seconds), *encoder, "-pix_fmt", "yuv420p", clip], capture_output=True, text=True)
    if made.returncode != 0:
        sys.exit(f"rtsp_clip_server: ffmpeg could not make the clip: {made.stderr}")

    stream = Stream()
    sender = subprocess.Popen([ffmpeg, "-hide_banner", "-loglevel", "error", "-re", "-stream_loop", "-1",
                               "-i", clip, "-c", "copy", "-f", "rtp", "-sdp_file", sdp,
                               f"rtp://127.0.0.1:{stream.port()}?rtcpport={stream.port() + 1}"])

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", args.port))
    except OSError as e:
        sender.terminate()
        sys.exit(f"rtsp_clip_server: cannot listen on 127.0.0.1:{args.port}: {e}")
    listener.listen(8)

    def stop(*_):
        sender.terminate()
        try:
            sender.wait(5)
        except subprocess.TimeoutExpired:
            sender.kill()
        shutil.rmtree(work, ignore_errors=True)
        os._exit(0)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    say(f"PORT {listener.getsockname()[1]}")
    while True:
        conn, address = listener.accept()
        threading.Thread(target=serve_client, args=(conn, address, stream, sdp), daemon=True).start()


if __name__ == "__main__":
    main()
