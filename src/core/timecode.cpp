#include "zerohop/timecode.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace zerohop {
namespace {

constexpr std::uint8_t kWhite = 235;
constexpr std::uint8_t kBlack = 16;

std::array<std::uint8_t, kTimecodeCells> encodeBits(const Timecode& tc) {
  std::array<std::uint8_t, kTimecodeCells> bits{};
  bits[0] = 1, bits[1] = 0, bits[2] = 1, bits[3] = 0;
  const std::uint64_t ms = tc.wallClockMs & kTimecodeMsMask;
  const std::uint32_t seq = tc.sequence & kTimecodeSeqMask;
  const std::uint64_t payload = (ms << 20) | seq;
  for (int i = 0; i < 64; ++i) bits[4 + i] = static_cast<std::uint8_t>((payload >> (63 - i)) & 1);
  std::array<std::uint8_t, 8> bytes{};
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(payload >> (56 - 8 * i));
  const std::uint8_t crc = crc8(bytes.data(), bytes.size());
  for (int i = 0; i < 8; ++i) bits[68 + i] = static_cast<std::uint8_t>((crc >> (7 - i)) & 1);
  return bits;
}

// Where luma and chroma samples of pixel (x, y) live for the supported formats.
struct LumaAccess {
  std::uint8_t* base = nullptr;
  std::uint32_t pitch = 0;
  std::uint32_t step = 1;  // bytes between horizontally adjacent luma samples
  std::uint8_t* at(std::uint32_t x, std::uint32_t y) const { return base + std::size_t{y} * pitch + x * step; }
};

std::optional<LumaAccess> lumaOf(const Frame& f) {
  if (f.memory == MemoryKind::kDevice || f.data[0] == nullptr) return std::nullopt;
  switch (f.format) {
    case PixelFormat::kYUYV: return LumaAccess{f.data[0], f.pitch[0], 2};
    case PixelFormat::kUYVY: return LumaAccess{f.data[0] + 1, f.pitch[0], 2};
    case PixelFormat::kNV12:
    case PixelFormat::kI420: return LumaAccess{f.data[0], f.pitch[0], 1};
    default: return std::nullopt;
  }
}

void neutralChroma(Frame& f, std::uint32_t stripWidth, std::uint32_t stripHeight) {
  switch (f.format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY: {
      const std::uint32_t first = f.format == PixelFormat::kYUYV ? 1 : 0;
      for (std::uint32_t y = 0; y < stripHeight; ++y) {
        std::uint8_t* row = f.data[0] + std::size_t{y} * f.pitch[0];
        for (std::uint32_t x = first; x < stripWidth * 2; x += 2) row[x] = 128;
      }
      break;
    }
    case PixelFormat::kNV12:
      for (std::uint32_t y = 0; y < stripHeight / 2; ++y)
        std::memset(f.data[1] + std::size_t{y} * f.pitch[1], 128, stripWidth);
      break;
    case PixelFormat::kI420:
      for (std::uint32_t y = 0; y < stripHeight / 2; ++y) {
        std::memset(f.data[1] + std::size_t{y} * f.pitch[1], 128, stripWidth / 2);
        std::memset(f.data[2] + std::size_t{y} * f.pitch[2], 128, stripWidth / 2);
      }
      break;
    default: break;
  }
}

}  // namespace

std::uint32_t timecodeCellSize(std::uint32_t width) noexcept { return std::max<std::uint32_t>(4, width / 80); }

std::uint8_t crc8(const std::uint8_t* data, std::size_t size) noexcept {
  std::uint8_t crc = 0;
  for (std::size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int b = 0; b < 8; ++b) crc = static_cast<std::uint8_t>((crc & 0x80) ? (crc << 1) ^ 0x07 : crc << 1);
  }
  return crc;
}

bool drawTimecode(Frame& frame, const Timecode& tc) noexcept {
  const auto luma = lumaOf(frame);
  if (!luma) return false;
  const std::uint32_t cell = timecodeCellSize(frame.width);
  const std::uint32_t stripWidth = cell * kTimecodeCells;
  if (stripWidth > frame.width || cell > frame.height) return false;
  const auto bits = encodeBits(tc);
  for (std::uint32_t y = 0; y < cell; ++y) {
    for (std::uint32_t i = 0; i < kTimecodeCells; ++i) {
      const std::uint8_t v = bits[i] ? kWhite : kBlack;
      for (std::uint32_t x = i * cell; x < (i + 1) * cell; ++x) *luma->at(x, y) = v;
    }
  }
  neutralChroma(frame, stripWidth, cell);
  return true;
}

std::optional<Timecode> readTimecode(const Frame& frame) noexcept {
  const auto luma = lumaOf(frame);
  if (!luma) return std::nullopt;
  const std::uint32_t cell = timecodeCellSize(frame.width);
  if (cell * kTimecodeCells > frame.width || cell > frame.height) return std::nullopt;
  std::array<std::uint8_t, kTimecodeCells> bits{};
  const std::uint32_t y = cell / 2;
  for (std::uint32_t i = 0; i < kTimecodeCells; ++i) {
    // Average the middle half of the cell to tolerate compression ringing.
    unsigned sum = 0, n = 0;
    for (std::uint32_t x = i * cell + cell / 4; x < i * cell + cell - cell / 4; ++x, ++n) sum += *luma->at(x, y);
    bits[i] = (n && sum / n >= 128) ? 1 : 0;
  }
  if (!(bits[0] == 1 && bits[1] == 0 && bits[2] == 1 && bits[3] == 0)) return std::nullopt;
  std::uint64_t payload = 0;
  for (int i = 0; i < 64; ++i) payload = (payload << 1) | bits[4 + i];
  std::uint8_t crc = 0;
  for (int i = 0; i < 8; ++i) crc = static_cast<std::uint8_t>((crc << 1) | bits[68 + i]);
  std::array<std::uint8_t, 8> bytes{};
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(payload >> (56 - 8 * i));
  if (crc8(bytes.data(), bytes.size()) != crc) return std::nullopt;
  return Timecode{payload >> 20, static_cast<std::uint32_t>(payload & kTimecodeSeqMask)};
}

}  // namespace zerohop
