// cuda_frames.hpp in a build without the CUDA toolkit or gstreamer-cuda-1.0: no CUDA memory caps,
// and device shares are refused with what the build lacked.
#include "cuda_frames.hpp"

#include "zerohop/error.hpp"

namespace zerohop::gst {

const char* cudaTemplateCaps() noexcept {
  return "";
}

bool cudaMemoryCanHold(PixelFormat) noexcept {
  return false;
}

bool answerCudaContextQuery(GstElement*, GstQuery*, GstObject*) {
  return false;
}

namespace {
[[noreturn]] void notBuilt() {
  throw Error(Errc::kUnsupported,
              "this gstzerohop was built without CUDA memory support: rebuild with the CUDA toolkit and "
              "gstreamer-cuda-1.0 (Debian 12: libgstreamer-plugins-bad1.0-dev) found");
}
}  // namespace

std::unique_ptr<DeviceFrameCopier> DeviceFrameCopier::open(int, const ImageLayout&, GstCaps*) {
  notBuilt();
}

GstObject* primaryCudaContext(int) {
  notBuilt();
}

std::unique_ptr<CudaBufferView> CudaBufferView::map(GstBuffer*, const GstVideoInfo&) {
  notBuilt();
}

}  // namespace zerohop::gst
