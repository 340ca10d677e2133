"""Shared pieces of the browser tests: a private network namespace, headless Chromium through
selenium + chromedriver, and a `zerohop serve` child process.

Exit codes follow CTest's convention for these tests: 0 pass, 1 fail, 77 skipped (SKIP_RETURN_CODE),
always with a one-line reason on stdout.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SKIP = 77


def stats_or_empty(url: str) -> dict:
    """serve's /stats JSON, or {} (with a note) when the request fails: through a shaped link a TCP
    segment tbf dropped costs a retransmission timeout, so a caller polling it just asks again."""
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())
    except (OSError, ValueError) as e:
        print(f"note: GET /stats failed ({e}); asking again", flush=True)
        return {}

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--allow-loopback-in-peer-connection",
    "--disable-features=WebRtcHideLocalIpsWithMdns",
    "--autoplay-policy=no-user-gesture-required",
    "--use-fake-ui-for-media-stream",
    "--disable-dev-shm-usage",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--window-size=1400,1040",
]


def skip(reason: str) -> "NoReturn":  # noqa: F821
    print(f"SKIP: {reason}", flush=True)
    sys.exit(SKIP)


def find_browser() -> tuple[str, str]:
    """Returns (chromium, chromedriver) paths or exits with SKIP saying what is missing."""
    def pick(env: str, names: tuple[str, ...]) -> str | None:
        if os.environ.get(env):  # an explicit choice is used as given, or reported missing
            return os.environ[env] if os.access(os.environ[env], os.X_OK) else None
        for n in names:
            p = shutil.which(n) or (f"/usr/bin/{n}" if os.access(f"/usr/bin/{n}", os.X_OK) else None)
            if p:
                return p
        return None

    chromium = pick("ZEROHOP_CHROMIUM", ("chromium", "chromium-browser", "google-chrome"))
    driver = pick("ZEROHOP_CHROMEDRIVER", ("chromedriver",))
    missing = []
    if not chromium:
        missing.append("chromium (apt-get install chromium)")
    if not driver:
        missing.append("chromedriver (apt-get install chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium for " + sys.executable + " (apt-get install python3-selenium)")
    if missing:
        skip("browser test needs " + ", ".join(missing))
    return chromium, driver


def enter_private_network(lan: bool = False) -> bool:
    """Moves this process (and every child it starts later) into a new network namespace with only
    loopback up, so the test neither needs nor touches the host network. With `lan`, also a veth pair
    (10.77.0.1/24 <-> 10.77.0.2/24) inside it, for ICE agents that ignore loopback (libnice does unless
    told otherwise). Returns False, with a note, where that is not allowed (not root and no user
    namespaces): the test then runs in the host's namespace."""
    if os.environ.get("ZEROHOP_NO_NETNS"):
        print("note: ZEROHOP_NO_NETNS set, using the host network namespace", flush=True)
        return False
    CLONE_NEWNET = 0x40000000
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        print(f"note: unshare(CLONE_NEWNET) failed ({os.strerror(err)}): using the host network namespace",
              flush=True)
        return False
    ip = shutil.which("ip") or "/usr/sbin/ip"
    steps = [["link", "set", "lo", "up"]]
    if lan:
        steps += [["link", "add", "zh0", "type", "veth", "peer", "name", "zh1"],
                  ["addr", "add", "10.77.0.1/24", "dev", "zh0"], ["addr", "add", "10.77.0.2/24", "dev", "zh1"],
                  ["link", "set", "zh0", "up"], ["link", "set", "zh1", "up"]]
    for step in steps:
        try:
            subprocess.run([ip, *step], check=True, capture_output=True, text=True)
        except (OSError, subprocess.CalledProcessError) as e:
            detail = getattr(e, "stderr", "") or e
            print(f"FAIL: in the new network namespace `ip {' '.join(step)}` failed: {detail}", flush=True)
            sys.exit(1)
    print("network: private namespace, " + ("loopback + veth 10.77.0.1/2" if lan else "loopback only"), flush=True)
    return True


