// makeNvdecSource and makeNvdecPassthroughDecoder in a build without CUDA (nvdec_source.hpp,
// passthrough_decoder.hpp): always the reason and the CPU decode instead.
#include "gpupath/nvdec_source.hpp"
#include "gpupath/passthrough_decoder.hpp"
#include "zerohop/error.hpp"

namespace zerohop::gpupath {

void requireNvdec(int) {
  throw Error(Errc::kUnavailable,
              "decoding H.264 or H.265 on the GPU (format=nv12) needs a zerohop built with CUDA, and nvcc was not found "
              "at configure time; decode on the CPU with format=i420, or install the CUDA toolkit and rebuild");
}

std::unique_ptr<FrameSource> makeNvdecSource(std::unique_ptr<FrameSource>, int device, GpuDecodeCodec) {
  requireNvdec(device);
  return nullptr;  // not reached
}

std::unique_ptr<PassthroughDecoder> makeNvdecPassthroughDecoder(int device, std::uint32_t, std::uint32_t,
                                                                Publisher*) {
  requireNvdec(device);
  return nullptr;  // not reached
}

}  // namespace zerohop::gpupath
