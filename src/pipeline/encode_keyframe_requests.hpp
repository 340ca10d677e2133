#pragma once
// The keyframe requests of a pipeline's encodes (H.264 rung 0 .. N-1 of the ladder, and VP8's), each
// encode's merged into one pending flag and honoured at most once every kMinGapNs, on its own: a
// receiver on one rung that asks too much (a PLI storm, a lying viewer) forces keyframes on its own
// rung's encode only, never on another rung's or on VP8 (a keyframe raises every receiver's quantiser
// at a fixed bitrate). A request inside its encode's gap stays pending until the gap has passed. The
// sinks' own limits (one forced keyframe a second a viewer: keyframe_request_limit.hpp) apply before.
// Pure: time comes in with take(). Thread-safety: request()/requestAll() from any thread (an atomic
// mask); take() from one thread (the encode thread).

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "zerohop/codec.hpp"

namespace zerohop {

class EncodeKeyframeRequests {
 public:
  /// Requests of one encode closer together than this are merged (every frame an IDR helps no one).
  static constexpr std::int64_t kMinGapNs = 250'000'000;
  /// Rungs of each codec it keeps apart (a ladder has at most 4: DIV 1, 2, 4, 8); a request for a rung
  /// past them is one for the last.
  static constexpr std::size_t kMaxRungs = 8;

  /// Which encodes to force a keyframe on now (take()).
  struct Due {
    std::uint32_t rungs = 0;     ///< bit r: H.264 rung r
    std::uint32_t vp8Rungs = 0;  ///< bit r: VP8 rung r (0: the VP8 encode of the full size)
    bool rung(std::size_t r) const { return r < kMaxRungs && (rungs >> r & 1u) != 0; }
    bool vp8Rung(std::size_t r) const { return r < kMaxRungs && (vp8Rungs >> r & 1u) != 0; }
  };

  /// `initial`: rung 0 pending from the start (a camera's own H.264 begins at its next IDR).
  explicit EncodeKeyframeRequests(bool initial = true) : pending_(initial ? 1u : 0u) {}

  /// A receiver of `track` (its codec's rung) needs a keyframe; sound has none.
  void request(TrackKey track) {
    if (mediaKindOf(track.codec) == MediaKind::kVideo) pending_.fetch_or(bitOf(track));
  }
  /// A sink that does not say which encode: a keyframe of every one.
  void requestAll() { pending_.fetch_or(kAll); }

  /// The encodes whose requests are due at `nowNs` (pending, and none of theirs forced in the kMinGapNs
  /// before); those are no longer pending. Requests inside their encode's gap stay pending.
  Due take(std::int64_t nowNs) {
    const std::uint32_t pending = pending_.load();
    if (pending == 0) return {};
    std::uint32_t due = 0;
    for (std::size_t bit = 0; bit < lastNs_.size(); ++bit) {
      if ((pending >> bit & 1u) == 0) continue;
      if (lastNs_[bit] != kNever && nowNs - lastNs_[bit] < kMinGapNs) continue;
      lastNs_[bit] = nowNs;
      due |= 1u << bit;
    }
    pending_.fetch_and(~due);
    return Due{due & kRungMask, (due >> kMaxRungs) & kRungMask};
  }

 private:
  // Bits 0 .. kMaxRungs - 1: H.264 rungs; the next kMaxRungs: VP8 rungs.
  static constexpr std::uint32_t kRungMask = (1u << kMaxRungs) - 1;
  static constexpr std::uint32_t kAll = (1u << (2 * kMaxRungs)) - 1;
  static constexpr std::int64_t kNever = INT64_MIN;
  static std::uint32_t bitOf(TrackKey track) {
    const std::size_t rung = track.rung < kMaxRungs ? track.rung : kMaxRungs - 1;
    return 1u << (track.codec == Codec::kVP8 ? kMaxRungs + rung : rung);
  }

  std::atomic<std::uint32_t> pending_;
  std::array<std::int64_t, 2 * kMaxRungs> lastNs_ = filled();  // take()'s thread only
  static constexpr std::array<std::int64_t, 2 * kMaxRungs> filled() {
    std::array<std::int64_t, 2 * kMaxRungs> a{};
    for (auto& v : a) v = kNever;
    return a;
  }
};

}  // namespace zerohop
