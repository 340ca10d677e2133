#pragma once
// Where a pipeline's encoded output goes. Every access unit the encoder (or a camera's H.264) makes is
// handed, as one immutable EncodedUnit, to each UnitSink the pipeline owns: the WHEP viewers
// (StreamServer), a WHIP endpoint, an RTP target such as a Janus mountpoint, the H.264 share, and any
// sink a program adds (a recorder, its own transport). Receivers ask for keyframes back through the
// requesters the pipeline hands each sink (of every encode, or of one track's); the pipeline merges and
// rate-limits those requests, each track's on their own.
// Raw frames have one sink too: the pipeline's frame share (a zerohop::Publisher it owns on both
// data paths, written in place by the converter: host memory on the CPU path, VRAM on the GPU path).
//
// Each unit is of one track (zerohop/codec.hpp: H.264 rung N, VP8, Opus); a sink says which tracks it
// takes (UnitSink::wants) and is told, once, what the pipeline offers (SinkSetup).
//
// Thread-safety: deliver() is called from the thread of the unit's encode: the pipeline's encode thread
// (H.264, every rung), its VP8 thread, the sound's encode thread; a sink's keyframe requests may come
// from any thread. Ownership: the pipeline owns (or shares) its sinks and destroys
// them after its threads have stopped.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "zerohop/codec.hpp"
#include "zerohop/encoded_unit.hpp"
#include "zerohop/export.h"

namespace zerohop {

/// One rung of a camera's ladder of renditions (`serve --renditions`; docs/ARCHITECTURE.md,
/// "Renditions"): the picture size its encode codes and the bitrate range congestion control keeps it
/// in. Rung 0 is the pipeline's main encode (the source's size); each lower rung is the same captured
/// frame scaled down and encoded again, only while some receiver takes it. EncodedUnit::rendition
/// says which rung a unit is of.
struct Rendition {
  std::uint32_t width = 0, height = 0;
  std::uint32_t minKbps = 0, maxKbps = 0;
};

/// What the pipeline tells each of its sinks once, before the first unit (UnitSink::attach). It grows by
/// fields a sink may ignore: a new capability of the pipeline is a new field here, never a new virtual
/// that every program's subclass would have to follow.
struct SinkSetup {
  /// Asks for a keyframe on every running video encode. Non-blocking, from any thread; empty once the
  /// sink is detached.
  std::function<void()> requestKeyframe;
  /// Asks for a keyframe on one track's encode only (H.264 rung N, or VP8): a sink whose receivers each
  /// take one track (the WHEP viewers) calls this instead, so a receiver asking too much never costs
  /// the receivers of another track a keyframe. Each track's requests are merged and rate-limited on
  /// their own. Non-blocking, from any thread.
  std::function<void(TrackKey track)> requestTrackKeyframe;
  /// The camera's ladder, rung 0 first; one rung or none: no ladder, only rung 0's units come. A sink
  /// that switches each receiver between rungs (the WHEP viewers) keeps it.
  std::vector<Rendition> ladder;
  /// The ladder's lower rungs are made in VP8 too (TrackKey{kVP8, rung}), for receivers without H.264;
  /// false: VP8 comes at rung 0 only.
  bool vp8Ladder = false;
  /// The codecs besides H.264 this pipeline cannot make, each with why (VP8 of a passed-through camera
  /// where no decoder opens: "the camera's H.264 is passed through and cannot be decoded here (...)"); a
  /// sink may tell its receivers (a WHEP offer with VP8 only is refused with that text).
  struct Unavailable {
    Codec codec = Codec::kVP8;
    std::string why;
  };
  std::vector<Unavailable> unavailable;

  /// Why `codec` cannot be had from this pipeline; empty when it can.
  std::string whyUnavailable(Codec codec) const {
    for (const Unavailable& u : unavailable) {
      if (u.codec == codec) return u.why;
    }
    return {};
  }
};

class ZEROHOP_API UnitSink {
 public:
  virtual ~UnitSink() = default;
  /// Takes one encoded unit of a track this sink wants() (unit->track(); unit->kind() says picture or
  /// sound). H.264: Annex B, SPS/PPS before every IDR. Called from the thread of the unit's encode: the
  /// H.264 encode thread (every rung), the VP8 thread, the sound's encode thread; units of different
  /// codecs arrive concurrently. Must not block: queue it, drop the oldest, or skip until the next keyframe.
  virtual void deliver(const EncodedUnitPtr& unit) = 0;
  /// One line for the log: "WHEP viewers at http://127.0.0.1:8080/", "WHIP to https://...".
  virtual std::string describe() const = 0;
  /// True while a receiver of this sink takes `track`'s units. The pipeline asks before every unit (from
  /// the encode threads: must be cheap and non-blocking), delivers the units of a lower rung, of VP8 and
  /// of the sound only to the sinks that want them, and runs an encode other than the main one only
  /// while some sink wants it. The main encode (H.264 rung 0) runs always and its units go to every
  /// sink, whatever this says of it (a sink keeps its parameter sets and keyframes for receivers that
  /// join; a sink of the sound alone ignores them). The default: H.264 rung 0 only.
  virtual bool wants(TrackKey track) const { return track == TrackKey{}; }
  /// The bitrate `track`'s encode should run at now (kb/s; its receivers' weakest estimate within the
  /// track's range); 0: leave it alone. Asked for the lower rungs and VP8; the main encode's target comes
  /// from the WHEP viewers' congestion control.
  virtual std::uint32_t targetKbps(TrackKey track) const {
    (void)track;
    return 0;
  }
  /// Called once before the first deliver(): the pipeline's requesters, ladder and codecs. A sink
  /// shared by pipelines one after another (a named WHEP stream whose camera restarts) is attached again.
  virtual void attach(const SinkSetup& setup) { (void)setup; }
  /// Called after the last deliver(): the requesters of the setup call into a pipeline that is going
  /// away. A sink that keeps them (and outlives its pipeline) drops them here; once detach() returns,
  /// they are never called.
  virtual void detach() {}
};

}  // namespace zerohop
