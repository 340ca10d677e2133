#pragma once
// The GPU path's FrameScaler (convert/converter.hpp): a lower rung of a camera's ladder of renditions
// scaled from the device NV12 frame rung 0 just took, by CUDA (GpuConverter's bilinear resample,
// pixel centres aligned; the kernels are checked against the CPU reference in tests/gpu). A destination
// in device memory is written in place; one in host or page-locked memory (x264's input) gets one copy
// of the scaled picture, a quarter or a sixteenth of the frame's bytes, never the full frame.
// Builds without CUDA: makeCudaScaler throws Error(kUnavailable) saying so.
// Thread-safety: thread-bound (the pipeline's encode thread).
// Ownership: the scaler owns its converter (stream, events) and a device scratch frame per
// destination size; neither frame of scale() is owned.

#include <memory>

#include "convert/converter.hpp"

namespace zerohop {

/// A scaler on CUDA device `device`: src NV12 or I420 in device, pinned or host memory; dst NV12 or
/// I420, even size, in any memory. Throws Error (no such device, CUDA fails).
std::unique_ptr<FrameScaler> makeCudaScaler(int device);

}  // namespace zerohop