def enter_viewer_namespace(root_for: str, tools: dict[str, str]) -> tuple[str, str]:
    """The start of a test that makes network namespaces of its own: skips (77) unless root (`root_for` says
    what for), every tool in `tools` (path -> the Debian package holding it) exists and Chromium is found,
    then moves this process into a private namespace, the viewer's. Returns (chromium, chromedriver)."""
    if os.geteuid() != 0:
        skip(f"needs root for {root_for}")
    for tool, pkg in tools.items():
        if not os.path.exists(tool):
            skip(f"needs {tool} (apt-get install {pkg})")
    chromium, chromedriver = find_browser()
    if not enter_private_network():
        skip("needs a private network namespace for the viewer")
    return chromium, chromedriver


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def artifacts_dir(default: Path) -> Path:
    d = Path(os.environ.get("ZEROHOP_TEST_ARTIFACTS") or default)
    d.mkdir(parents=True, exist_ok=True)
    return d


class Serve:
    """A `zerohop serve` child (or the GStreamer reference sender, gst_whep_reference.py, which takes the
    same options). Its combined stdout/stderr is kept (and written to `log_path`)."""

    def __init__(self, binary: "str | list[str]", args: list[str], log_path: Path, wrap: list[str] | None = None):
        if isinstance(binary, list):  # a whole command line of its own (not `zerohop serve`)
            self.cmd = [*binary, *args]
        elif binary.endswith(".py"):
            self.cmd = [sys.executable, binary, *args]
        else:
            self.cmd = [binary, "serve", *args]
        # e.g. ["zerohop-camemu", "--format", "mjpeg", "--"]: serve runs with an emulated camera
        self.cmd = [*(wrap or []), *self.cmd]
        self.log_path = log_path
        self._buf = ""
        self._lock = threading.Lock()
        self._url_seen = threading.Event()
        self.url: str | None = None
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with open(self.log_path, "wb") as log:
            while True:
                chunk = self.proc.stdout.read(4096)
                if not chunk:
                    break
                log.write(chunk)
                log.flush()
                with self._lock:
                    self._buf += chunk.decode("utf-8", "replace")
                    if self.url is None:
                        m = re.search(r"open (https?://\S+)", self._buf)
                        if m:
                            self.url = m.group(1)
                            self._url_seen.set()
        self._url_seen.set()

    def wait_url(self, timeout: float) -> str | None:
        self._url_seen.wait(timeout)
        return self.url

    def output(self) -> str:
        with self._lock:
            return self._buf

    def tail(self, lines: int = 30) -> str:
        text = self.output().replace("\r", "\n")
        return "\n".join([l for l in text.splitlines() if l.strip()][-lines:])

    def stop(self, timeout: float) -> tuple[int | None, float]:
        """SIGINT, then waits up to `timeout` s. Returns (exit code or None if still running, seconds taken);
        a child still running after that is killed."""
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = None
            self.proc.kill()
            self.proc.wait()
        took = time.monotonic() - t0
        self._reader.join(2)
        return rc, took


def start_chromium(chromium: str, chromedriver: str, log_path: Path | None = None, extra_flags: tuple[str, ...] = ()):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    # A flag given in extra_flags replaces the default of the same name (e.g. --window-size).
    overridden = {f.split("=", 1)[0] for f in extra_flags}
    for f in (*(f for f in CHROMIUM_FLAGS if f.split("=", 1)[0] not in overridden), *extra_flags):
        opts.add_argument(f)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=chromedriver, log_path=str(log_path) if log_path else os.devnull)
    return webdriver.Chrome(service=service, options=opts)


def quit_browser(driver) -> None:
    """Ends a chromedriver session (None: nothing to end); a failure to quit never hides the verdict."""
    if driver is None:
        return
    try:
        driver.quit()
    except Exception:
        pass


