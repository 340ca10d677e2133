#pragma once
// Minimal H.264 Annex B scanning: NAL units and their types by start code.
// Thread-safety: pure functions, reentrant.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zerohop::encode {

/// H.264 nal_unit_type values this code looks at (ITU-T H.264 Table 7-1).
inline constexpr int kNalIdr = 5;
inline constexpr int kNalSps = 7;
inline constexpr int kNalPps = 8;
inline constexpr int kNalAud = 9;

/// One NAL unit of an Annex B buffer: [offset, offset + size) holds its start code (3 or 4 bytes)
/// and its payload, up to the next start code or the end.
struct NalUnit {
  std::size_t offset = 0;
  std::size_t size = 0;
  int type = 0;    ///< nal_unit_type (5 bits)
  int refIdc = 0;  ///< nal_ref_idc (2 bits): 0 = no other picture refers to this one
};

/// Every NAL unit in `data`, in order (bytes before the first start code are not part of any).
std::vector<NalUnit> nalUnits(const std::uint8_t* data, std::size_t size);

/// nal_unit_type (5 bits) of every NAL unit in `data`, in order.
std::vector<int> nalTypes(const std::uint8_t* data, std::size_t size);

/// True if the access unit holds an IDR slice (nal_unit_type 5).
bool containsIdr(const std::uint8_t* data, std::size_t size);

/// True if later pictures may refer to this access unit: one of its slices (nal_unit_type 1-5) has a
/// nonzero nal_ref_idc. Losing a unit for which this is false (a disposable B or P picture) harms
/// nothing after it.
bool isReferenced(const std::uint8_t* data, std::size_t size);

}  // namespace zerohop::encode
