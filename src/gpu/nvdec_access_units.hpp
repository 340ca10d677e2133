#pragma once
// Internal: splits an H.264 Annex B elementary stream (a file) into access units, one per picture,
// the way a camera delivers them (SPS/PPS/SEI travel with the picture that follows). For the NVDEC
// tests and benchmark, which replay committed clips. Pure: no device needed.
// Thread-safety: reentrant.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zerohop::nvdec {

/// One access unit per coded picture, start codes included. A new unit starts at an access unit
/// delimiter, SPS, PPS or SEI that follows a slice, or at a slice whose first_mb_in_slice is 0
/// after another slice. Bytes before the first start code are dropped.
std::vector<std::vector<std::uint8_t>> splitAccessUnits(const std::uint8_t* data, std::size_t size);

}  // namespace zerohop::nvdec
