// What a camera frame goes through before and inside the CPU decoder: the capture-side MJPEG
// check, the converter's JPEG framing check, then (for frames that pass) libjpeg-turbo through
// MjpegDecoder into an I420 frame sized from the JPEG header (bounded to 2048x2048). Any bytes
// either decode or are refused with a zerohop::Error; nothing crashes or reads out of bounds.
#include <turbojpeg.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/payload_check.hpp"
#include "jpeg_framing.hpp"
#include "mjpeg_decoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/pixel_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)zerohop::core_detail::mjpegDefect(data, size);
  if (!zerohop::convert::jpegFramingProblem(data, size).empty()) return 0;
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  tjhandle tj = tjInitDecompress();
  const int rc = tjDecompressHeader3(tj, data, static_cast<unsigned long>(size), &width, &height, &subsamp, &colorspace);
  tjDestroy(tj);
  if (rc != 0 || width < 2 || height < 2 || width > 2048 || height > 2048) return 0;
  width &= ~1;
  height &= ~1;
  try {
    const auto layout = zerohop::computeLayout(zerohop::PixelFormat::kI420, static_cast<std::uint32_t>(width),
                                               static_cast<std::uint32_t>(height));
    std::vector<std::uint8_t> buffer(layout.totalBytes);
    zerohop::Frame dst;
    zerohop::bindLayout(dst, layout, buffer.data(), zerohop::MemoryKind::kHost);
    static zerohop::convert::MjpegDecoder decoder;  // reused, as in the pipeline: a failure must not poison it
    decoder.decode(data, size, dst);
  } catch (const zerohop::Error&) {
  }
  return 0;
}
