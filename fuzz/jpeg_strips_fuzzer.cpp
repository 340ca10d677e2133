// The restart-strip splitter (src/gpu/jpeg_strips) on arbitrary bytes: planStrips never fails
// except by refusing, and a plan it accepts is consistent: strips cover the frame's rows in order,
// their restart intervals are contiguous, and every strip writes exactly stripBytes(k) bytes as a
// JPEG (SOI first, EOI last) that libjpeg-turbo reads with the strip's own size. Any violation traps.
#include <turbojpeg.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gpu/jpeg_strips.hpp"

namespace {
void check(bool ok) {
  if (!ok) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint32_t maxStrips = 1 + data[0] % 8;  // the first byte picks the strip count
  const std::span<const std::uint8_t> jpeg(data + 1, size - 1);
  const zerohop::jpeg::StripPlan plan = zerohop::jpeg::planStrips(jpeg, maxStrips);
  if (!plan.splits()) {
    check(plan.strips.empty() || !plan.refusal.empty());
    return 0;
  }
  check(plan.strips.size() >= 2 && plan.strips.size() <= maxStrips);
  std::uint32_t row = 0;
  std::size_t interval = 0, total = 0;
  tjhandle tj = tjInitDecompress();
  for (std::size_t k = 0; k < plan.strips.size(); ++k) {
    const auto& s = plan.strips[k];
    check(s.firstRow == row && s.rows > 0 && s.firstInterval == interval && s.endInterval > s.firstInterval);
    row += s.rows;
    interval = s.endInterval;
    std::vector<std::uint8_t> out(plan.stripBytes(k));
    check(zerohop::jpeg::writeStrip(plan, jpeg, k, std::span<std::uint8_t>(out).first(out.size() - 1)) == 0);
    check(zerohop::jpeg::writeStrip(plan, jpeg, k, out) == out.size());
    check(out.size() >= 4 && out[0] == 0xFF && out[1] == 0xD8 && out[out.size() - 2] == 0xFF && out.back() == 0xD9);
    total += out.size();
    int w = 0, h = 0, ss = 0, cs = 0;
    if (tjDecompressHeader3(tj, out.data(), static_cast<unsigned long>(out.size()), &w, &h, &ss, &cs) == 0)
      check(static_cast<std::uint32_t>(w) == plan.width && static_cast<std::uint32_t>(h) == s.rows);
  }
  tjDestroy(tj);
  check(row == plan.height && total == plan.totalBytes());
  std::vector<std::uint8_t> none(8);
  check(zerohop::jpeg::writeStrip(plan, jpeg, plan.strips.size(), none) == 0);
  return 0;
}
