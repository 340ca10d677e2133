// makeNvdecPassthroughDecoder (passthrough_decoder.hpp): a passed-through camera's pictures decoded by NVDEC
// into VRAM, and through a GpuFramePath (NV12 in, no conversion) into the device share.
#include <optional>
#include <string>

#include "gpupath/gpu_path.hpp"
#include "gpupath/nvdec_source.hpp"
#include "gpupath/passthrough_decoder.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_decode.hpp"

namespace zerohop::gpupath {
namespace {

// The decoder's own pictures, used in turn: the one the GPU path copies from, and the next one decoded.
constexpr std::uint32_t kPictures = 2;

class NvdecPassthroughDecoder final : public PassthroughDecoder {
 public:
  NvdecPassthroughDecoder(int device, std::uint32_t width, std::uint32_t height, Publisher* deviceShare)
      : width_(width),
        height_(height),
        pictures_(computeLayout(PixelFormat::kNV12, width, height, 256), kPictures,
                  makeDeviceAllocator(device)),
        path_(pathConfig(device, width, height, deviceShare)),
        decoder_(device, GpuDecodeCodec::kH264),
        name_("NVDEC H.264 on CUDA device " + std::to_string(device)) {
    for (auto& slot : slots_) slot = pictures_.tryAcquire();
  }

  const Frame* decode(const EncodedUnit& unit, bool keep) override {
    FrameLease& slot = *slots_[next_];
    bool produced = false;
    try {
      produced = decoder_.decode(unit, slot.frame());
    } catch (const Error& e) {
      if (e.code() != Errc::kInvalidArgument) throw;
      throw Error(Errc::kUnsupported, "the camera sends " + std::to_string(decoder_.width()) + "x" +
                                          std::to_string(decoder_.height()) + " pictures, not the " +
                                          std::to_string(width_) + "x" + std::to_string(height_) +
                                          " it announced");
    }
    if (!produced || !keep) return nullptr;
    next_ = (next_ + 1) % kPictures;
    return path_.process(slot.frame()).device;  // into the device share (a copy on the GPU), if any
  }

  const Frame* hostPicture() override { return &path_.downloadLast(); }
  std::string name() const override { return name_; }

 private:
  static GpuPathConfig pathConfig(int device, std::uint32_t width, std::uint32_t height, Publisher* share) {
    GpuPathConfig c;
    c.device = device;
    c.sourceFormat = PixelFormat::kNV12;
    c.width = width;
    c.height = height;
    c.share = share;
    return c;
  }

  std::uint32_t width_, height_;
  BufferPool pictures_;
  std::optional<FrameLease> slots_[kPictures];
  std::uint32_t next_ = 0;
  GpuFramePath path_;
  GpuH264Decoder decoder_;  // last: destroyed first, it waits for its copies into the pictures
  std::string name_;
};

}  // namespace

std::unique_ptr<PassthroughDecoder> makeNvdecPassthroughDecoder(int device, std::uint32_t width,
                                                                std::uint32_t height,
                                                                Publisher* deviceShare) {
  requireNvdec(device);
  if (width == 0 || height == 0)
    throw Error(Errc::kUnsupported,
                "the camera did not say its picture size; NVDEC's pictures need it up front");
  return std::make_unique<NvdecPassthroughDecoder>(device < 0 ? 0 : device, width, height, deviceShare);
}

}  // namespace zerohop::gpupath
