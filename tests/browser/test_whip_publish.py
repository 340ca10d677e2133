#!/usr/bin/python3
"""`zerohop serve --whip URL --whip-token T` publishes to a WHIP endpoint that is not our sender code
(whip_receiver.py: GStreamer's webrtcbin answering, openh264 decoding), and survives the endpoint
going away:
  1. the endpoint gets one POST with the bearer token, answers 201 + Location, and decodes >= 25 fps;
     serve runs with --audio test, so the offer has Opus beside the H.264 and the endpoint decodes the
     tone (half a second of samples at an RMS a quarter-scale sine has, not silence);
  2. a PLI from the endpoint brings a keyframe (serve runs with --keyint 0: keyframes only on request);
  3. the endpoint is killed (SIGKILL, no DELETE, no BYE) and started again on the same port: serve notices,
     reconnects with back-off, and the new endpoint decodes >= 25 fps again;
  4. a second serve with the wrong token gets 401 and retries with back-off, saying why;
  5. serve stopped with SIGINT sends DELETE for its resource and exits 0;
  6. two cameras in a --config, each with its own `whip = URL` (and token) in its [[camera]] table: each
     endpoint gets one authorized POST and decodes >= 25 fps of its own camera (the second camera's too:
     every camera has every output, configured once per camera); the second offers its ladder as
     simulcast (whip_simulcast = "on"), which this endpoint, not an SFU, answers without: serve says so
     and sends it the full-size layer alone.

usage: test_whip_publish.py [--netns] [--source test:640x360@30] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (GStreamer's webrtcbin/openh264dec missing)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

HERE = Path(__file__).resolve().parent
TOKEN = "whip-secret-7"


class Endpoint:
    def __init__(self, port: int, log_path: Path):
        self.port = port
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, str(HERE / "whip_receiver.py"), "--port", str(port),
                                      "--token", TOKEN], stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        if self.proc.poll() == 77 or "missing" in line:
            zb.skip(line.strip())
        if "listening" not in line:
            raise AssertionError(f"the WHIP endpoint did not start: {line!r}")

    def status(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/status", timeout=2) as r:
            return json.load(r)

    def pli(self) -> None:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/pli", data=b"", method="POST")
        urllib.request.urlopen(req, timeout=2).read()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        zb.terminate(self.proc)
        self.log.close()


def decode_rate(ep: Endpoint, seconds: float) -> float:
    f0 = ep.status()["frames"]
    t0 = time.monotonic()
    time.sleep(seconds)
    return (ep.status()["frames"] - f0) / (time.monotonic() - t0)


def each_camera_publishes(args, out: Path) -> None:
    """Step 6: each [[camera]] table's own whip = URL; the second camera's endpoint decodes its pictures too."""
    eps = []
    for name in ("a", "b"):
        log = out / f"whip_publish.camera_{name}.endpoint.log"
        log.write_bytes(b"")
        eps.append(Endpoint(zb.free_port(), log))
    config = out / "whip_publish.cameras.toml"
    # Camera b offers its ladder as simulcast layers; this endpoint (not an SFU) answers without simulcast,
    # so it gets the full-size layer alone and decodes it as camera a's endpoint does.
    extra = {"a": "", "b": 'renditions = "on"\nwhip_simulcast = "on"\n'}
    config.write_text("".join(
        f'[[camera]]\nname = "{name}"\nsource = "test:320x240@30"\n{extra[name]}'
        f'whip = "http://127.0.0.1:{ep.port}/whip"\nwhip_token = "{TOKEN}"\n\n'
        for name, ep in zip(("a", "b"), eps)))
    two = zb.Serve([args.zerohop, "--config", str(config), "serve"], ["--listen", f"127.0.0.1:{zb.free_port()}"],
                   out / "whip_publish.cameras.serve.log")
    try:
        if not two.wait_url(20):
            raise AssertionError("serve with two cameras printed no 'open http://' line within 20 s")
        for name, ep in zip(("a", "b"), eps):
            zb.wait_until(f"camera {name}'s endpoint decodes frames", lambda ep=ep: ep.status()["frames"] > 30, 30)
        for name, ep in zip(("a", "b"), eps):
            st = ep.status()
            if st["posts"] != 1 or st["unauthorized"] != 0:
                raise AssertionError(f"camera {name}: want one authorized POST, its endpoint saw {st}")
            fps = decode_rate(ep, 3)
            print(f"camera {name}: its own WHIP endpoint decodes {fps:.1f} fps")
            if fps < 25:
                raise AssertionError(f"camera {name}'s endpoint decodes only {fps:.1f} fps")
        if TOKEN in two.output():
            raise AssertionError("serve printed a camera's whip_token")
        if "answered without simulcast" not in two.output():
            raise AssertionError("camera b offered simulcast to an endpoint that takes none: serve should say it "
                                 "sends the full-size layer alone")
        rc, _ = two.stop(5)
        if rc != 0:
            raise AssertionError(f"serve with two cameras exited {rc} on SIGINT")
        for name, ep in zip(("a", "b"), eps):
            if ep.status()["deletes"] != 1:
                raise AssertionError(f"camera {name}'s WHIP resource was not deleted: {ep.status()}")
    except AssertionError:
        print(two.output()[-3000:], file=sys.stderr)
        raise
    finally:
        two.stop(2)
        for ep in eps:
            ep.stop()


def main() -> int:
    args = zb.parse_serve_test_args(zb.serve_test_args(__doc__))
    if args.netns:
        zb.enter_private_network()
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    whip_port, port = zb.free_port(), zb.free_port()
    ep_log = out / "whip_publish.endpoint.log"
    ep_log.write_bytes(b"")
    ep = Endpoint(whip_port, ep_log)
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{port}", "--keyint", "0",
                                    "--whip", f"http://127.0.0.1:{whip_port}/whip", "--whip-token", TOKEN,
                                    "--audio", "test", "--status-interval", "5"],
                     out / "whip_publish.serve.log")
    try:
        if not serve.wait_url(20):
            raise AssertionError("zerohop serve printed no 'open http://' line within 20 s")
        took = zb.wait_until("the endpoint decodes frames", lambda: ep.status()["frames"] > 30, 30)
        st = ep.status()
        print(f"first session: decoding after {took:.1f} s; endpoint saw {st}")
        if st["posts"] != 1 or st["unauthorized"] != 0:
            raise AssertionError(f"want one authorized POST, endpoint saw {st}")
        fps = decode_rate(ep, 4)
        print(f"endpoint decodes {fps:.1f} fps")
        if fps < 25:
            raise AssertionError(f"the endpoint decodes only {fps:.1f} fps")
        zb.wait_until("the endpoint decodes the sound", lambda: ep.status()["audio_samples"] >= 24000, 10)
        st = ep.status()
        print(f"endpoint decodes the sound: {st['audio_samples']} samples, RMS {st['audio_rms']}")
        if st["audio_rms"] < 2000:
            raise AssertionError(f"the sound the endpoint decodes is not the tone (RMS {st['audio_rms']})")

        # keyint 0: the only keyframes are the one at connect and those the receiver asks for.
        k0 = ep.status()["keyframes"]
        time.sleep(2)
        if ep.status()["keyframes"] != k0:
            raise AssertionError("keyframes arrive unasked with --keyint 0")
        ep.pli()
        took = zb.wait_until("a keyframe after the endpoint's PLI", lambda: ep.status()["keyframes"] > k0, 3)
        print(f"PLI -> keyframe in {took * 1000:.0f} ms")

        ep.kill()  # gone without DELETE or BYE
        time.sleep(1)
        ep = Endpoint(whip_port, ep_log)
        took = zb.wait_until("serve reconnects to the restarted endpoint", lambda: ep.status()["frames"] > 30, 75)
        print(f"restarted endpoint decodes again {took:.1f} s after it came back; endpoint saw {ep.status()}")
        fps = decode_rate(ep, 4)
        print(f"restarted endpoint decodes {fps:.1f} fps")
        if fps < 25:
            raise AssertionError(f"after the reconnect the endpoint decodes only {fps:.1f} fps")

        # A publisher with the wrong token is refused (401) and keeps retrying with back-off, saying why.
        wrong = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{zb.free_port()}",
                                        "--whip", f"http://127.0.0.1:{whip_port}/whip", "--whip-token", "wrong"],
                         out / "whip_publish.wrong.serve.log")
        try:
            zb.wait_until("a wrong token is refused, then retried", lambda: ep.status()["unauthorized"] >= 2, 15)
            zb.wait_until("serve says why", lambda: "answered 401" in wrong.output(), 2)
        finally:
            wrong.stop(2)
        print("wrong token: " + next(l for l in wrong.output().splitlines() if "answered 401" in l).split("whip: ")[-1])

        rc, took = serve.stop(5)
        if rc != 0:
            raise AssertionError(f"serve exited {rc} on SIGINT")
        st = ep.status()
        if st["deletes"] != 1 or st["sessions"] != 0:
            raise AssertionError(f"serve's stop did not DELETE its WHIP resource: endpoint saw {st}")
        print(f"SIGINT: serve sent DELETE and exited 0 in {took:.2f} s")
        out_text = serve.output()
        if "reconnecting in" not in out_text:
            raise AssertionError("serve never logged a reconnect")
        each_camera_publishes(args, out)
    except AssertionError as e:
        return zb.report_failure(str(e), serve)
    finally:
        serve.stop(2)
        ep.stop()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
