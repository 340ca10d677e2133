#pragma once
// A Frame as the C API's zh_frame_info (reader frames and slots to write alike). Reentrant.
#include <cstdint>

#include "zerohop/frame.hpp"
#include "zerohop/zerohop.h"

namespace zerohop::capi {
/// Fills `info` from `f`, up to info->struct_size bytes (the caller has checked that it is at least
/// the first released size, kFrameInfoFirstSize).
void describeFrame(const Frame& f, std::uint64_t publishIndex, std::int64_t publishNs, zh_frame_info* info);
}  // namespace zerohop::capi
