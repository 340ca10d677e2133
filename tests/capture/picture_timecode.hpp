#pragma once
// Test support: the timecode the test camera and the emulated camera draw into every picture, read
// back from a captured frame (raw formats directly; MJPEG after a libjpeg-turbo decode of its luma,
// when the test is built with ZEROHOP_TEST_WITH_JPEG; H.264 carries none readable here).
// Thread-safety: reentrant.

#include <cstdint>
#include <optional>
#include <vector>

#include "zerohop/frame.hpp"
#include "zerohop/timecode.hpp"
#ifdef ZEROHOP_TEST_WITH_JPEG
#include <turbojpeg.h>
#endif

namespace zerohop::test {

inline std::optional<Timecode> pictureTimecode(const Frame& f) {
  if (f.format == PixelFormat::kH264) return std::nullopt;
  if (f.format != PixelFormat::kMJPEG) return readTimecode(f);
#ifdef ZEROHOP_TEST_WITH_JPEG
  tjhandle tj = tjInitDecompress();
  std::vector<std::uint8_t> gray(std::size_t{f.width} * f.height);
  const int rc = tjDecompress2(tj, f.data[0], static_cast<unsigned long>(f.bytesUsed), gray.data(),
                               static_cast<int>(f.width), 0, static_cast<int>(f.height), TJPF_GRAY, 0);
  tjDestroy(tj);
  if (rc != 0) return std::nullopt;
  Frame y;
  y.format = PixelFormat::kI420;  // the reader needs only the luma plane
  y.width = f.width;
  y.height = f.height;
  y.planeCount = 1;
  y.data[0] = gray.data();
  y.pitch[0] = f.width;
  return readTimecode(y);
#else
  return std::nullopt;
#endif
}

}  // namespace zerohop::test