def browser_console(driver) -> str:
    try:
        return "\n".join(f"  [{e.get('level')}] {e.get('message')}" for e in driver.get_log("browser"))
    except Exception as e:  # the log is a nicety; never let it hide the real failure
        return f"  (console log unavailable: {e})"


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank, as the server and viewer.js compute it."""
    if not values:
        return None
    s = sorted(values)
    import math
    idx = math.ceil(q * len(s))
    return s[min(len(s) - 1, max(idx, 1) - 1)]


def x264_720p_fps(frames: int = 180) -> tuple[float, float] | None:
    """How fast one core of this machine encodes 1280x720 H.264 as serve's CPU path does (libx264
    superfast, zerolatency, one thread, 2500 kb/s), with nothing of ours involved: ffmpeg from its own
    moving test source. Returns (fps by CPU time, fps by wall time), or None without ffmpeg/libx264.
    CPU time is a core's speed; wall time also counts whatever else takes the cores now (another
    program, or a virtual machine's host)."""
    import resource
    cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-f", "lavfi",
           "-i", "testsrc2=size=1280x720:rate=60,format=yuv420p", "-frames:v", str(frames),
           "-c:v", "libx264", "-preset", "superfast", "-tune", "zerolatency", "-threads", "1", "-b:v", "2500k",
           "-f", "null", "-"]
    if not shutil.which("ffmpeg"):
        return None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        print(f"note: the x264 speed check failed: {done.stderr.strip()[-300:]}", flush=True)
        return None
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return frames / max(cpu, 1e-3), frames / max(wall, 1e-3)


def add_machine_speed_option(ap) -> None:
    """--min-machine-x264-fps, for a test whose check is a frame rate that needs the CPU (require_x264_fps)."""
    ap.add_argument("--min-machine-x264-fps", type=float, default=0.0, metavar="FPS",
                    help="skip (77) when one core here encodes 720p x264 at less than this (the figure is "
                         "printed); 0: no check")


def require_x264_fps(min_fps: float, needs: str) -> None:
    """Skips (77, with the figures) when this machine encodes 720p x264 at less than MIN_FPS, by CPU or
    by wall time, whichever is lower (see x264_720p_fps): a test whose check is a frame rate that needs
    that much CPU (serve's encode beside Chromium's decode on the same cores) would only measure the
    machine. Prints the figures either way, so a run's log says how fast its machine was. MIN_FPS 0: no
    check."""
    if min_fps <= 0:
        return
    speed = x264_720p_fps()
    if speed is None:
        print("note: no ffmpeg with libx264 to measure this machine's speed; running the check anyway", flush=True)
        return
    cpu_fps, wall_fps = speed
    print(f"machine: ffmpeg's libx264 (superfast, zerolatency, 1 thread) encodes 1280x720 at {cpu_fps:.0f} fps "
          f"of one core's CPU time ({wall_fps:.0f} fps by wall time); this test needs >= {min_fps:.0f}",
          flush=True)
    if min(cpu_fps, wall_fps) < min_fps:
        skip(f"this machine is too slow to show {needs}: it encodes 1280x720 with x264 at "
             f"{min(cpu_fps, wall_fps):.0f} fps on one core, this test needs >= {min_fps:.0f} (the encode "
             f"shares the cores with Chromium)")


