// Sound through WebRTC (issue 35): a StreamServer fed H.264 units and the Opus packets of the test tone
// (ToneSource -> OpusAudioEncoder, the code serve runs) sends both tracks to an in-process GStreamer
// viewer whose offer has audio and video, in one MediaStream; the viewer decodes the sound (opusdec) and
// it is the tone, not silence, and parses the picture's access units (h264parse, keyframes included). A viewer whose offer has no audio gets video
// only from the same server. Runs on loopback only.

#include <gst/gst.h>
#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "audio/opus_encoder.hpp"
#include "audio/tone_source.hpp"
#include "loopback_harness.hpp"
#include "zerohop/clock.hpp"

namespace zerohop::loopback {
namespace {

// A recvonly webrtcbin offering H.264 and Opus (video first, as browsers that add the video transceiver
// first do), decoding both.
class AudioVideoViewer {
 public:
  AudioVideoViewer() {
    pipeline_ = gst_pipeline_new("test-av-viewer");
    webrtc_ = gst_element_factory_make("webrtcbin", "recv");
    gst_bin_add(GST_BIN(pipeline_), webrtc_);
    gst_util_set_object_arg(G_OBJECT(webrtc_), "bundle-policy", "max-bundle");
    GstWebRTCICE* ice = nullptr;
    g_object_get(webrtc_, "ice-agent", &ice, nullptr);
    gboolean added = FALSE;
    g_signal_emit_by_name(ice, "add-local-ip-address", "127.0.0.1", &added);
    gst_object_unref(ice);
    for (const char* text :
         {"application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,"
          "packetization-mode=(string)1,profile-level-id=(string)42e01f,rtcp-fb-nack-pli=(boolean)true",
          "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,encoding-params=(string)2"}) {
      GstCaps* caps = gst_caps_from_string(text);
      GstWebRTCRTPTransceiver* trans = nullptr;
      g_signal_emit_by_name(webrtc_, "add-transceiver", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY, caps, &trans);
      gst_caps_unref(caps);
      if (trans) gst_object_unref(trans);
    }
    g_signal_connect(webrtc_, "pad-added", G_CALLBACK(onPadAdded), this);
    gst_element_set_state(pipeline_, GST_STATE_PLAYING);
  }
  ~AudioVideoViewer() {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    { std::lock_guard lock(mutex_); }  // orders the probes' last run before the members go (as LoopbackViewer)
    gst_object_unref(pipeline_);
  }
  GstElement* webrtc() const { return webrtc_; }

  std::atomic<int> videoUnits{0}, videoKeyframes{0};  // H.264 access units h264parse made of what came
  std::atomic<int> audioPackets{0}, videoPackets{0};  // RTP packets out of webrtcbin, per track
  std::atomic<long> decodedSamples{0};
  double rms() {
    std::lock_guard lock(mutex_);
    return squares_ > 0 && count_ > 0 ? std::sqrt(squares_ / static_cast<double>(count_)) : 0.0;
  }

