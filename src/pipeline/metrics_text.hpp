#pragma once
// Renders pipeline status in the Prometheus text exposition format (0.0.4), `zerohop_` prefix.
// Thread-safety: pure function, reentrant.

#include <string>

#include "stats_json.hpp"

namespace zerohop {

std::string renderMetricsText(const PipelineStatus& status, const StatsContext& context);

}  // namespace zerohop
