#!/usr/bin/python3
"""A test IP camera: GStreamer's RTSP server streaming H.264 of a moving test pattern.

Prints `PORT <n>` once it listens (port 0 = the kernel's choice), then one `CONNECT <address>` line per
RTSP client connection and `PLAY` when a client starts playing, so a test can count a source's attempts.
Authentication (--user/--password) takes Basic or Digest (--auth); a client without the right
credentials gets 401. Exits on SIGTERM/SIGINT. Small and cheap by default (320x240@30, x264 ultrafast).
"""
import argparse
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402


def say(line):
    print(line, flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--path", default="/test")
    p.add_argument("--size", default="320x240")
    p.add_argument("--fps", type=int, default=30)
    p.add_argument("--keyint", type=int, default=30, help="frames between IDRs")
    p.add_argument("--codec", choices=["h264", "h265", "pcma"], help="pcma: audio only (a camera with no video)", default="h264")
    p.add_argument("--user")
    p.add_argument("--password")
    p.add_argument("--auth", choices=["basic", "digest"], default="digest")
    args = p.parse_args()
    width, height = (int(v) for v in args.size.split("x"))

    Gst.init(None)
    if args.codec == "h264":
        enc = (f"x264enc tune=zerolatency speed-preset=ultrafast key-int-max={args.keyint} bitrate=300 "
               "! video/x-h264,profile=constrained-baseline ! rtph264pay name=pay0 pt=96")
    elif args.codec == "pcma":
        enc = None
    else:
        enc = f"x265enc tune=zerolatency speed-preset=ultrafast key-int-max={args.keyint} ! rtph265pay name=pay0 pt=96"
    launch = (f"( videotestsrc is-live=true pattern=ball ! video/x-raw,width={width},height={height},"
              f"framerate={args.fps}/1 ! {enc} )" if enc else
              "( audiotestsrc is-live=true ! audio/x-raw,rate=8000 ! alawenc ! rtppcmapay name=pay0 pt=8 )")

    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(args.port))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(launch)
    factory.set_shared(True)
    if args.user is not None:
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string("media.factory.role", "camera-user")
        if args.auth == "basic":
            auth.add_basic(GstRtspServer.RTSPAuth.make_basic(args.user, args.password), token)
            auth.set_supported_methods(GstRtsp.RTSPAuthMethod.BASIC)
        else:
            auth.add_digest(args.user, args.password, token)
            auth.set_supported_methods(GstRtsp.RTSPAuthMethod.DIGEST)
        server.set_auth(auth)
        permissions = GstRtspServer.RTSPPermissions()
        permissions.add_role_from_structure(Gst.Structure.from_string(
            "camera-user, media.factory.access=(boolean)true, media.factory.construct=(boolean)true")[0])
        factory.set_permissions(permissions)
    server.get_mount_points().add_factory(args.path, factory)

    def on_client(_server, client):
        conn = client.get_connection()
        say(f"CONNECT {conn.get_ip() if conn else '?'}")
        client.connect("play-request", lambda *_: say("PLAY"))

    server.connect("client-connected", on_client)
    if server.attach(None) == 0:
        sys.exit(f"rtsp_camera: cannot listen on 127.0.0.1:{args.port}")
    say(f"PORT {server.get_bound_port()}")

    loop = GLib.MainLoop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, loop.quit)
    loop.run()


if __name__ == "__main__":
    main()
