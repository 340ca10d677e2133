#pragma once
// The line `zerohop serve` keeps on the terminal: each camera's rate, viewers, latency and drops.
// Terminal wording belongs to the CLI, not to the library (which gives the figures: PipelineStatus,
// CameraStatus). Thread-safety: pure functions, reentrant.

#include <string>
#include <vector>

#include "zerohop/camera_server.hpp"
#include "zerohop/pipeline.hpp"

namespace zerohop::cli {

/// One camera: "30.0 fps | viewers 1 | capture->send p50 7.5 ms p99 9.1 ms | ingest ... | drops 0".
std::string renderStatusLine(const PipelineStatus& status);
/// Every camera: one as renderStatusLine(); several as "front 30.0 fps 1 viewers | back retrying".
std::string statusLine(const std::vector<CameraStatus>& cameras);

}  // namespace zerohop::cli
