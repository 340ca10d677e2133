#include "gpu/jpeg_strips.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace zerohop::jpeg {
namespace {

constexpr std::uint8_t kSOI = 0xD8, kEOI = 0xD9, kSOS = 0xDA, kDRI = 0xDD, kRST0 = 0xD0, kRST7 = 0xD7;
constexpr std::uint8_t kCOM = 0xFE, kAPP0 = 0xE0, kAPP14 = 0xEE, kAPP15 = 0xEF;

std::uint32_t be16(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 8) | p[1];
}

std::string hex(std::uint8_t b) {
  const char* d = "0123456789ABCDEF";
  return std::string("0xFF") + d[b >> 4] + d[b & 15];
}

std::uint32_t ceilDiv(std::uint32_t a, std::uint32_t b) {
  return (a + b - 1) / b;
}

// The frame header (SOF0 / SOF1) and the one scan's header, as far as the cut needs them.
struct Headers {
  bool haveSof = false;
  std::uint32_t width = 0, height = 0, components = 0;
  std::uint8_t ids[4] = {};
  std::uint32_t h[4] = {}, v[4] = {};
  std::uint32_t restartInterval = 0;
  std::uint32_t scanComponents = 0;
  std::uint8_t scanIds[4] = {};
};

// Parses SOF0/SOF1 (`seg` = the segment after its length field, `len` bytes); "" or why not.
std::string parseSof(const std::uint8_t* seg, std::uint32_t len, Headers& h) {
  if (h.haveSof) return "two frame headers";
  if (len < 6) return "frame header too short";
  if (seg[0] != 8) return "sample precision " + std::to_string(seg[0]) + " (only 8-bit)";
  h.height = be16(seg + 1);
  h.width = be16(seg + 3);
  h.components = seg[5];
  if (h.height == 0) return "height 0 in the frame header (DNL)";
  if (h.width == 0) return "width 0";
  if (h.components < 1 || h.components > 4) return std::to_string(h.components) + " components";
  if (len != 6 + 3 * h.components) return "frame header length does not match its components";
  for (std::uint32_t c = 0; c < h.components; ++c) {
    h.ids[c] = seg[6 + 3 * c];
    h.h[c] = seg[7 + 3 * c] >> 4;
    h.v[c] = seg[7 + 3 * c] & 15;
    if (h.h[c] < 1 || h.h[c] > 4 || h.v[c] < 1 || h.v[c] > 4) return "sampling factor out of range";
  }
  h.haveSof = true;
  return {};
}

std::string parseSos(const std::uint8_t* seg, std::uint32_t len, Headers& h) {
  if (len < 1) return "scan header too short";
  h.scanComponents = seg[0];
  if (h.scanComponents < 1 || h.scanComponents > 4 || len != 4 + 2 * h.scanComponents)
    return "bad scan header";
  for (std::uint32_t c = 0; c < h.scanComponents; ++c) h.scanIds[c] = seg[1 + 2 * c];
  const std::uint8_t* tail = seg + 1 + 2 * h.scanComponents;  // Ss, Se, Ah/Al
  if (tail[0] != 0 || tail[1] != 63 || tail[2] != 0) return "scan is not sequential (Ss/Se/Ah/Al)";
  return {};
}

// What a frame header marker other than SOF0/SOF1 is, for the refusal.
std::string sofRefusal(std::uint8_t m) {
  if (m == 0xC2) return "progressive (SOF2)";
  if (m == 0xC3 || m == 0xC7 || m == 0xCB || m == 0xCF) return "lossless (" + hex(m) + ")";
  if (m >= 0xC9) return "arithmetic-coded (" + hex(m) + ")";
  return "hierarchical (" + hex(m) + ")";
}

