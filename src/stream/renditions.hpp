#pragma once
// The ladder of renditions and each viewer's place on it (docs/ARCHITECTURE.md, "Renditions"): one
// captured frame, encoded at full, 1/2 and 1/4 size by default, each rung with its own bitrate range;
// each viewer receives the highest rung its own estimate fits, so one slow (or lying) viewer moves only
// itself, never the picture of the others.
//   renditionLadder(): the ladder a `--renditions` spec describes.
//   RenditionPlacement: which rung one viewer should be on, from its estimate, with hysteresis: down at
//     once (to the rung its estimate fits), up one rung at a time and only after its estimate held at or
//     above that rung's need (its minKbps) for kUpHoldNs; never above the rung the viewer chose as its
//     highest (setTop: the WHEP layer request, docs/stream.md), which moves it at once both ways.
//   RungRoute: which rung's units one viewer's track takes: its current rung's, until the first keyframe
//     of the rung it is to move to (its SPS/PPS come in band): from that IDR on, the new rung's, on the
//     same SSRC and track (no renegotiation; the decoder takes the new size from the SPS).
// All pure (time comes in with the update). Thread-safety: thread-bound (the caller serialises).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "zerohop/sinks.hpp"

namespace zerohop::stream {

/// The ladder `spec` describes for a `width` x `height` source whose configured bitrate is `maxKbps`:
///   "off" (or "" or "1"): none (an empty vector: the one encode of before);
///   "on": full, 1/2 and 1/4 size, in [0.4, 1], [0.15, 0.4] and [0.05, 0.15] x maxKbps;
///   "auto" (the default): "on" without the lower rungs smaller than kAutoSmallest (320x180, either way
///   up): three rungs from 1280x720 up, two from 640x360, none (one encode) below;
///   "DIV:MIN-MAX,...": a rung per item, 1/DIV of the size (DIV 1, 2, 4 or 8; the first 1, each after
///   the first a larger DIV than the one before), MIN..MAX kb/s (MIN <= MAX), e.g. "1:1000-2500,2:300-1000".
/// Sizes are rounded down to even numbers (at least 2). Throws Error(kInvalidArgument) saying what is
/// wrong and what is expected.
/// "auto"'s smallest lower rung: below it a picture says too little to be worth an encode of its own.
inline constexpr struct { std::uint32_t longSide, shortSide; } kAutoSmallest{320, 180};

std::vector<Rendition> renditionLadder(const std::string& spec, std::uint32_t width, std::uint32_t height,
                                       std::uint32_t maxKbps);

class RenditionPlacement {
 public:
  /// How long a viewer's estimate must stay at or above the next rung's need before it moves up.
  static constexpr std::int64_t kUpHoldNs = 3'000'000'000;

  /// `ladder`: rung 0 the highest; the viewer starts on `startRung` (clamped to the ladder).
  explicit RenditionPlacement(std::vector<Rendition> ladder, std::size_t startRung = 0);
  /// The lowest estimate rung `rung` needs: its minKbps; the lowest rung needs nothing.
  std::uint32_t needKbps(std::size_t rung) const;
  /// The highest rung `estimateKbps` fits (hysteresis aside).
  std::size_t fits(std::uint32_t estimateKbps) const;
  /// One estimate of the viewer's at `nowNs`; returns the rung it should be on now.
  std::size_t update(std::int64_t nowNs, std::uint32_t estimateKbps);
  /// The highest rung (the lowest index) the viewer takes whatever its estimate: 0 (the default) leaves
  /// the choice to the estimate; clamped to the ladder. A lower estimate still places it lower.
  void setTop(std::size_t rung);
  std::size_t top() const { return top_; }
  /// The rung the viewer should be on: what its estimate fits (with hysteresis), never above top().
  std::size_t rung() const { return std::max(rung_, top_); }
  const std::vector<Rendition>& ladder() const { return ladder_; }

 private:
  std::vector<Rendition> ladder_;
  std::size_t rung_ = 0;  // what its estimate fits, with hysteresis; top_ aside
  std::size_t top_ = 0;
  std::int64_t aboveSinceNs_ = -1;  // since when the estimate has held the next rung up's need; -1: it does not
};

struct RungRoute {
  std::size_t current = 0;  ///< the rung whose units the viewer's track takes now
  std::size_t target = 0;   ///< the rung it is to move to (== current: none pending)
  std::uint64_t switches = 0;

  /// Whether the track takes a unit of `rung` (`keyframe`: an IDR); the first keyframe of `target`
  /// completes a pending switch (and is taken).
  bool take(std::size_t rung, bool keyframe) {
    if (target != current && rung == target && keyframe) {
      current = target;
      ++switches;
      return true;
    }
    return rung == current;
  }
  /// True while units of `rung` are wanted (the current rung's, or those of the one it is moving to).
  bool wants(std::size_t rung) const { return rung == current || rung == target; }
};

}  // namespace zerohop::stream
