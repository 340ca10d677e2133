#pragma once
// Internal: the pixel timecode (zerohop/timecode.hpp) read from a frame in device memory, for readers
// that check what a device share carries (`zerohop tap --timecode`, the gpu tests). Copies only the
// strip: one cell of rows of the luma plane's first 76 cells, after the frame's ready event.
// Thread-safety: reentrant; the copy runs on the calling thread's default stream of the frame's device.

#include <optional>

#include "zerohop/frame.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop::gpu {

/// The timecode of an NV12/I420/YUYV/UYVY frame in device memory (the luma strip is copied to the host
/// and read as readTimecode reads host frames); host frames are read in place. nullopt when the strip is
/// unreadable (damaged, or never drawn). Throws Error(kDevice) when the copy fails.
std::optional<Timecode> readFrameTimecode(const Frame& frame);

}  // namespace zerohop::gpu
