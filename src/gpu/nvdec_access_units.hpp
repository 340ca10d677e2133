#pragma once
// Internal: splits an H.264 or H.265 Annex B elementary stream (a file) into access units, one per picture,
// the way a camera delivers them (SPS/PPS/SEI travel with the picture that follows). For the NVDEC
// tests and benchmark, which replay committed clips. Pure: no device needed.
// Thread-safety: reentrant.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zerohop::nvdec {

/// One access unit per coded picture, start codes included. A new unit starts at an access unit
/// delimiter, parameter set (H.265: VPS too) or (prefix) SEI that follows a slice, or at a slice that
/// begins a picture (H.264: first_mb_in_slice 0; H.265: first_slice_segment_in_pic_flag) after another
/// slice. Bytes before the first start code are dropped. `hevc`: the stream is H.265 (two-byte NAL headers).
std::vector<std::vector<std::uint8_t>> splitAccessUnits(const std::uint8_t* data, std::size_t size, bool hevc = false);

}  // namespace zerohop::nvdec