def serve_test_args(doc: str, source: str = "test:640x360@30"):
    """The command line every serve test takes: ZEROHOP_BINARY (the zerohop executable), --source, --netns,
    --artifacts. Add a test's own options to the returned parser, then call parse_serve_test_args."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("zerohop")
    ap.add_argument("--source", default=source)
    ap.add_argument("--netns", action="store_true")
    ap.add_argument("--artifacts", default=None)
    return ap


def parse_serve_test_args(ap):
    """Parses; exits 1 (FAIL) when the zerohop binary does not exist."""
    args = ap.parse_args()
    if not Path(args.zerohop).exists():
        print(f"FAIL: {args.zerohop} does not exist (build the zerohop target)")
        sys.exit(1)
    return args


def start_serve_test(args, log_name: str) -> "Serve":
    """The usual start of a serve test, after find_browser(): enters the private network namespace
    (--netns), starts `zerohop serve --source ARGS.SOURCE` on a free loopback port with its log in the
    artifacts folder as LOG_NAME. The caller waits for the URL (Serve.wait_url)."""
    if args.netns:
        enter_private_network()
    out = artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    return Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{free_port()}"], out / log_name)


def wait_until(what: str, cond, timeout: float, interval: float = 0.2) -> float:
    """Polls `cond()` until it is true; returns the seconds it took, or raises AssertionError naming `what`."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return time.monotonic() - t0
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def terminate(proc: subprocess.Popen, timeout: float = 5.0) -> int:
    """SIGTERM, then SIGKILL after `timeout` s; returns the exit status (negative: the signal)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


class ShareFedRtspCamera:
    """An IP camera whose picture keeps the test camera's pixel timecode (and A/V markers): `zerohop serve
    --source SOURCE --share NAME` (with `sound`: --audio test, its tone's Opus as NAME.opus) feeds
    tests/rtsp/rtsp_camera.py --share NAME (GStreamer's RTSP server: x264 of the share's frames; with
    `sound`, --audio share: the tone's packets as they are). `url` is the camera's, latency=0 for zerohop.
    For benchmarks (scripts/bench-av-sync.py --rtsp, scripts/bench-e2e.py --rtsp); the ctest browser tests
    use with_rtsp_camera.sh. Needs GStreamer's RTSP server for /usr/bin/python3 (python3-gi,
    gir1.2-gst-rtsp-server-1.0) and the zerohop GStreamer plugin in the build tree."""

    def __init__(self, zerohop: str, source: str, sound: bool = False, bitrate: int = 2500, keyint: int = 30):
        root = Path(__file__).resolve().parents[2]
        self.name = f"rtspcam-{os.getpid()}-{free_port()}"
        env = dict(os.environ)
        env["GST_PLUGIN_PATH"] = str(Path(zerohop).resolve().parents[2] / "lib" / "gstreamer-1.0")
        self.procs: list[subprocess.Popen] = []
        upstream = [zerohop, "serve", "--source", source, "--gpu", "off", "--share", self.name,
                    "--listen", f"127.0.0.1:{free_port()}", "--status-interval", "60"]
        self.procs.append(subprocess.Popen(upstream + (["--audio", "test"] if sound else []),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        run = os.environ.get("XDG_RUNTIME_DIR")
        sock = Path(f"{run}/zerohop" if run else f"/tmp/zerohop-{os.getuid()}") / (
            f"{self.name}.opus.sock" if sound else f"{self.name}.sock")
        deadline = time.monotonic() + 30
        while not sock.exists():
            if time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"the camera's serve published no {sock.name} in 30 s")
            time.sleep(0.1)
        python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
        camera = subprocess.Popen(
            [python, str(root / "tests/rtsp/rtsp_camera.py"), "--port", "0", "--share", self.name,
             "--bitrate", str(bitrate), "--keyint", str(keyint)] + (["--audio", "share"] if sound else []),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.procs.append(camera)
        line = camera.stdout.readline() if camera.stdout else ""
        while line and not line.startswith("PORT "):
            line = camera.stdout.readline()
        if not line:
            self.stop()
            raise SystemExit("the RTSP camera did not listen (python3-gi, gir1.2-gst-rtsp-server-1.0?)")
        self.url = f"rtsp://127.0.0.1:{int(line.split()[1])}/test?latency=0"

    def stop(self) -> None:
        for p in reversed(self.procs):
            terminate(p, 15.0)


def note_if_loaded() -> None:
    """After a failure: says so when the machine was overloaded while the test ran (load average above twice
    the cores, or CPU pressure from /proc/pressure/cpu), so the reader looks there first. The verdict stands."""
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    pressure = ""
    try:
        pressure = Path("/proc/pressure/cpu").read_text().split("\n")[0]  # "some avg10=.. avg60=.."
    except OSError:
        pass
    if load > 2 * cores:
        print(f"note: load average {load:.1f} on {cores} cores while this ran ({pressure or 'no PSI'}): other work "
              "competed with serve and the browser; rerun on a quiet machine before blaming the stream", flush=True)


def check_click_against_marker(a: dict, shown: str, failures: list[str], bound_ms: float) -> None:
    """The page's own timing of the test camera's marker frames against the tone's clicks (web/avsync.js)."""
    print("the page's click against marker: " + json.dumps({k: v for k, v in a.items() if k != "last"})
          + "; last pairs " + json.dumps(a.get("last", [])[-3:]))
    if a.get("state") != "running":
        failures.append(f"the page's click timer is {a.get('state')!r}, want 'running'")
        return
    if (a.get("pairs") or 0) < 3:
        failures.append(f"the page paired {a.get('pairs')} clicks with markers ({a.get('clicksHeard')} clicks "
                        f"heard, {a.get('markersSeen')} markers seen), want >= 3 in the window")
        return
    offset, audio = a.get("clickMinusMarkerP50"), a.get("audioCaptureToPlayoutP50")
    if offset is None or abs(offset) > bound_ms:
        failures.append(f"the page's click - marker is {offset} ms at the median, want within {bound_ms:.0f} ms")
    if audio is None or not 0 < audio < 400:
        failures.append(f"the page's click capture -> playout is {audio} ms at the median, want 0-400 ms "
                        "(null: no capture clock offset from /stats)")
    if not re.search(r"click − marker -?\d+(\.\d+)? ms \(\d+ pairs\), sound capture → playout \d+(\.\d+)? ms", shown):
        failures.append(f"the page's sound row does not show the click against the marker: {shown!r}")


def _die_with_parent() -> None:
    """In a child before exec: SIGKILL when the test's process dies (a test killed by its timeout leaves
    no daemon behind)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class PulseNullSink:
    """A PulseAudio daemon of this test's own whose only sink is a null sink: a sound card paced by the
    clock, so a browser without a sound card here (Firefox through cubeb's pulse backend) runs its audio
    graph in real time. Its socket lies in a private directory; `env` is what the browser needs to reach it.
    `available` is False (with `reason`) where pulseaudio is not installed or did not come up in 10 s."""

    def __init__(self, log_path: Path):
        self.proc: subprocess.Popen | None = None
        self.dir = Path(tempfile.mkdtemp(prefix="zh-pulse-"))
        self.socket = self.dir / "native"
        self.env: dict[str, str] = {}
        self.reason = ""
        binary = shutil.which("pulseaudio")
        if not binary:
            self.reason = "no pulseaudio (apt-get install pulseaudio)"
            return
        home = {"HOME": str(self.dir), "XDG_RUNTIME_DIR": str(self.dir)}
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
             "-L", "module-null-sink sink_name=zerohop_null",
             "-L", f"module-native-protocol-unix socket={self.socket} auth-anonymous=1"],
            env={**os.environ, **home}, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10 and self.proc.poll() is None and not self.socket.exists():
            time.sleep(0.05)
        if self.socket.exists() and self.proc.poll() is None:
            self.env = {"PULSE_SERVER": f"unix:{self.socket}"}
        else:
            self.reason = f"pulseaudio did not open {self.socket} in 10 s (exit {self.proc.poll()}; log {log_path})"

    @property
    def available(self) -> bool:
        return bool(self.env)

    def close(self) -> None:
        if self.proc:
            terminate(self.proc)
            self.log.close()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)

def verdict(failures: list[str]) -> int:
    """Prints each failure (or PASS) and returns the test's exit code."""
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("PASS")
    return 0


def report_failure(message: str, serve: "Serve | None", drivers=(), shots: Path | None = None,
                   name: str = "test") -> int:
    """Prints FAIL with the reason, each browser's console (and a screenshot to `shots`/NAME_i.png), and
    serve's last lines; returns 1, the exit code of a failed test."""
    print(f"FAIL: {message}")
    for i, d in enumerate(drivers):
        if shots is not None:
            d.save_screenshot(str(shots / f"{name}_{i}.png"))
        print(f"browser {i} console:\n" + browser_console(d))
    if serve is not None:
        print("serve output (tail):\n" + serve.tail(40))
    return 1
