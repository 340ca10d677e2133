#pragma once
// Notices when the encode falls behind its source: frames dropped from the encode queue because the
// encoder takes longer than the source's frame interval. The stream then runs below the camera's rate
// while the status line only counts drops; this says why, with the figures and what to change.

#include <cstdint>
#include <optional>
#include <string>

namespace zerohop {

/// Fed by the encode thread once per frame it takes from the queue (encode thread only). Looks at
/// windows of kWindowNs: a window in which at least a tenth of the source's frames were dropped is
/// reported when it ends, then at most once every kRepeatNs while the backlog lasts.
class EncodeBacklog {
 public:
  static constexpr std::int64_t kWindowNs = 2'000'000'000;
  static constexpr std::int64_t kRepeatNs = 60'000'000'000;

  struct Report {
    std::uint64_t dropped = 0;  ///< frames dropped from the queue in the window
    std::uint64_t encoded = 0;  ///< frames taken from the queue in the window
    double seconds = 0;         ///< the window's length
  };

  /// A frame taken from the queue at NOW (ns, monotonic); QUEUE_DROPS: the queue's drop count so far.
  std::optional<Report> onFrame(std::int64_t now, std::uint64_t queueDrops);

 private:
  std::int64_t windowStart_ = 0;
  std::int64_t lastReport_ = 0;
  bool reported_ = false;
  std::uint64_t dropsAtStart_ = 0;
  std::uint64_t frames_ = 0;
};

/// The warning for REPORT ("falling behind the source: ..."): what was dropped, the encode's median
/// time per frame against the source's frame interval (SOURCE_FPS 0: not known), and what to change.
std::string describeBacklog(const EncodeBacklog::Report& report, double encodeP50Ms, double sourceFps);

}  // namespace zerohop