bool isOtherSof(std::uint8_t m) {
  return m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

// Segments copied into every strip: everything but application data (kept: APP0 JFIF, APP14 Adobe,
// which say what the components are) and comments.
bool keepSegment(std::uint8_t m) {
  if (m == kCOM) return false;
  if (m >= kAPP0 && m <= kAPP15) return m == kAPP0 || m == kAPP14;
  return true;
}

// Reads the headers from SOI to the end of the SOS header into `plan` and `h`; "" or why not.
std::string readHeaders(std::span<const std::uint8_t> jpeg, StripPlan& plan, Headers& h) {
  const std::uint8_t* d = jpeg.data();
  const std::size_t n = jpeg.size();
  if (n < 4 || d[0] != 0xFF || d[1] != kSOI) return "not a JPEG (no SOI)";
  plan.header.push_back({0, 2});
  plan.headerBytes = 2;
  std::size_t pos = 2;
  bool haveDri = false;
  for (;;) {
    if (pos + 1 >= n) return "no scan (SOS) before the end";
    if (d[pos] != 0xFF) return "garbage between header segments";
    std::size_t m = pos + 1;
    while (m < n && d[m] == 0xFF) ++m;  // fill bytes
    if (m + 2 >= n) return "truncated header";
    const std::uint8_t marker = d[m];
    if (marker == 0x00 || marker == 0x01 || marker == kSOI || marker == kEOI ||
        (marker >= kRST0 && marker <= kRST7))
      return "unexpected marker " + hex(marker) + " in the headers";
    const std::uint32_t len = be16(d + m + 1);
    if (len < 2 || m + 1 + len > n) return "segment " + hex(marker) + " runs past the end";
    const std::uint8_t* seg = d + m + 3;
    const std::uint32_t segLen = len - 2;
    std::string why;
    if (marker == 0xC0 || marker == 0xC1) {
      why = parseSof(seg, segLen, h);
      if (why.empty()) plan.sofHeightOut = plan.headerBytes + 5;  // after FF Cx, length, precision
    } else if (isOtherSof(marker)) {
      return sofRefusal(marker);
    } else if (marker == kDRI) {
      if (segLen != 2) return "bad DRI length";
      h.restartInterval = be16(seg);
      haveDri = true;
    } else if (marker == kSOS) {
      if (!h.haveSof) return "scan before the frame header";
      why = parseSos(seg, segLen, h);
    }
    if (!why.empty()) return why;
    if (keepSegment(marker)) {
      // Copied from the marker itself (fill bytes dropped).
      plan.header.push_back({m - 1, std::size_t(len) + 2});
      plan.headerBytes += std::size_t(len) + 2;
    }
    pos = m + 1 + len;
    if (marker == kSOS) break;
  }
  plan.scanStart = pos;
  if (!haveDri || h.restartInterval == 0) return "no restart interval (DRI)";
  return {};
}

// Finds every restart marker of the scan and the EOI after it; "" or why not.
std::string readScan(std::span<const std::uint8_t> jpeg, StripPlan& plan, std::uint64_t maxRestarts) {
  const std::uint8_t* d = jpeg.data();
  const std::size_t n = jpeg.size();
  std::size_t pos = plan.scanStart;
  for (;;) {
    const void* hit = pos < n ? std::memchr(d + pos, 0xFF, n - pos) : nullptr;
    if (!hit) return "no EOI after the scan";
    std::size_t ff = static_cast<const std::uint8_t*>(hit) - d;
    std::size_t m = ff + 1;
    while (m < n && d[m] == 0xFF) ++m;
    if (m >= n) return "no EOI after the scan";
    const std::uint8_t marker = d[m];
    if (marker == 0x00) {
      pos = m + 1;
      continue;
    }
    if (marker >= kRST0 && marker <= kRST7) {
      if (marker != kRST0 + plan.restarts.size() % 8) return "restart markers out of order";
      if (plan.restarts.size() >= maxRestarts) return "more restart markers than the header implies";
      plan.restarts.push_back(m - 1);
      pos = m + 1;
      continue;
    }
    if (marker == kEOI) {
      plan.scanEnd = m - 1;
      return {};
    }
    return "marker " + hex(marker) + " after the scan (more than one scan, or DNL)";
  }
}

}  // namespace

