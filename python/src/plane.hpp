#pragma once
// zerohop.Plane: one plane of a leased frame as an array view, exported through the buffer protocol
// (numpy.asarray, memoryview) and DLPack (numpy/torch/cupy.from_dlpack). Zero-copy and read-only.
//
// Shapes (uint8 elements, strides in bytes = elements, the ring's real pitch as the row stride):
//   planar/semi-planar (I420, NV12: every plane)  2-D (rows, meaningful bytes per row)
//   packed (YUYV/UYVY 2, RGB24 3, BGRx/RGBA 4)    3-D (height, width, bytes per pixel)
//   encoded units (H.264, MJPEG)                  1-D (bytesUsed,)
//
// Ownership: a Plane holds the frame's lease (shared with its Frame and with every array exported
// from it), so the memory stays mapped and the publisher spares the slot until the last of them is
// gone (at most ShareOptions::leaseTimeout, 1 s: after that the publisher may overwrite it, which
// Frame.valid()/Plane.valid() report). Thread-safety: immutable; Python uses it under the GIL.

#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "zerohop/share.hpp"

namespace zerohop::python {

struct PyPlane {
  std::shared_ptr<const SharedFrame> lease;  // never null
  std::uint8_t* data = nullptr;              // host pointer, or device pointer for MemoryKind::kDevice
  int ndim = 0;
  std::array<std::int64_t, 3> shape{};
  std::array<std::int64_t, 3> strides{};  // bytes
  MemoryKind memory = MemoryKind::kHost;
  GpuSync gpu{};
};

/// Every plane of `lease`'s frame (one 1-D plane for encoded units), shaped as described above.
std::vector<PyPlane> planesOf(const std::shared_ptr<const SharedFrame>& lease);

/// Registers zerohop.Plane.
void registerPlane(pybind11::module_& m);

}  // namespace zerohop::python
