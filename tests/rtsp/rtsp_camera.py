#!/usr/bin/python3
"""A test IP camera: GStreamer's RTSP server streaming H.264 of a moving test pattern.

Prints `PORT <n>` once it listens (port 0 = the kernel's choice), then one `CONNECT <address>` line per
RTSP client connection and `PLAY` when a client starts playing, so a test can count a source's attempts.
Authentication (--user/--password) takes Basic or Digest (--auth); a client without the right
credentials gets 401. Exits on SIGTERM/SIGINT. Small and cheap by default (320x240@30, x264 ultrafast).
With --share NAME its picture is a zerohop share's frames instead of a test pattern (zerohopsrc, so
GST_PLUGIN_PATH must name the plugin; e.g. a `zerohop serve --share NAME` of the test camera): the stream
then carries the project's pixel timecode, for latency read end to end (tests/browser/with_rtsp_camera.sh).
With --audio pcmu|pcma|aac|opus the camera also has a microphone: a sine of --tone Hz (default 1000) in that
codec (PCMU/PCMA at 8 kHz, AAC (MPEG4-GENERIC, voaacenc) and Opus at 48 kHz, in 10 ms packets), a second stream of its SDP;
--audio gsm offers GSM (8 kHz), a codec zerohop does not take (its refusal is tested); --audio share streams the
sound share NAME.opus of --share's serve (with --audio test: its clicks at the picture's A/V markers).
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
    p.add_argument("--share", help="encode this zerohop share's frames (its size and rate) instead of a pattern")
    p.add_argument("--bitrate", type=int, default=300, help="x264 kbit/s")
    p.add_argument("--audio", choices=["pcmu", "pcma", "aac", "opus", "gsm", "share"],
                   help="also stream a sine in this codec; share: the Opus of the --share's sound (NAME.opus)")
    p.add_argument("--tone", type=int, default=1000, help="the sine's frequency, Hz")
    p.add_argument("--drop-every", type=int, default=0,
                   help="lose every Nth RTP packet of the picture before it is sent (packets lost on the way)")
    args = p.parse_args()
    width, height = (int(v) for v in args.size.split("x"))

    Gst.init(None)
    if args.codec == "h264":
        enc = (f"x264enc tune=zerolatency speed-preset=ultrafast key-int-max={args.keyint} bitrate={args.bitrate} "
               "! video/x-h264,profile=constrained-baseline ! rtph264pay name=pay0 pt=96")
    elif args.codec == "pcma":
        enc = None
    else:
        enc = f"x265enc tune=zerolatency speed-preset=ultrafast key-int-max={args.keyint} ! rtph265pay name=pay0 pt=96"
    if args.share and enc:
        # The share's newest frame, never a queue of old ones (a live camera drops, it does not fall behind).
        launch = (f"( zerohopsrc share={args.share} latency=0 ! queue max-size-buffers=1 leaky=downstream ! videoconvert "
                  f"! video/x-raw,format=I420 ! {enc} )")
    else:
        # format=I420: 8-bit 4:2:0 as cameras send (x265enc would take videotestsrc's first format, 4:4:4 12-bit).
        launch = (f"( videotestsrc is-live=true pattern=ball ! video/x-raw,format=I420,width={width},height={height},"
                  f"framerate={args.fps}/1 ! {enc} )" if enc else
                  "( audiotestsrc is-live=true ! audio/x-raw,rate=8000 ! alawenc ! rtppcmapay name=pay0 pt=8 )")

    if args.audio == "share" and not args.share:
        sys.exit("rtsp_camera: --audio share needs --share NAME (the sound share NAME.opus of a serve with --audio)")
    if args.audio == "share" and enc:
        # The sound share's Opus packets as they are, stamped with their capture instants as the picture's
        # frames are (zerohopsrc: capture time as running time), so the camera's sender reports put both
        # tracks on one clock: `serve --audio test`'s clicks beside its picture's markers, through the camera.
        launch = launch[:-1] + f"zerohopsrc share={args.share}.opus latency=0 ! rtpopuspay name=pay1 pt=98 )"
    elif args.audio and enc:
        # 20 ms packets, as cameras send (audiotestsrc's own buffers are 1024 samples: 128 ms at 8 kHz); Opus in
        # 10 ms ones: with serve --audio-frame-ms 20 a viewer's packets show whether the camera's were passed on
        # as they came.
        spb = {"pcmu": 160, "pcma": 160, "gsm": 160, "opus": 480}.get(args.audio, 960)
        tone = (f"audiotestsrc is-live=true wave=sine freq={args.tone} volume=0.5 samplesperbuffer={spb} "
                "! audioconvert ! audioresample")
        launch = launch[:-1] + {
            "pcmu": f"{tone} ! audio/x-raw,rate=8000,channels=1 ! mulawenc ! rtppcmupay name=pay1 pt=0 )",
            "pcma": f"{tone} ! audio/x-raw,rate=8000,channels=1 ! alawenc ! rtppcmapay name=pay1 pt=8 )",
            "aac": f"{tone} ! audio/x-raw,rate=48000,channels=1 ! voaacenc ! rtpmp4gpay name=pay1 pt=97 )",
            "opus": f"{tone} ! audio/x-raw,rate=48000,channels=1 ! opusenc frame-size=10 ! rtpopuspay name=pay1 pt=98 )",
            "gsm": f"{tone} ! audio/x-raw,rate=8000,channels=1 ! gsmenc ! rtpgsmpay name=pay1 pt=3 )",
        }[args.audio]

    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(args.port))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(launch)
    # With sound, each client gets a pipeline of its own: clients may set up different subsets of the streams
    # (zerohop's sound on a connection of its own takes the audio only; beside the picture, both), and a
    # shared media answers a second client's SETUP 503 while the first plays a subset.
    factory.set_shared(not args.audio)
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
    if args.drop_every > 0:
        def on_configure(_factory, media):
            pay = media.get_element().get_by_name("pay0")
            count = [0]

            def lose(_pad, _info):
                count[0] += 1
                return Gst.PadProbeReturn.DROP if count[0] % args.drop_every == 0 else Gst.PadProbeReturn.OK
            pay.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, lose)
        factory.connect("media-configure", on_configure)
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
