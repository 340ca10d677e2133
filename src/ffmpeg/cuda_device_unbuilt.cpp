// Built without nv-codec-headers (dynlink_cuda.h): no CUDA driver loader, so no CUDA AVFrames.
#include "cuda_device.hpp"
#include "zerohop/error.hpp"

namespace zerohop::ffmpeg_detail {
namespace {
[[noreturn]] void unbuilt() {
  throw Error(Errc::kUnsupported,
              "CUDA AVFrames were not built (nv-codec-headers, Debian libffmpeg-nvenc-dev, "
              "were missing at configure time)");
}
}  // namespace

class CudaDevice {};
const CudaDevice& cudaDevice(int) {
  unbuilt();
}
AVBufferRef* deviceContextRef(const CudaDevice&) {
  unbuilt();
}
AVBufferRef* framesContextRef(const CudaDevice&, AVPixelFormat, int, int) {
  unbuilt();
}
void streamWaitEvent(const CudaDevice&, void*) {
  unbuilt();
}
void streamSynchronize(const CudaDevice&) noexcept {}
void* cudaStreamOf(const AVFrame&) {
  unbuilt();
}

}  // namespace zerohop::ffmpeg_detail
