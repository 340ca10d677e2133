#pragma once
// How one codec's encoded units become RTP in a sender's graph (send_graph.hpp): the payloader element
// and its settings, the appsrc caps it takes, the codec preferences that put the codec in the SDP, and
// how its packets mark the start of a keyframe. One strategy per codec (H.264: rtph264pay, VP8:
// rtpvp8pay); an audio track (Opus: rtpopuspay, "audio", 48000) or a second video rendition is one more
// strategy and one more track of the graph, with no branch on the codec anywhere else.
// Thread-safety: reentrant (a strategy is immutable).

#include <gst/gst.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "stream/video_offer.hpp"
#include "zerohop/codec.hpp"

namespace zerohop::stream {

class TrackPayloader {
 public:
  virtual ~TrackPayloader() = default;

  virtual Codec codec() const = 0;
  /// The GStreamer payloader element ("rtph264pay") and the package that installs it.
  virtual const char* element() const = 0;
  virtual const char* package() const = 0;
  /// The caps of what the appsrc in front of the payloader carries (one encoded unit per buffer).
  virtual const char* unitCaps() const = 0;
  /// The SDP's media kind ("video", "audio"), encoding name ("H264") and RTP clock rate.
  virtual const char* media() const = 0;
  virtual const char* encodingName() const = 0;
  virtual int clockRate() const = 0;
  /// Codec-specific settings of the payloader element (payload type and SSRC are the graph's).
  virtual void configure(GstElement* payloader) const = 0;
  /// Codec-specific fields of the transceiver's codec preferences (the answer's a=fmtp), for `choice`.
  virtual void addPreferences(GstCaps* preferences, const VideoChoice& choice) const = 0;
  /// Whether the RTP packet `buffer` (payload `payload`, `size` bytes) is the first of a keyframe.
  virtual bool keyframeStart(GstBuffer* buffer, const std::uint8_t* payload, std::size_t size) const = 0;
};

/// The strategy for `codec`. Throws Error(kUnsupported) for a codec no payloader is written for.
std::unique_ptr<TrackPayloader> trackPayloaderFor(Codec codec);

/// The strategy for an Opus track (RFC 7587: rtpopuspay, "audio", OPUS/48000/2) of `channels` (1 or
/// 2: the answer's sprop-stereo); codec() is kOpus.
std::unique_ptr<TrackPayloader> opusTrackPayloader(int channels = 1);

}  // namespace zerohop::stream
