#pragma once
// Renders pipeline status as the /stats JSON document (the terminal line is the CLI's:
// apps/zerohop/status_line.hpp). Thread-safety: pure functions, reentrant.

#include <nlohmann/json.hpp>
#include <string>

#include "zerohop/pipeline.hpp"

namespace zerohop {

struct StatsContext {
  std::string source;
  std::string encoder;
  std::string path = "cpu";  ///< the data path: "cpu", "gpu" or "passthrough"
};

std::string renderStatsJson(const PipelineStatus& status, const StatsContext& context);
/// The same document as JSON, for a caller that adds to it (CameraServer's per-camera entries).
nlohmann::json statsDocument(const PipelineStatus& status, const StatsContext& context);

}  // namespace zerohop
