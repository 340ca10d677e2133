#include "capture/mode_selection.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "zerohop/error.hpp"

namespace zerohop::capture_detail {
namespace {

constexpr PixelFormat kPreference[] = {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12,
                                       PixelFormat::kMJPEG, PixelFormat::kH264};

bool consumable(PixelFormat f) {
  return std::find(std::begin(kPreference), std::end(kPreference), f) != std::end(kPreference);
}

const CaptureFormat* findFormat(const std::vector<CaptureFormat>& offered, PixelFormat f) {
  for (const auto& c : offered) {
    if (c.format == f && !c.sizes.empty()) return &c;
  }
  return nullptr;
}

const CaptureFormat* pickFormat(const std::vector<CaptureFormat>& offered, const ModeRequest& request,
                                const ModeRequest& current) {
  if (request.format != PixelFormat::kUnknown) {
    if (const auto* c = findFormat(offered, request.format)) return c;
    for (PixelFormat f : kPreference) {  // same kind first
      if (isCompressed(f) == isCompressed(request.format)) {
        if (const auto* c = findFormat(offered, f)) return c;
      }
    }
  } else if (consumable(current.format)) {
    if (const auto* c = findFormat(offered, current.format)) return c;
  }
  for (PixelFormat f : kPreference) {
    if (const auto* c = findFormat(offered, f)) return c;
  }
  return nullptr;
}

}  // namespace

ChosenMode chooseMode(const std::vector<CaptureFormat>& offered, const ModeRequest& request,
                      const ModeRequest& current) {
  ChosenMode m;
  m.format = pickFormat(offered, request, current);
  if (!m.format) {
    std::string have;
    for (const auto& c : offered) have += (have.empty() ? "" : ", ") + fourccString(c.fourcc);
    throw Error(Errc::kUnsupported, "the camera offers no format zerohop can consume (it offers: " +
                                        (have.empty() ? std::string("nothing") : have) +
                                        "; zerohop reads yuyv, uyvy, nv12, mjpeg, h264)");
  }
  std::ostringstream differs;
  auto note = [&](const std::string& s) {
    if (differs.tellp() > 0) differs << "; ";
    differs << s;
    m.exact = false;
  };
  if (request.format != PixelFormat::kUnknown && m.format->format != request.format) {
    note("format " + std::string(formatName(m.format->format)) + " instead of " +
         std::string(formatName(request.format)));
  }

  // Size.
  std::uint32_t wantW = request.width, wantH = request.height;
  if (wantW == 0 || wantH == 0) wantW = current.width, wantH = current.height;
  const CaptureFrameSize* size = nullptr;
  if (wantW == 0 || wantH == 0) {
    for (const auto& s : m.format->sizes) {
      if (!size || std::uint64_t{s.width} * s.height > std::uint64_t{size->width} * size->height) size = &s;
    }
  } else {
    std::int64_t best = -1;
    for (const auto& s : m.format->sizes) {
      const std::int64_t cost =
          std::llabs(std::int64_t{s.width} - wantW) + std::llabs(std::int64_t{s.height} - wantH);
      const bool larger =
          size && std::uint64_t{s.width} * s.height > std::uint64_t{size->width} * size->height;
      if (best < 0 || cost < best || (cost == best && larger)) best = cost, size = &s;
    }
  }
  m.width = size->width;
  m.height = size->height;
  if (request.width && (m.width != request.width || m.height != request.height)) {
    note("size " + std::to_string(m.width) + "x" + std::to_string(m.height) + " instead of " +
         std::to_string(request.width) + "x" + std::to_string(request.height));
  }

  // Frame rate.
  const double wantFps = request.fps > 0 ? request.fps : current.fps;
  for (double r : size->fps) {
    if (m.fps == 0) m.fps = r;
    if (wantFps > 0 && std::fabs(r - wantFps) < std::fabs(m.fps - wantFps)) m.fps = r;
  }
  if (wantFps <= 0 && !size->fps.empty()) m.fps = *std::max_element(size->fps.begin(), size->fps.end());
  if (request.fps > 0 && m.fps > 0 && std::fabs(m.fps - request.fps) > 0.01) {
    std::ostringstream os;
    os << "rate " << m.fps << " fps instead of " << request.fps;
    note(os.str());
  }
  m.differs = differs.str();
  return m;
}

}  // namespace zerohop::capture_detail
