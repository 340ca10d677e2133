#pragma once
// What GPU placement (gpupath/gpu_placement.hpp) weighs for each camera of a server.
// Thread-safety: reentrant.

#include <vector>

#include "gpupath/gpu_placement.hpp"
#include "zerohop/camera_server.hpp"

namespace zerohop {

/// Each camera's gpu setting and the format, size and rate its source spec names (a test source
/// without a format is YUYV), as placeCameras() takes them.
std::vector<CameraLoadInput> cameraLoads(const std::vector<CameraConfig>& cameras);

}  // namespace zerohop