StripPlan planStrips(std::span<const std::uint8_t> jpeg, std::uint32_t maxStrips) {
  StripPlan plan;
  if (maxStrips < 2) {
    plan.refusal = "fewer than 2 strips asked for";
    return plan;
  }
  Headers h;
  plan.refusal = readHeaders(jpeg, plan, h);
  if (!plan.splits()) return plan;
  if (h.scanComponents != h.components) {
    plan.refusal = "more than one scan (" + std::to_string(h.scanComponents) + " of " +
                   std::to_string(h.components) + " components in the first)";
    return plan;
  }
  for (std::uint32_t c = 0; c < h.components; ++c) {
    if (h.scanIds[c] != h.ids[c]) {
      plan.refusal = "scan components differ from the frame's";
      return plan;
    }
  }
  plan.width = h.width;
  plan.height = h.height;
  plan.components = h.components;
  plan.restartInterval = h.restartInterval;
  std::uint32_t hMax = 1;
  for (std::uint32_t c = 0; c < h.components; ++c) {
    hMax = std::max(hMax, h.h[c]);
    plan.vMax = std::max(plan.vMax, h.v[c]);
    plan.vSampling[c] = h.v[c];
  }
  for (std::uint32_t c = 0; c < h.components; ++c) {
    if (plan.vMax % h.v[c] != 0) {
      plan.refusal = "vertical sampling factors that do not divide the largest";
      return plan;
    }
  }
  // MCU size: interleaved scans hMax x vMax blocks; a one-component scan one block of that component.
  std::uint32_t mcuWidth = 8 * hMax;
  plan.mcuHeight = 8 * plan.vMax;
  if (h.components == 1) {
    mcuWidth = 8 * hMax / h.h[0];
    plan.mcuHeight = 8 * plan.vMax / h.v[0];
  }
  const std::uint32_t perRow = ceilDiv(h.width, mcuWidth);
  const std::uint32_t mcuRows = ceilDiv(h.height, plan.mcuHeight);
  const std::uint64_t mcus = std::uint64_t(perRow) * mcuRows;
  const std::uint64_t intervals = (mcus + h.restartInterval - 1) / h.restartInterval;

  plan.refusal = readScan(jpeg, plan, intervals - 1);
  if (!plan.splits()) return plan;
  if (plan.restarts.size() + 1 != intervals) {
    plan.refusal = std::to_string(plan.restarts.size()) + " restart markers where the header implies " +
                   std::to_string(intervals - 1);
    return plan;
  }
  // A strip may start where a restart interval starts on an MCU-row boundary: every lcm(interval,
  // MCUs per row) MCUs.
  const std::uint64_t cut = std::lcm(std::uint64_t(h.restartInterval), std::uint64_t(perRow));
  const std::uint64_t intervalsPerCut = cut / h.restartInterval;
  plan.rowsPerCut = static_cast<std::uint32_t>(std::min<std::uint64_t>(cut / perRow, mcuRows));
  const std::uint32_t cuts = ceilDiv(mcuRows, plan.rowsPerCut);
  if (cuts < 2) {
    plan.refusal =
        h.restartInterval % perRow != 0 && perRow % h.restartInterval != 0
            ? "restart interval (" + std::to_string(h.restartInterval) + " MCUs) not aligned to MCU rows (" +
                  std::to_string(perRow) + " MCUs)"
            : "too few MCU rows (" + std::to_string(mcuRows) + ") between row-aligned restart markers";
    return plan;
  }
  const std::uint32_t count = std::min(maxStrips, cuts);
  const std::uint32_t rowPixels = plan.rowsPerCut * plan.mcuHeight;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint64_t c0 = std::uint64_t(k) * cuts / count, c1 = std::uint64_t(k + 1) * cuts / count;
    Strip s;
    s.firstRow = static_cast<std::uint32_t>(c0 * rowPixels);
    s.rows = static_cast<std::uint32_t>(std::min<std::uint64_t>(c1 * rowPixels, h.height)) - s.firstRow;
    s.firstInterval = static_cast<std::size_t>(c0 * intervalsPerCut);
    s.endInterval = static_cast<std::size_t>(std::min<std::uint64_t>(c1 * intervalsPerCut, intervals));
    plan.strips.push_back(s);
  }
  return plan;
}

namespace {

// The entropy-coded bytes of restart intervals [first, end): from after the marker before `first`
// to the marker after end - 1.
StripPlan::Range entropyOf(const StripPlan& plan, std::size_t first, std::size_t end) {
  const std::size_t from = first == 0 ? plan.scanStart : plan.restarts[first - 1] + 2;
  const std::size_t to = end - 1 < plan.restarts.size() ? plan.restarts[end - 1] : plan.scanEnd;
  return {from, to - from};
}

}  // namespace

std::size_t StripPlan::stripBytes(std::size_t k) const noexcept {
  if (k >= strips.size()) return 0;
  return headerBytes + entropyOf(*this, strips[k].firstInterval, strips[k].endInterval).size + 2;
}

std::size_t StripPlan::totalBytes() const noexcept {
  std::size_t sum = 0;
  for (std::size_t k = 0; k < strips.size(); ++k) sum += stripBytes(k);
  return sum;
}

std::size_t writeStrip(const StripPlan& plan, std::span<const std::uint8_t> jpeg, std::size_t k,
                       std::span<std::uint8_t> out) noexcept {
  const std::size_t bytes = plan.stripBytes(k);
  if (bytes == 0 || out.size() < bytes || plan.scanEnd + 2 > jpeg.size()) return 0;
  std::uint8_t* o = out.data();
  for (const StripPlan::Range& r : plan.header) {
    std::memcpy(o, jpeg.data() + r.at, r.size);
    o += r.size;
  }
  const Strip& s = plan.strips[k];
  out[plan.sofHeightOut] = static_cast<std::uint8_t>(s.rows >> 8);
  out[plan.sofHeightOut + 1] = static_cast<std::uint8_t>(s.rows & 0xFF);
  const StripPlan::Range e = entropyOf(plan, s.firstInterval, s.endInterval);
  std::memcpy(o, jpeg.data() + e.at, e.size);
  // Restart markers inside the strip count from RST0 again.
  if (s.firstInterval % 8 != 0) {
    for (std::size_t j = s.firstInterval; j + 1 < s.endInterval; ++j) {
      o[plan.restarts[j] + 1 - e.at] = static_cast<std::uint8_t>(kRST0 + (j - s.firstInterval) % 8);
    }
  }
  o += e.size;
  o[0] = 0xFF;
  o[1] = kEOI;
  return bytes;
}

}  // namespace zerohop::jpeg
