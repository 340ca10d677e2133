// probeNvdec / GpuH264Decoder for builds without nv-codec-headers: they say so, in words.
#include "zerohop/error.hpp"
#include "zerohop/gpu_decode.hpp"

namespace zerohop {
namespace {
constexpr const char* kNotBuilt = "NVDEC support not built (nv-codec-headers missing at build time)";
}  // namespace

NvdecInfo probeNvdec(int device) {
  NvdecInfo info;
  info.device = device < 0 ? 0 : device;
  info.reason = kNotBuilt;
  return info;
}

std::string describe(const NvdecInfo& info) {
  return info.available ? "available" : "unavailable: " + info.reason;
}

struct GpuH264Decoder::Impl {};

GpuH264Decoder::GpuH264Decoder(int) {
  throw Error(Errc::kUnsupported, std::string("GpuH264Decoder: ") + kNotBuilt);
}
GpuH264Decoder::GpuH264Decoder(int, GpuDecodeCodec) {
  throw Error(Errc::kUnsupported, std::string("GpuH264Decoder: ") + kNotBuilt);
}
GpuH264Decoder::~GpuH264Decoder() = default;
GpuH264Decoder::GpuH264Decoder(GpuH264Decoder&&) noexcept = default;
GpuH264Decoder& GpuH264Decoder::operator=(GpuH264Decoder&&) noexcept = default;
bool GpuH264Decoder::decode(const std::uint8_t*, std::size_t, Frame&) {
  return false;
}
bool GpuH264Decoder::decode(const EncodedUnit&, Frame&) {
  return false;
}
bool GpuH264Decoder::decode(const Frame&, Frame&) {
  return false;
}
bool GpuH264Decoder::flush(Frame&) {
  return false;
}
std::uint32_t GpuH264Decoder::width() const noexcept {
  return 0;
}
std::uint32_t GpuH264Decoder::height() const noexcept {
  return 0;
}
bool GpuH264Decoder::lastFrameConcealed() const noexcept {
  return false;
}
std::uint64_t GpuH264Decoder::droppedPictures() const noexcept {
  return 0;
}
void* GpuH264Decoder::stream() const noexcept {
  return nullptr;
}
int GpuH264Decoder::device() const noexcept {
  return -1;
}

}  // namespace zerohop