 private:
  static void onPadAdded(GstElement*, GstPad* pad, gpointer data) {
    auto* self = static_cast<AudioVideoViewer*>(data);
    if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
    GstCaps* caps = gst_pad_get_current_caps(pad);
    if (!caps) caps = gst_pad_query_caps(pad, nullptr);
    const char* media = caps ? gst_structure_get_string(gst_caps_get_structure(caps, 0), "media") : nullptr;
    const bool audio = media && std::string(media) == "audio";
    if (caps) gst_caps_unref(caps);
    GstElement* bin = gst_parse_bin_from_description(
        audio ? "rtpopusdepay ! opusdec plc=true ! audioconvert ! audio/x-raw,format=S16LE ! fakesink name=out sync=false async=false"
              : "rtph264depay ! h264parse ! fakesink name=out sync=false async=false",
        TRUE, nullptr);
    gst_bin_add(GST_BIN(self->pipeline_), bin);
    gst_element_sync_state_with_parent(bin);
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, audio ? onAudioRtp : onVideoRtp, self, nullptr);
    GstPad* sink = gst_element_get_static_pad(bin, "sink");
    if (gst_pad_link(pad, sink) != GST_PAD_LINK_OK) ADD_FAILURE() << "gst_pad_link(webrtcbin src, decoder)";
    gst_object_unref(sink);
    GstElement* out = gst_bin_get_by_name(GST_BIN(bin), "out");
    GstPad* outPad = gst_element_get_static_pad(out, "sink");
    gst_pad_add_probe(outPad, GST_PAD_PROBE_TYPE_BUFFER, audio ? onPcm : onPicture, self, nullptr);
    gst_object_unref(outPad);
    gst_object_unref(out);
  }
  static GstPadProbeReturn onAudioRtp(GstPad*, GstPadProbeInfo*, gpointer data) {
    ++static_cast<AudioVideoViewer*>(data)->audioPackets;
    return GST_PAD_PROBE_OK;
  }
  static GstPadProbeReturn onVideoRtp(GstPad*, GstPadProbeInfo*, gpointer data) {
    ++static_cast<AudioVideoViewer*>(data)->videoPackets;
    return GST_PAD_PROBE_OK;
  }
  static GstPadProbeReturn onPicture(GstPad*, GstPadProbeInfo* info, gpointer data) {
    auto* self = static_cast<AudioVideoViewer*>(data);
    std::lock_guard lock(self->mutex_);
    ++self->videoUnits;
    if (!GST_BUFFER_FLAG_IS_SET(GST_PAD_PROBE_INFO_BUFFER(info), GST_BUFFER_FLAG_DELTA_UNIT)) ++self->videoKeyframes;
    return GST_PAD_PROBE_OK;
  }
  static GstPadProbeReturn onPcm(GstPad*, GstPadProbeInfo* info, gpointer data) {
    auto* self = static_cast<AudioVideoViewer*>(data);
    GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMapInfo map;
    if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return GST_PAD_PROBE_OK;
    std::lock_guard lock(self->mutex_);
    const auto* s = reinterpret_cast<const std::int16_t*>(map.data);
    const std::size_t n = map.size / 2;
    for (std::size_t i = 0; i < n; ++i) self->squares_ += static_cast<double>(s[i]) * s[i];
    self->count_ += n;
    self->decodedSamples += static_cast<long>(n);
    gst_buffer_unmap(buffer, &map);
    return GST_PAD_PROBE_OK;
  }

  GstElement* pipeline_ = nullptr;
  GstElement* webrtc_ = nullptr;
  std::mutex mutex_;
  double squares_ = 0;
  std::size_t count_ = 0;
};

// The stream ids of the answer's a=msid lines (a=msid:<stream> <track>, or a=ssrc:<n> msid:<stream> <track>).
std::set<std::string> msidStreams(const std::string& sdp) {
  std::set<std::string> out;
  for (const std::string key : {"a=msid:", " msid:"}) {
    for (std::size_t at = sdp.find(key); at != std::string::npos; at = sdp.find(key, at + 1)) {
      const std::size_t start = at + key.size();
      out.insert(sdp.substr(start, sdp.find_first_of(" \r\n", start) - start));
    }
  }
  return out;
}

// The m= line of the answer's `kind` section ("" when there is none).
std::string mLine(const std::string& sdp, const std::string& kind) {
  const std::size_t at = sdp.find("m=" + kind + " ");
  if (at == std::string::npos) return {};
  return sdp.substr(at, sdp.find_first_of("\r\n", at) - at);
}

class AudioReceive : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string missing;
    if (!(missing = missingLoopbackElement()).empty() ||
        !haveElements({"opusdec", "rtpopusdepay", "rtpopuspay", "audioconvert"}, missing))
      GTEST_SKIP() << "GStreamer element " << missing << " is not installed (scripts/install-deps.sh)";
    units_ = encodeTestUnits(90);
    ASSERT_EQ(units_.size(), 90u);
    StreamConfig config;
    config.host = "127.0.0.1";
    config.port = 0;
    server_ = std::make_unique<StreamServer>(config);
    publisher_ = std::make_unique<Publisher>(*server_, units_);
    // The sound, as serve makes it: the test tone in 10 ms blocks, one Opus encode, 20 ms packets.
    audio_ = std::thread([this] {
      audio::ToneSource tone;
      audio::OpusAudioEncoder opus(audio::OpusSettings{});
      while (!stop_.load()) {
        auto block = tone.next(100ms);
        if (!block) continue;
        for (audio::OpusPacket& p : opus.encode(*block)) {
          auto unit = std::make_shared<EncodedUnit>();
          unit->bytes = std::move(p.data);
          unit->ptsNs = p.captureNs;
          unit->keyframe = true;
          unit->sequence = p.sequence;
          server_->publishAudio(std::move(unit));
          published_ = true;
        }
      }
    });
    // The stream has sound once its first packet was published (offers are answered with audio from then).
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!published_.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    ASSERT_TRUE(published_.load()) << "the tone made no Opus packet in 5 s";
  }
  void TearDown() override {
    stop_ = true;
    if (audio_.joinable()) audio_.join();
    server_.reset();
  }

  std::vector<EncodedUnitPtr> units_;
  std::unique_ptr<StreamServer> server_;
  std::unique_ptr<Publisher> publisher_;
  std::thread audio_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> published_{false};
};

