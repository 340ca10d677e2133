#pragma once
// Renders pipeline status in the Prometheus text exposition format (0.0.4), `zerohop_` prefix.
// Thread-safety: pure function, reentrant.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stats_json.hpp"

namespace zerohop {

/// One camera's part of /metrics: its name (the `camera` label on every series; "" = no label, a
/// lone pipeline) and its status, absent while it is being opened or retried.
struct CameraMetrics {
  std::string camera;
  std::optional<PipelineStatus> status;
  StatsContext context;
  std::uint64_t restarts = 0;
};

std::string renderMetricsText(const PipelineStatus& status, const StatsContext& context);
/// Every camera's series, each family's lines together under one HELP/TYPE; with named cameras
/// also zerohop_camera_up and zerohop_camera_restarts_total.
std::string renderMetricsText(const std::vector<CameraMetrics>& cameras);

}  // namespace zerohop
