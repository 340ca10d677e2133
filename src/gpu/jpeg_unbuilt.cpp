// probeJpeg / GpuJpegDecoder for CUDA builds without nvjpeg.h: they say so, in words, and MJPEG
// cameras take the CPU path (libjpeg-turbo).
#include <string>

#include "zerohop/error.hpp"
#include "zerohop/gpu_jpeg.hpp"

namespace zerohop {
namespace {
constexpr const char* kNotBuilt =
    "nvJPEG support not built (nvjpeg.h was not found at build time: run scripts/install-deps.sh, which "
    "unpacks the nvidia-nvjpeg wheel into .deps/nvjpeg, or set ZEROHOP_NVJPEG_ROOT, and rebuild)";
}  // namespace

JpegSupport probeJpeg(int) {
  JpegSupport s;
  s.reason = kNotBuilt;
  s.hardwareReason = kNotBuilt;
  return s;
}

struct GpuJpegDecoder::Impl {};

GpuJpegDecoder::GpuJpegDecoder(int, JpegBackend) {
  throw Error(Errc::kUnavailable, std::string("GpuJpegDecoder: ") + kNotBuilt);
}
GpuJpegDecoder::~GpuJpegDecoder() = default;
GpuJpegDecoder::GpuJpegDecoder(GpuJpegDecoder&&) noexcept = default;
GpuJpegDecoder& GpuJpegDecoder::operator=(GpuJpegDecoder&&) noexcept = default;
void GpuJpegDecoder::decode(const Frame&, Frame&, Completion) {}
void GpuJpegDecoder::decodeBatch(std::span<const Frame* const>, std::span<Frame* const>, Completion) {}
void GpuJpegDecoder::setRestartStrips(int, int) {}
int GpuJpegDecoder::restartStrips() const noexcept {
  return 1;
}
int GpuJpegDecoder::lastStripCount() const noexcept {
  return 1;
}
JpegBackend GpuJpegDecoder::backend() const noexcept { return JpegBackend::kAuto; }
const char* GpuJpegDecoder::backendName() const noexcept { return "none"; }
std::string GpuJpegDecoder::describe() const { return kNotBuilt; }
void* GpuJpegDecoder::stream() const noexcept { return nullptr; }
int GpuJpegDecoder::device() const noexcept { return -1; }

}  // namespace zerohop