TEST_F(AudioReceive, OfferWithAudioGetsTheToneInTheSameStreamAndVideoStillArrives) {
  AudioVideoViewer viewer;
  const std::string offer = offerOf(viewer.webrtc());
  ASSERT_NE(offer.find("m=audio"), std::string::npos) << offer;
  httplib::Client cli("127.0.0.1", server_->port());
  cli.set_read_timeout(10, 0);
  auto r = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string answer = r->body;
  EXPECT_EQ(mLine(answer, "video").find("m=video 0 "), std::string::npos) << answer;
  ASSERT_NE(mLine(answer, "audio"), "") << answer;
  EXPECT_EQ(mLine(answer, "audio").find("m=audio 0 "), std::string::npos) << "audio rejected: " << answer;
  EXPECT_NE(answer.find("OPUS/48000/2"), std::string::npos) << answer;
  const std::set<std::string> streams = msidStreams(answer);
  EXPECT_EQ(streams.size(), 1u) << "both tracks in one MediaStream: " << answer;
  ASSERT_TRUE(applyAnswerTo(viewer.webrtc(), answer)) << answer;

  // Half a second of sound decoded (24000 samples or more: opusdec may output stereo) and 10 H.264 access
  // units parsed (the loopback tests' check of the picture); at most 20 s on a busy box.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  publisher_->publishWhile([&] {
    return (viewer.decodedSamples.load() < 24'000 || viewer.videoUnits.load() < 10) &&
           std::chrono::steady_clock::now() < deadline;
  });
  EXPECT_GE(viewer.videoUnits.load(), 10) << "video arrives whole beside the audio (" << viewer.videoPackets.load()
                                          << " video and " << viewer.audioPackets.load() << " audio RTP packets)";
  EXPECT_GE(viewer.videoKeyframes.load(), 1);
  ASSERT_GE(viewer.decodedSamples.load(), 24'000) << "Opus decoded at the viewer";
  // The tone is a sine at a quarter of full scale (RMS ~5800) with clicks; silence or PLC noise is far below.
  EXPECT_GT(viewer.rms(), 2000.0) << "the decoded sound is the tone, not silence";
  EXPECT_GT(server_->audioSent().units, 0u);
}

TEST_F(AudioReceive, OfferWithoutAudioGetsVideoOnly) {
  LoopbackViewer viewer;  // offers H.264 only
  ASSERT_TRUE(connectOverWhep(viewer, *server_));
  EXPECT_EQ(viewer.answerSdp.find("m=audio"), std::string::npos) << viewer.answerSdp;
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  publisher_->publishWhile([&] { return viewer.receivedUnits < 10 && std::chrono::steady_clock::now() < deadline; });
  EXPECT_GE(viewer.receivedUnits.load(), 10);
  EXPECT_EQ(server_->audioSent().units, 0u) << "no viewer takes audio";
}

}  // namespace
}  // namespace zerohop::loopback
