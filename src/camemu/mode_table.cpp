#include "camemu/mode_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace zerohop::camemu {

ModeTable::ModeTable(const EmuConfig& config) {
  formats_.push_back(config.format);
  for (PixelFormat f : {PixelFormat::kMJPEG, PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12,
                        PixelFormat::kH264}) {
    if (f != config.format && formatSupported(f)) formats_.push_back(f);
  }
  sizes_ = {{640, 480}, {1280, 720}, {1920, 1080}};
  if (std::find(sizes_.begin(), sizes_.end(), FrameSize{config.width, config.height}) == sizes_.end()) {
    sizes_.push_back({config.width, config.height});
  }
  std::sort(sizes_.begin(), sizes_.end(), [](const FrameSize& a, const FrameSize& b) {
    return std::uint64_t{a.width} * a.height < std::uint64_t{b.width} * b.height;
  });
  // 60, 30 and 15 at every size, as UVC webcams that do 720p60 / 1080p60 list them; --fps is added if different.
  rates_ = {config.fps, 60, 30, 15};
  std::sort(rates_.begin(), rates_.end(), std::greater<>());
  rates_.erase(std::unique(rates_.begin(), rates_.end()), rates_.end());
}

bool ModeTable::offers(PixelFormat format) const noexcept {
  return std::find(formats_.begin(), formats_.end(), format) != formats_.end();
}

FrameSize ModeTable::nearestSize(std::uint32_t width, std::uint32_t height) const noexcept {
  FrameSize best = sizes_.front();
  std::int64_t bestCost = -1;
  for (const auto& s : sizes_) {
    const std::int64_t cost =
        std::llabs(std::int64_t{s.width} - width) + std::llabs(std::int64_t{s.height} - height);
    if (bestCost < 0 || cost < bestCost) best = s, bestCost = cost;
  }
  return best;
}

std::uint32_t ModeTable::nearestRate(double fps) const noexcept {
  std::uint32_t best = rates_.front();
  for (auto r : rates_) {
    if (std::fabs(r - fps) < std::fabs(best - fps)) best = r;
  }
  return best;
}

WireFormat wireFormat(PixelFormat format, std::uint32_t width, std::uint32_t height) noexcept {
  WireFormat w{format, width, height, 0, 0};
  switch (format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
      w.bytesPerLine = width * 2;
      w.sizeImage = width * 2 * height;
      break;
    case PixelFormat::kNV12:
      w.bytesPerLine = width;
      w.sizeImage = width * height * 3 / 2;
      break;
    default:  // compressed: the UVC dwMaxVideoFrameBufferSize a camera typically reports
      w.sizeImage = width * height * 2;
      break;
  }
  return w;
}

}  // namespace zerohop::camemu
