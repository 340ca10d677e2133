#pragma once
// Minimal H.264 Annex B scanning: NAL unit types by start code.
// Thread-safety: pure functions, reentrant.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zerohop::encode {

/// nal_unit_type (5 bits) of every NAL unit in `data`, in order.
std::vector<int> nalTypes(const std::uint8_t* data, std::size_t size);

/// True if the access unit holds an IDR slice (nal_unit_type 5).
bool containsIdr(const std::uint8_t* data, std::size_t size);

}  // namespace zerohop::encode
