#pragma once
// A FrameSource that reads another process's share (`--source share:NAME`): every published frame
// becomes a source frame, leased in place (no copy), with the producer's capture time kept, so the
// latency reported downstream runs from the producer's capture. A publisher that goes away is
// waited for and reattached (counted as a stall). Device shares give device frames (SourceInfo::memory
// kDevice), which only the GPU path takes; a reader built without CUDA is refused by the publisher.
// Thread-safety: thread-bound (one thread calls next()), except counters() (thread-safe); the
// FrameLeases it returns may be released on any thread and may outlive it.
#include <atomic>
#include <memory>

#include "zerohop/share.hpp"
#include "zerohop/source.hpp"

namespace zerohop {

class ShareSource final : public FrameSource {
 public:
  /// Connects to share spec.path (in spec.options["dir"] when given), waiting up to `openTimeout` for
  /// it; learns the frame rate from its first frames unless spec.fps is set. Throws Error: kNotFound
  /// (nobody publishes it), kUnsupported (encoded units other than H.264, or device frames in a build
  /// without CUDA).
  explicit ShareSource(const SourceSpec& spec, std::chrono::milliseconds openTimeout = std::chrono::seconds(5));
  ~ShareSource() override;
  SourceInfo info() const override { return info_; }
  std::optional<FrameLease> next(std::chrono::milliseconds timeout) override;
  SourceCounters counters() const override;

 private:
  class Leases;
  std::string name_;
  SubscribeOptions options_;
  std::optional<Subscriber> subscriber_;
  std::shared_ptr<Leases> leases_;
  SourceInfo info_;
  std::uint64_t lastIndex_ = 0;
  std::int64_t lastRetryNs_ = 0;
  std::atomic<std::uint64_t> frames_{0}, drops_{0}, stalls_{0};
};

}  // namespace zerohop
