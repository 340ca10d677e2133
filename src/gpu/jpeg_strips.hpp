#pragma once
// Internal, pure logic (no device, no nvJPEG): cuts one baseline JPEG into horizontal strips at its
// restart markers, each strip a complete JPEG of fewer MCU rows, so that several hardware JPEG
// engines decode one frame at once (one engine decodes one image; a 1080p frame takes ~1.15 ms on
// one H200 engine).
//
// Why it is exact: the DC predictors reset at every RSTn and the entropy-coded data of each restart
// interval ends byte-aligned, so the bytes between two restart markers that fall on MCU-row
// boundaries decode, with the same tables, to the same blocks as inside the whole frame. A strip is
// the frame's headers (SOF height patched to the strip's pixel rows; APP1..APP13, APP15 and COM
// left out), the strip's entropy-coded data with its restart markers renumbered from RST0, and EOI.
// Every strip but the last is a whole number of MCU rows; all components' rows start at
// componentRow(c, strip.firstRow) in their planes.
//
// Only frames that are baseline or extended sequential Huffman (SOF0 / SOF1, 8-bit), one scan with
// every component, a restart interval (DRI) whose boundaries fall on MCU-row boundaries at least
// every few rows, and at least two such row groups split; planStrips says why any other does not.
// Hostile input: every read is bounds-checked; a frame whose restart markers are missing, out of
// order or too many is refused (the caller then decodes it whole and reports its own error).
// Thread-safety: reentrant.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zerohop::jpeg {

struct Strip {
  std::uint32_t firstRow = 0;     ///< the frame's pixel row the strip starts at
  std::uint32_t rows = 0;         ///< its pixel rows (a multiple of the MCU height except the last strip)
  std::size_t firstInterval = 0;  ///< restart intervals [firstInterval, endInterval) of the frame
  std::size_t endInterval = 0;
};

struct StripPlan {
  std::string refusal;  ///< empty when the frame splits, else why it does not ("no restart interval (DRI)")
  std::uint32_t width = 0, height = 0;
  std::uint32_t components = 0;
  std::uint32_t vSampling[4] = {1, 1, 1, 1};  ///< each component's vertical sampling factor
  std::uint32_t vMax = 1;
  std::uint32_t mcuHeight = 0;        ///< pixel rows per MCU row
  std::uint32_t restartInterval = 0;  ///< MCUs per restart interval (DRI)
  std::uint32_t rowsPerCut = 0;       ///< MCU rows between two places a strip may start
  std::vector<Strip> strips;

  // Where the pieces are in the source JPEG (byte offsets).
  struct Range {
    std::size_t at = 0, size = 0;
  };
  std::vector<Range> header;          ///< SOI .. end of the SOS header, minus the segments left out
  std::size_t headerBytes = 0;        ///< sum of `header` sizes
  std::size_t sofHeightOut = 0;       ///< offset of SOF's height field in the written header
  std::size_t scanStart = 0;          ///< first entropy-coded byte
  std::size_t scanEnd = 0;            ///< offset of the EOI marker
  std::vector<std::size_t> restarts;  ///< offset of each restart marker's 0xFF, in scan order

  bool splits() const noexcept { return refusal.empty(); }
  /// The row in component `c`'s plane that frame pixel row `frameRow` (a strip start) maps to.
  std::uint32_t componentRow(std::uint32_t c, std::uint32_t frameRow) const noexcept {
    return frameRow / vMax * vSampling[c];
  }
  /// Bytes of strip `k` as writeStrip writes it.
  std::size_t stripBytes(std::size_t k) const noexcept;
  /// Bytes of all strips together.
  std::size_t totalBytes() const noexcept;
};

/// Plans up to `maxStrips` strips of about equal height for `jpeg`. maxStrips < 2 is a refusal.
/// Never throws for bad input (refusal says why); throws only std::bad_alloc.
StripPlan planStrips(std::span<const std::uint8_t> jpeg, std::uint32_t maxStrips);

/// Writes strip `k` of `plan` (made from these same `jpeg` bytes) to `out`, which must hold
/// plan.stripBytes(k) bytes; returns the bytes written, or 0 when `out` is too small or k is out of range.
std::size_t writeStrip(const StripPlan& plan, std::span<const std::uint8_t> jpeg, std::size_t k,
                       std::span<std::uint8_t> out) noexcept;

}  // namespace zerohop::jpeg
