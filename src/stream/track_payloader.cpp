#include "stream/track_payloader.hpp"

#include <string>

#include "stream/retransmission_budget.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

class H264Payloader final : public TrackPayloader {
 public:
  Codec codec() const override { return Codec::kH264; }
  const char* element() const override { return "rtph264pay"; }
  const char* package() const override { return "gstreamer1.0-plugins-good"; }
  const char* unitCaps() const override { return "video/x-h264,stream-format=byte-stream,alignment=au"; }
  const char* media() const override { return "video"; }
  const char* encodingName() const override { return "H264"; }
  int clockRate() const override { return 90000; }
  void configure(GstElement* pay) const override {
    g_object_set(pay, "config-interval", -1, nullptr);
    gst_util_set_object_arg(G_OBJECT(pay), "aggregate-mode", "zero-latency");
  }
  void addPreferences(GstCaps* prefs, const VideoChoice& choice) const override {
    // RFC 6184 §8.2.2: the answer keeps the offered profile; its level is the level the answerer receives
    // (with level-asymmetry-allowed=1 in both) or at most the offer's (without). We receive no video, so
    // the offered id is the honest answer either way, and level-asymmetry-allowed=1 is echoed when offered.
    // The level we send is the offerer's receive level by §8.1; when the stream's is higher
    // (choice.levelCovered false) the viewer was told nothing else in SDP: /stats and the log say it.
    gst_caps_set_simple(prefs, "packetization-mode", G_TYPE_STRING, "1", "profile-level-id", G_TYPE_STRING,
                        choice.profileLevelId.c_str(), nullptr);
    if (choice.levelAsymmetryAllowed) gst_caps_set_simple(prefs, "level-asymmetry-allowed", G_TYPE_STRING, "1", nullptr);
  }
  // rtph264pay leaves DELTA_UNIT off the first packet of a keyframe and sets it on every other one (our
  // appsrc flags delta units).
  bool keyframeStart(GstBuffer* buffer, const std::uint8_t*, std::size_t) const override {
    return !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  }
};

class Vp8Payloader final : public TrackPayloader {
 public:
  Codec codec() const override { return Codec::kVP8; }
  const char* element() const override { return "rtpvp8pay"; }
  const char* package() const override { return "gstreamer1.0-plugins-good"; }
  const char* unitCaps() const override { return "video/x-vp8"; }
  const char* media() const override { return "video"; }
  const char* encodingName() const override { return "VP8"; }
  int clockRate() const override { return 90000; }
  void configure(GstElement* pay) const override {
    // The 15-bit PictureID (RFC 7741 §4.2) that browsers' VP8 receivers use to tell lost frames apart.
    gst_util_set_object_arg(G_OBJECT(pay), "picture-id-mode", "15-bit");
  }
  void addPreferences(GstCaps*, const VideoChoice&) const override {}
  // rtpvp8pay sets no DELTA_UNIT flag: its payload header says it.
  bool keyframeStart(GstBuffer*, const std::uint8_t* payload, std::size_t size) const override {
    return isVp8KeyframeStart(payload, size);
  }
};

class OpusPayloader final : public TrackPayloader {
 public:
  explicit OpusPayloader(int channels) : stereo_(channels == 2) {}
  Codec codec() const override { return Codec::kOpus; }
  const char* element() const override { return "rtpopuspay"; }
  const char* package() const override { return "gstreamer1.0-plugins-good"; }
  // rtpopuspay says sprop-stereo (RFC 7587 §6.1: the sender's likely channel count) from these caps.
  const char* unitCaps() const override {
    return stereo_ ? "audio/x-opus,channel-mapping-family=(int)0,rate=(int)48000,channels=(int)2"
                   : "audio/x-opus,channel-mapping-family=(int)0,rate=(int)48000,channels=(int)1";
  }
  const char* media() const override { return "audio"; }
  const char* encodingName() const override { return "OPUS"; }
  int clockRate() const override { return 48000; }
  void configure(GstElement*) const override {}
  // RFC 7587 §7: the receiver may decode in-band FEC (our encoder sends it when viewers report loss).
  // sprop-stereo here too, not only from rtpopuspay's caps: those exist once the appsrc's task has
  // negotiated, which an answer made before it did missed (StereoAudioReceive, twice in CI runs).
  void addPreferences(GstCaps* prefs, const VideoChoice&) const override {
    gst_caps_set_simple(prefs, "encoding-params", G_TYPE_STRING, "2", "minptime", G_TYPE_STRING, "10",
                        "useinbandfec", G_TYPE_STRING, "1", nullptr);
    if (stereo_) gst_caps_set_simple(prefs, "sprop-stereo", G_TYPE_STRING, "1", nullptr);
  }
  // Every Opus packet decodes on its own.
  bool keyframeStart(GstBuffer*, const std::uint8_t*, std::size_t) const override { return true; }

 private:
  bool stereo_;
};

}  // namespace

std::unique_ptr<TrackPayloader> opusTrackPayloader(int channels) {
  return std::make_unique<OpusPayloader>(channels);
}

std::unique_ptr<TrackPayloader> trackPayloaderFor(Codec codec) {
  switch (codec) {
    case Codec::kH264:
      return std::make_unique<H264Payloader>();
    case Codec::kVP8:
      return std::make_unique<Vp8Payloader>();
    case Codec::kOpus:
      return std::make_unique<OpusPayloader>(1);
    default:
      break;
  }
  throw Error(Errc::kUnsupported, "no RTP payloader for the codec " + std::string(codecName(codec)) +
                                      ": a sender takes H.264 or VP8 (choose one of them in the offer)");
}

}  // namespace zerohop::stream
