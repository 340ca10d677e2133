#!/usr/bin/env python3
"""`pip wheel <repo>`, its wheel `pip install`ed into a fresh venv, then a frame read with the installed module
(ctest label `package`).

    python3 tests/python/pip_install_test.py --source <repo> --publisher <build>/python/tests/zerohop_py_share_publisher \
        --work <scratch dir> [--cuda AUTO|ON|OFF]

What a user does (python/README.md): a venv of this interpreter without system site-packages (so no
numpy: the module must import and read frames without it), `pip wheel <repo>` with pip's build
isolation (scikit-build-core and pybind11 come from PyPI, as for any user; CI already needs PyPI for
scripts/install-deps.sh), whose wheel must hold the module, the version of the CMake project and
nothing else, then `pip install` of that wheel into the venv. That is what `pip install <repo>` does
(the same PEP 517 build_wheel in the same isolated environment, then the install of its wheel), built
once instead of twice: the module's six pybind11 files never hit the compiler cache in an isolated
build (pybind11's headers sit in a fresh /tmp/pip-build-env-* folder each time), so the second build of
`pip install <repo>` then `pip wheel <repo>` recompiled and relinked them, 89 of the 242 s this test took
on the loaded 2-core box. The build folder under --work is emptied first, so the build is a clean
configure and build (the project's own files come from ccache). The reader runs with `python -I` (no
PYTHONPATH, no script directory, no user site) in a fresh folder outside the source tree, against
py_share_publisher's I420 frames, and checks every byte of three frames against the pattern of
tests/share/share_test_support.hpp.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

READER = r'''
import os, sys
import zerohop
name, directory, venv = sys.argv[1:4]
here = os.path.realpath(zerohop.__file__)
assert here.startswith(os.path.realpath(venv) + os.sep), "zerohop imported from " + here + ", not the venv"
assert "numpy" not in sys.modules, "importing zerohop imported numpy"
print("module", here, zerohop.__version__)

def pattern(seq, plane, count):  # tests/share/share_test_support.hpp's patternByte
    return bytes((seq * 7 + plane * 101 + off * 13 + (off >> 9)) & 0xFF for off in range(count))

s = zerohop.Subscriber(name, directory=directory)
seen = []
for _ in range(3):
    with s.next(timeout=5.0) as f:
        assert f is not None, "no frame within 5 s"
        assert (f.format, f.width, f.height, f.memory) == ("i420", 96, 48, "host"), repr(f)
        y = memoryview(f.plane(0))  # the buffer protocol: no numpy
        assert (y.shape, y.strides, y.readonly) == ((48, 96), (128, 1), True), (y.shape, y.strides)
        got = bytes(f)  # every plane, tightly packed
        want = pattern(f.seq, 0, 96 * 48) + pattern(f.seq, 1, 48 * 24) + pattern(f.seq, 2, 48 * 24)
        assert f.valid(), "frame overwritten while it was read"
        assert got == want, "frame %d differs from the pattern" % f.seq
        seen.append(f.seq)
assert seen == sorted(seen) and len(set(seen)) == 3, seen
# The wheel is built where libopus-dev is (scripts/install-deps.sh), so it has the sound decoder:
# 20 ms of concealment from a fresh decoder, through the buffer protocol (no numpy).
pcm = memoryview(zerohop.SoundDecoder(2).decode(None))
assert (pcm.shape, pcm.format) == ((960, 2), "h"), (pcm.shape, pcm.format)
assert "numpy" not in sys.modules
print("frames", seen, "match the pattern; SoundDecoder decodes")
'''


def run(argv, **kwargs):
    print("+", " ".join("<reader>" if a is READER else a for a in argv), flush=True)
    started = time.monotonic()
    subprocess.run(argv, check=True, **kwargs)
    print("  (%.1f s)" % (time.monotonic() - started), flush=True)


def project_version(source):
    with open(os.path.join(source, "CMakeLists.txt")) as f:
        return re.search(r"project\(zerohop VERSION ([0-9.]+)", f.read()).group(1)


def check_wheel(wheels, version):
    found = [w for w in os.listdir(wheels) if w.endswith(".whl")]
    assert len(found) == 1, "pip wheel made %s" % found
    assert found[0].startswith("zerohop-%s-" % version), found[0]
    with zipfile.ZipFile(os.path.join(wheels, found[0])) as z:
        names = z.namelist()
        modules = [n for n in names if re.fullmatch(r"zerohop\.cpython-[^/]+\.so", n)]
        assert len(modules) == 1, "no top-level zerohop extension module in %s: %s" % (found[0], names)
        metadata = z.read("zerohop-%s.dist-info/METADATA" % version).decode()
        assert "\nVersion: %s\n" % version in metadata, metadata
        stray = [n for n in names if not (n in modules or n.startswith("zerohop-%s.dist-info/" % version))]
        assert not stray, "the wheel holds more than the module: %s" % stray
    print("wheel", found[0], "holds", modules[0])
    return os.path.join(wheels, found[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--publisher", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cuda", default="OFF", choices=["AUTO", "ON", "OFF"])
    args = ap.parse_args()
    source, work = os.path.realpath(args.source), os.path.realpath(args.work)

    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    venv, build, wheels = (os.path.join(work, d) for d in ("venv", "pip-build", "wheels"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["ZEROHOP_WITH_CUDA"] = args.cuda
    # pip < 23.1 (Debian 12's) knows only the long spelling of -C.
    config = "--config-settings=build-dir=" + build

    run([sys.executable, "-m", "venv", venv], env=env)
    pip = [os.path.join(venv, "bin", "python"), "-I", "-m", "pip"]
    run(pip + ["wheel", "--no-deps", "-w", wheels, config, source], env=env, cwd=work)
    wheel = check_wheel(wheels, project_version(source))
    run(pip + ["install", "--no-index", wheel], env=env, cwd=work)

    # The reader's working directory and the share folder: a fresh folder outside the source tree.
    outside = tempfile.mkdtemp(prefix="zerohop-pip-")
    share_dir = os.path.join(outside, "share")
    os.makedirs(share_dir, mode=0o700)
    name = "pip-install"
    pub = subprocess.Popen([args.publisher, "images", name, share_dir, "8"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        line = pub.stdout.readline().strip()
        assert line == "ready", "publisher said %r instead of 'ready'" % line
        pub.stdin.write("go\n")
        pub.stdin.flush()
        run([os.path.join(venv, "bin", "python"), "-I", "-c", READER, name, share_dir, venv], env=env,
            cwd=outside, timeout=60)
    finally:
        pub.kill()
        pub.wait()
        shutil.rmtree(outside, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
