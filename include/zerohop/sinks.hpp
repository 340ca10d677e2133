#pragma once
// Where a pipeline's encoded output goes. Every access unit the encoder (or a camera's H.264) makes is
// handed, as one immutable EncodedUnit, to each UnitSink the pipeline owns: the WHEP viewers
// (StreamServer), a WHIP endpoint, an RTP target such as a Janus mountpoint, the H.264 share, and any
// sink a program adds (a recorder, its own transport). Receivers ask for keyframes back through the
// requester the pipeline hands each sink (or, for one encode only, its encode requester); the pipeline
// merges and rate-limits those requests, each encode's on their own.
// Raw frames have one sink too: the pipeline's frame share (a zerohop::Publisher it owns on both
// data paths, written in place by the converter: host memory on the CPU path, VRAM on the GPU path).
//
// Thread-safety: deliver() is called from the pipeline's encode thread only, except VP8 units, which come
// from its VP8 thread (so a sink that wants VP8 takes deliver() from two threads); a sink's keyframe
// requests may come from any thread. Ownership: the pipeline owns (or shares) its sinks and destroys
// them after its threads have stopped.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

class ZEROHOP_API UnitSink {
 public:
  virtual ~UnitSink() = default;
  /// Takes one encoded unit (H.264: Annex B, SPS/PPS before every IDR; VP8 only when wantsCodec(kVP8)).
  /// Must not block: queue it, drop the oldest, or skip until the next keyframe.
  virtual void deliver(const EncodedUnitPtr& unit) = 0;
  /// Called once before the first deliver(). The sink calls `request` (non-blocking, from any
  /// thread) when its receiver needs a keyframe: one joined, sent PLI/FIR, or lost too much.
  virtual void setKeyframeRequester(std::function<void()> request) = 0;
  /// Called once before the first deliver(), after setKeyframeRequester(). A sink whose receivers each
  /// take one encode (the WHEP viewers: one rung of the ladder, or VP8) calls `request(codec, rung)`
  /// instead when one receiver needs a keyframe: the pipeline then forces one on that encode only (H.264
  /// rung `rung`, 0 the main encode; VP8: rung 0), each encode's requests merged and rate-limited on
  /// their own, so a receiver asking too much never costs the receivers of another encode a keyframe.
  /// Non-blocking, from any thread. A sink that ignores it asks through the requester above, which
  /// forces a keyframe on every running encode.
  virtual void setEncodeKeyframeRequester(std::function<void(PixelFormat codec, std::size_t rung)> request) {
    (void)request;
  }
  /// One line for the log: "WHEP viewers at http://127.0.0.1:8080/", "WHIP to https://...".
  virtual std::string describe() const = 0;
  /// One Opus packet of the stream's sound (48 kHz; `ptsNs` its first sample's capture instant, on the
  /// clock of the pictures' capture times), for a sink whose receivers take sound beside the picture
  /// (the WHEP viewers, WHIP, RTP/Janus, the NAME.opus share). Called from the sound's own encode thread (Pipeline::publishAudio),
  /// concurrently with deliver(); must not block. The default ignores it: a sink of pictures only.
  virtual void deliverAudio(const EncodedUnitPtr& opusPacket) { (void)opusPacket; }

  /// True while a receiver of this sink takes `codec`. Every sink takes H.264; the WHEP viewers also
  /// take VP8 (viewers whose offer has no usable H.264). The pipeline asks before every frame (from the
  /// encode thread: must be cheap and non-blocking), runs the VP8 encode only while some sink wants it,
  /// and hands VP8 units only to the sinks that want them.
  virtual bool wantsCodec(PixelFormat codec) const { return codec == PixelFormat::kH264; }
  /// Before the first deliver(), the pipeline says whether it can make `codec` (besides H.264): an
  /// empty `whyNot` means it can; otherwise why not, which a sink may tell its receivers (a WHEP offer
  /// with VP8 only is refused with that text).
  virtual void setCodecAvailability(PixelFormat codec, std::string whyNot) {
    (void)codec;
    (void)whyNot;
  }

  /// Before the first deliver(), the pipeline's ladder (rung 0 first); one rung or none: no ladder, only
  /// rung 0's units come. A sink that switches each receiver between rungs (the WHEP viewers) keeps it.
  virtual void setRenditions(const std::vector<Rendition>& ladder) { (void)ladder; }
  /// True while a receiver of this sink takes rung `rung`'s units. Every sink takes rung 0 (the main
  /// encode); the pipeline encodes a lower rung only while some sink wants it, and hands its units only
  /// to those sinks. Asked before every frame from the encode thread: cheap and non-blocking.
  virtual bool wantsRendition(std::size_t rung) const { return rung == 0; }
  /// The bitrate rung `rung`'s encode should run at now (kb/s; its receivers' weakest estimate within
  /// the rung's range); 0: leave it alone.
  virtual std::uint32_t renditionTargetKbps(std::size_t rung) const {
    (void)rung;
    return 0;
  }
};

}  // namespace zerohop
