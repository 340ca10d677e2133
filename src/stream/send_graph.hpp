#pragma once
// A sender's GStreamer graph, built and owned: one pipeline with, per track, appsrc -> payloader ->
// webrtcbin's sink pad (its transceiver: sendonly, NACK on, codec preferences that put the codec, our
// SSRC and the RTP header extensions in the SDP), webrtcbin set up for ICE (bundle, STUN/TURN, loopback,
// the UDP port range). One video track whose payloader is the codec's strategy (track_payloader.hpp)
// and, when the choice has audio (VideoChoice::audio), one Opus track beside it in the same
// MediaStream (one msid on both webrtcbin pads, so a browser lip-syncs them). Both appsrcs are stamped
// from the capture clock, so both tracks' RTP timestamps and sender reports share it. A viewer of the
// sound alone (VideoChoice::hasVideo() false) gets the Opus track only.
// Simulcast (VideoChoice::simulcastRids, a WHIP offer): the video track is one appsrc -> payloader per
// layer, each with its own SSRC and the mid and rid header extensions, merged by an rtpfunnel into the
// transceiver's one sink pad; the codec preferences carry the a=rid and a=simulcast lines.
// Nothing here reacts to anything: the session (viewer_session.hpp) connects the signals and probes
// it needs, then calls play().
// Thread-safety: thread-bound to its owner; the elements it hands out are GStreamer's (thread-safe).

#include <gst/gst.h>
#include <gst/rtp/gstrtphdrext.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stream/gst_handles.hpp"
#include "stream/rtp_extension_payloads.hpp"
#include "stream/simulcast_sdp.hpp"
#include "stream/track_payloader.hpp"
#include "stream/video_offer.hpp"

namespace zerohop::stream {

/// A session's ICE servers and ports, as webrtcbin takes them (built by ice_servers.hpp's IceServers).
struct SessionIce {
  std::string stunServer;                ///< "stun-server", or empty
  std::vector<std::string> turnServers;  ///< one "add-turn-server" each
  std::uint16_t minPort = 0;             ///< UDP ports of the host candidates; 0, 0: any
  std::uint16_t maxPort = 0;
};

/// What the sender writes besides the media: the RTP header extensions the offer has and we send
/// (VideoChoice::extensions: playout-delay with these bounds, abs-capture-time, transport-wide-cc).
struct SendOptions {
  PlayoutDelay playoutDelay;  ///< 0/0: render each frame as soon as it is decoded
  bool omitPlayoutDelay;      ///< true: the extension is left out of the answer even when offered
};

class SendGraph {
 public:
  /// Builds the graph for `choice` (its codec picks the payloader). `name` names the pipeline;
  /// `loopbackIce`: gather ICE candidates on 127.0.0.1 too. Throws Error(kUnavailable) when an element
  /// is missing, Error(kInvalidArgument) when webrtcbin refuses a TURN server, Error(kUnsupported) for a
  /// codec without a payloader.
  SendGraph(const std::string& name, const VideoChoice& choice, bool loopbackIce, const SessionIce& ice,
            const SendOptions& send);
  /// Stops the pipeline (NULL) if it still runs; must not run on one of its streaming threads.
  ~SendGraph();
  SendGraph(const SendGraph&) = delete;
  SendGraph& operator=(const SendGraph&) = delete;

  /// PLAYING. Throws Error(kUnavailable) when the pipeline does not start.
  void play();
  /// NULL: every streaming thread of the graph has stopped when this returns.
  void stop();

  GstElement* pipeline() const { return pipeline_.get(); }
  /// The video track's appsrc, null for a viewer of the sound alone.
  GstElement* appsrc() const { return appsrc_; }
  /// The Opus track's appsrc (one Opus packet a buffer), null without audio.
  GstElement* audioAppsrc() const { return audioAppsrc_; }
  /// The audio track's SSRC, 0 without audio.
  std::uint32_t audioSsrc() const { return audioSsrc_; }
  GstElement* webrtc() const { return webrtc_; }
  /// The video payloader's src pad (every RTP packet of the track before webrtcbin); without video,
  /// the Opus payloader's.
  GstPad* payloaderSrc() const { return payloaderSrc_.get(); }
  /// The video track's payloader strategy, null without video.
  const TrackPayloader* payloader() const { return payloader_.get(); }
  /// The video SSRC (the answer's a=ssrc), fixed before any media flows; 0 without video. With
  /// simulcast, layer 0's.
  std::uint32_t ssrc() const { return ssrc_; }
  /// With simulcast: the ids of the mid, rid and repaired-rid extensions in the offer; zeros without.
  const SimulcastExtensionIds& simulcastIds() const { return simulcastIds_; }
  /// Simulcast layers of the video track (VideoChoice::simulcastRids.size()); 1 without simulcast.
  std::size_t layers() const { return layerAppsrcs_.size() + 1; }
  /// Layer `layer`'s appsrc (0: appsrc()) and SSRC; `layer` < layers().
  GstElement* layerAppsrc(std::size_t layer) const {
    return layer == 0 ? appsrc_ : layerAppsrcs_.at(layer - 1);
  }
  std::uint32_t layerSsrc(std::size_t layer) const { return layer == 0 ? ssrc_ : layerSsrcs_.at(layer - 1); }
  /// With simulcast: `mid` (the video section's, known once the offer is made) written into every
  /// layer's packets from now on (webrtcbin 1.22 writes no mid extension into what its sink pad gets).
  void writeMid(const std::string& mid);
  /// STUN or TURN servers were given.
  bool stunOrTurn() const { return stunOrTurn_; }
  /// The payloader's playout-delay extension when negotiated, else null.
  GstRTPHeaderExtension* playoutDelayExtension() const { return playoutDelayExt_.get(); }

 private:
  void configureIce(bool loopbackIce, const SessionIce& ice);
  void addVideoTrack(const VideoChoice& choice, const SendOptions& send);
  void addAudioTrack(const AudioChoice& audio);
  /// A simulcast layer's mid and rid extensions on `pay` (its rid `rid`), their a=extmap in `prefs`.
  void addSimulcastExtensions(GstElement* pay, GstCaps* prefs, const SimulcastExtensionIds& ids,
                              const std::string& rid);

  std::unique_ptr<TrackPayloader> payloader_;
  GstPtr<GstElement> pipeline_;
  GstElement* appsrc_ = nullptr;  // borrowed from pipeline_
  GstElement* webrtc_ = nullptr;  // borrowed from pipeline_
  GstElement* audioAppsrc_ = nullptr;  // borrowed from pipeline_
  std::unique_ptr<TrackPayloader> audioPayloader_;
  std::uint32_t audioSsrc_ = 0;
  GstPtr<GstPad> videoSinkPad_;  // webrtcbin's pad of the video track (its msid set with audio)
  GstPtr<GstPad> payloaderSrc_;
  std::uint32_t ssrc_ = 0;
  bool stunOrTurn_ = false;
  GstPtr<GstRTPHeaderExtension> playoutDelayExt_;
  std::vector<GstElement*> layerAppsrcs_;  // simulcast layers 1.. (borrowed from pipeline_)
  std::vector<std::uint32_t> layerSsrcs_;
  std::vector<GstPtr<GstRTPHeaderExtension>> midExtensions_;  // one per simulcast layer
  GstPtr<GstWebRTCRTPTransceiver> videoTransceiver_;
  SimulcastExtensionIds simulcastIds_;
};

}  // namespace zerohop::stream
