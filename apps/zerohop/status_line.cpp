#include "status_line.hpp"

#include <cstdio>

namespace zerohop::cli {

std::string renderStatusLine(const PipelineStatus& s) {
  const auto& st = s.latency.stage;
  auto p50 = [&](Stage x) { return st[static_cast<std::size_t>(x)].p50Ms; };
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%5.1f fps | viewers %zu | capture->send p50 %.1f ms p99 %.1f ms | ingest %.1f convert %.1f "
                "encode %.1f send %.2f ms | drops %llu",
                s.latency.fps, s.viewers, s.latency.total.p50Ms, s.latency.total.p99Ms, p50(Stage::kIngest),
                p50(Stage::kConvert), p50(Stage::kEncode), p50(Stage::kSend),
                static_cast<unsigned long long>(s.source.drops + s.queueDrops));
  return buf;
}

std::string statusLine(const std::vector<CameraStatus>& cams) {
  if (cams.size() == 1)
    return cams.front().hasPipeline ? renderStatusLine(cams.front().pipeline) : cams.front().state;
  std::string line;
  for (const auto& c : cams) {
    char part[160];
    if (c.hasPipeline) {
      std::snprintf(part, sizeof part, "%s %.1f fps %zu viewers", c.name.c_str(), c.pipeline.latency.fps,
                    c.pipeline.viewers);
    } else {
      std::snprintf(part, sizeof part, "%s %s", c.name.c_str(), c.state.c_str());
    }
    line += (line.empty() ? "" : " | ") + std::string(part);
  }
  return line;
}

}  // namespace zerohop::cli
