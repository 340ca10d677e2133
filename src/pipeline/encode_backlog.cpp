#include "encode_backlog.hpp"

#include <cstdio>

namespace zerohop {

std::optional<EncodeBacklog::Report> EncodeBacklog::onFrame(std::int64_t now, std::uint64_t queueDrops) {
  if (windowStart_ == 0) {
    windowStart_ = now;
    dropsAtStart_ = queueDrops;
    frames_ = 1;
    return std::nullopt;
  }
  ++frames_;
  if (now - windowStart_ < kWindowNs) return std::nullopt;
  const Report report{queueDrops - dropsAtStart_, frames_, static_cast<double>(now - windowStart_) / 1e9};
  windowStart_ = now;
  dropsAtStart_ = queueDrops;
  frames_ = 0;
  if (report.dropped * 10 < report.dropped + report.encoded) return std::nullopt;  // under a tenth
  if (reported_ && now - lastReport_ < kRepeatNs) return std::nullopt;
  reported_ = true;
  lastReport_ = now;
  return report;
}

std::string describeBacklog(const EncodeBacklog::Report& r, double encodeP50Ms, double sourceFps) {
  char buf[512];
  const double encodedFps = r.seconds > 0 ? static_cast<double>(r.encoded) / r.seconds : 0;
  int n = std::snprintf(buf, sizeof buf,
                        "falling behind the source: %llu of %llu frames dropped before encoding in the "
                        "last %.1f s (%.1f fps encoded); the encode takes %.1f ms a frame at the median",
                        static_cast<unsigned long long>(r.dropped),
                        static_cast<unsigned long long>(r.dropped + r.encoded), r.seconds, encodedFps, encodeP50Ms);
  if (sourceFps > 0 && n > 0 && static_cast<std::size_t>(n) < sizeof buf) {
    n += std::snprintf(buf + n, sizeof buf - n, ", the source sends one every %.1f ms (%g fps)", 1000.0 / sourceFps,
                       sourceFps);
  }
  std::string text(buf);
  text += ". Lower the size or the frame rate, give the encoder more threads, or encode on a GPU with NVENC";
  return text;
}

}  // namespace zerohop
