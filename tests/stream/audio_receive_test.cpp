// Sound through WebRTC (issue 35): a StreamServer fed H.264 units and the Opus packets of the test tone
// (ToneSource -> OpusAudioEncoder, the code serve runs) sends both tracks to an in-process GStreamer
// viewer whose offer has audio and video, in one MediaStream; the viewer decodes the sound (opusdec) and
// it is the tone, not silence, and parses the picture's access units (h264parse, keyframes included). A
// viewer whose offer has no audio gets video only from the same server, one whose offer has no video the
// sound only. Runs on loopback only.

#include <gst/gst.h>
#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "audio/opus_encoder.hpp"
#include "audio/tone_source.hpp"
#include "audio_video_viewer.hpp"
#include "core/opus_toc.hpp"
#include "loopback_harness.hpp"
#include "zerohop/clock.hpp"

namespace zerohop::loopback {
namespace {

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
      audio::OpusSettings settings;
      settings.channels = channels_;
      audio::OpusAudioEncoder opus(settings);
      while (!stop_.load()) {
        auto block = tone.next(100ms);
        if (!block) continue;
        if (channels_ == 2) block = leftOnly(*block);
        for (audio::OpusPacket& p : opus.encode(*block)) {
          auto unit = std::make_shared<EncodedUnit>();
          unit->bytes = std::move(p.data);
          unit->ptsNs = p.captureNs;
          unit->keyframe = true;
          unit->sequence = p.sequence;
          const bool stereo = opusPacketChannels(unit->bytes.data(), unit->bytes.size()) == 2;
          server_->unnamedStream()->publishAudio(std::move(unit));
          published_ = true;
          if (stereo) publishedStereo_ = true;
        }
      }
    });
    // The stream has sound once its first packet was published (offers are answered with audio from then),
    // and is said to be stereo once a packet coded as stereo was (the server reads the channels from the
    // packets' TOC; libopus may code the first packets of a stereo input as mono: an offer answered right
    // after the first packet then lacked sprop-stereo, once in CI).
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    auto ready = [&] { return published_.load() && (channels_ != 2 || publishedStereo_.load()); };
    while (!ready() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    ASSERT_TRUE(published_.load()) << "the tone made no Opus packet in 5 s";
    ASSERT_TRUE(ready()) << "no Opus packet coded as stereo in 5 s";
  }
  void TearDown() override {
    stop_ = true;
    if (audio_.joinable()) audio_.join();
    server_.reset();
  }

  // The viewer's offer (audio and video) POSTed to /whep; the answer (201), or "" with a failure.
  // `path`: where (a query asks for options); `location`: the session's Location, when given.
  std::string postOffer(AudioVideoViewer& viewer, const std::string& path = "/whep",
                        std::string* location = nullptr) {
    const std::string offer = webrtcbin_sdp::localOffer(viewer.webrtc());
    EXPECT_NE(offer.find("m=audio"), std::string::npos) << offer;
    httplib::Client cli("127.0.0.1", server_->port());
    cli.set_read_timeout(10, 0);
    auto r = cli.Post(path, offer, "application/sdp");
    if (!r) {
      ADD_FAILURE() << httplib::to_string(r.error());
      return "";
    }
    if (r->status != 201) {
      ADD_FAILURE() << r->status << ": " << r->body;
      return "";
    }
    if (location) *location = r->get_header_value("Location");
    return r->body;
  }

  // The tone on the left, silence on the right: a stereo signal Opus cannot code as mono.
  static audio::AudioFrame leftOnly(const audio::AudioFrame& mono) {
    audio::AudioFrame stereo = mono;
    stereo.channels = 2;
    stereo.samples.assign(mono.samples.size() * 2, 0);
    for (std::size_t i = 0; i < mono.samples.size(); ++i) stereo.samples[2 * i] = mono.samples[i];
    return stereo;
  }

  std::uint32_t channels_ = 1;  // the tone's, set before SetUp()
  std::vector<EncodedUnitPtr> units_;
  std::unique_ptr<StreamServer> server_;
  std::unique_ptr<Publisher> publisher_;
  std::thread audio_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> published_{false};
  std::atomic<bool> publishedStereo_{false};
};

TEST_F(AudioReceive, OfferWithAudioGetsTheToneInTheSameStreamAndVideoStillArrives) {
  AudioVideoViewer viewer;
  const std::string answer = postOffer(viewer);
  ASSERT_FALSE(answer.empty());
  EXPECT_EQ(mLine(answer, "video").find("m=video 0 "), std::string::npos) << answer;
  ASSERT_NE(mLine(answer, "audio"), "") << answer;
  EXPECT_EQ(mLine(answer, "audio").find("m=audio 0 "), std::string::npos) << "audio rejected: " << answer;
  EXPECT_NE(answer.find("OPUS/48000/2"), std::string::npos) << answer;
  EXPECT_EQ(answer.find("sprop-stereo=1"), std::string::npos)
      << "a mono tone is not said to be stereo: " << answer;
  const std::set<std::string> streams = msidStreams(answer);
  EXPECT_EQ(streams.size(), 1u) << "both tracks in one MediaStream: " << answer;
  ASSERT_TRUE(webrtcbin_sdp::applyAnswer(viewer.webrtc(), answer)) << answer;

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

// POST /whep?lipsync=1 (the viewer page's ?lipsync=1): that viewer's playout delay lets its picture wait up
// to 200 ms for its sound (a browser lip-syncs by holding the earlier track back; 0,0 forbids holding the
// picture); a viewer beside it without it keeps 0,0; a value other than 1 or 0 is refused with the reason.
TEST_F(AudioReceive, ALipSyncViewersPictureMayWaitForItsSoundAndNoOtherViewersDoes) {
  AudioVideoViewer lip(true, /*offerPlayoutDelay=*/true), plain(true, /*offerPlayoutDelay=*/true);
  std::string lipAt, plainAt;
  const std::string lipAnswer = postOffer(lip, "/whep?lipsync=1", &lipAt);
  const std::string plainAnswer = postOffer(plain, "/whep", &plainAt);
  ASSERT_FALSE(lipAnswer.empty());
  ASSERT_FALSE(plainAnswer.empty());
  EXPECT_NE(lipAnswer.find(std::string(stream::kPlayoutDelayUri)), std::string::npos) << lipAnswer;
  ASSERT_TRUE(webrtcbin_sdp::applyAnswer(lip.webrtc(), lipAnswer)) << lipAnswer;
  ASSERT_TRUE(webrtcbin_sdp::applyAnswer(plain.webrtc(), plainAnswer)) << plainAnswer;
  auto delayOf = [&](const std::string& location) -> std::optional<std::pair<int, int>> {
    const std::string id = location.substr(location.rfind('/') + 1).substr(0, 8);
    for (const ViewerStats& v : server_->unnamedStream()->viewerStats()) {
      if (v.id == id && v.playoutDelayMaxMs >= 0) return std::pair{v.playoutDelayMinMs, v.playoutDelayMaxMs};
    }
    return std::nullopt;
  };
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  publisher_->publishWhile([&] {
    return (!delayOf(lipAt) || !delayOf(plainAt) || lip.videoUnits.load() < 10) &&
           std::chrono::steady_clock::now() < deadline;
  });
  const auto lipDelay = delayOf(lipAt), plainDelay = delayOf(plainAt);
  ASSERT_TRUE(lipDelay && plainDelay) << "no playout delay in /stats for the viewers";
  EXPECT_EQ(*lipDelay, (std::pair{0, 200})) << "the lip-sync viewer's picture may wait 200 ms for its sound";
  EXPECT_EQ(*plainDelay, (std::pair{0, 0})) << "another viewer's picture waits too";
  EXPECT_GE(lip.videoUnits.load(), 10) << "the lip-sync viewer's picture";

  httplib::Client cli("127.0.0.1", server_->port());
  auto bad = cli.Post("/whep?lipsync=yes", webrtcbin_sdp::localOffer(plain.webrtc()), "application/sdp");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("lipsync takes 1"), std::string::npos) << bad->body;
}

// abs-capture-time on the sound (offered in the audio section): each packet says when its sound was
// captured on the wall clock, 20 ms after the one before, and it arrives after that instant (so a
// receiver's capture-to-playout figure covers the sound too, as it does the picture).
TEST_F(AudioReceive, TheSoundCarriesItsCaptureTimeWhenOffered) {
  AudioVideoViewer viewer;
  const std::string answer = postOffer(viewer);
  ASSERT_FALSE(answer.empty());
  const std::string audio = mLine(answer, "audio");
  ASSERT_FALSE(audio.empty()) << answer;
  const std::string audioSection = answer.substr(answer.find(audio));
  EXPECT_NE(audioSection.find("a=extmap:5 " + std::string(stream::kAbsCaptureTimeUri)), std::string::npos)
      << answer;
  ASSERT_TRUE(webrtcbin_sdp::applyAnswer(viewer.webrtc(), answer)) << answer;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  publisher_->publishWhile(
      [&] { return viewer.audioCaptureTimes().size() < 25 && std::chrono::steady_clock::now() < deadline; });
  const auto times = viewer.audioCaptureTimes();
  ASSERT_GE(times.size(), 25u) << viewer.audioPackets.load() << " audio packets, " << times.size()
                               << " with abs-capture-time";
  int twentyMs = 0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const auto [captured, arrived] = times[i];
    EXPECT_LE(captured, arrived + 2'000'000) << "packet " << i << " captured after it arrived";
    EXPECT_GT(captured, arrived - 2'000'000'000)
        << "packet " << i << " captured more than 2 s before it arrived";
    if (i > 0 && std::llabs(captured - times[i - 1].first - 20'000'000) < 1'000'000) ++twentyMs;
  }
  EXPECT_GE(twentyMs, static_cast<int>(times.size()) * 9 / 10) << "consecutive packets 20 ms apart";
}

class StereoAudioReceive : public AudioReceive {
 protected:
  StereoAudioReceive() { channels_ = 2; }
};

// RFC 7587 §6.1: sprop-stereo=1 tells the viewer the sender likely sends stereo (a browser that asked
// for stereo=1 then plays both channels); the packets are stereo and decode at the viewer.
TEST_F(StereoAudioReceive, AStereoSourceIsAnsweredWithSpropStereoAndDecodes) {
  AudioVideoViewer viewer;
  const std::string answer = postOffer(viewer);
  ASSERT_FALSE(answer.empty());
  const std::string audio = answer.substr(answer.find("m=audio"));
  EXPECT_NE(audio.find("sprop-stereo=1"), std::string::npos) << answer;
  ASSERT_TRUE(webrtcbin_sdp::applyAnswer(viewer.webrtc(), answer)) << answer;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  publisher_->publishWhile(
      [&] { return viewer.decodedSamples.load() < 24'000 && std::chrono::steady_clock::now() < deadline; });
  ASSERT_GE(viewer.decodedSamples.load(), 24'000) << "Opus decoded at the viewer";
  EXPECT_GT(viewer.rms(), 1000.0) << "the tone, on one of two channels";
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

// An offer of sound alone (a page that asks for the microphone's sound only): the Opus track and nothing
// else, while the picture goes on being published; the viewer is outside congestion control and asks for
// no keyframes, and /stats shows it without a video codec.
TEST_F(AudioReceive, AnOfferOfSoundAloneGetsTheToneAndNoPicture) {
  AudioVideoViewer viewer(/*offerVideo=*/false);
  const std::string answer = postOffer(viewer);
  ASSERT_FALSE(answer.empty());
  EXPECT_EQ(mLine(answer, "video"), "") << answer;
  ASSERT_NE(mLine(answer, "audio"), "") << answer;
  EXPECT_EQ(mLine(answer, "audio").find("m=audio 0 "), std::string::npos) << "audio rejected: " << answer;
  ASSERT_TRUE(webrtcbin_sdp::applyAnswer(viewer.webrtc(), answer)) << answer;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  publisher_->publishWhile(
      [&] { return viewer.decodedSamples.load() < 24'000 && std::chrono::steady_clock::now() < deadline; });
  ASSERT_GE(viewer.decodedSamples.load(), 24'000)
      << "Opus decoded at the viewer (" << viewer.audioPackets.load() << " audio RTP packets)";
  EXPECT_GT(viewer.rms(), 2000.0) << "the decoded sound is the tone, not silence";
  EXPECT_EQ(viewer.videoPackets.load(), 0);
  const std::vector<ViewerStats> stats = server_->viewerStats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].codec, "none");
  EXPECT_TRUE(stats[0].connected);
  EXPECT_EQ(stats[0].rung, -1) << "no rendition: it receives no picture";
}

// A stream without sound cannot answer an offer of sound alone: 422, saying so (not "no m=video line").
TEST(AudioReceiveWithoutSound, AnOfferOfSoundAloneIsRefusedSayingTheStreamHasNoSound) {
  std::string missing;
  if (!(missing = missingLoopbackElement()).empty())
    GTEST_SKIP() << "GStreamer element " << missing << " is not installed";
  StreamConfig config;
  config.host = "127.0.0.1";
  config.port = 0;
  StreamServer server(config);
  AudioVideoViewer viewer(/*offerVideo=*/false);
  httplib::Client cli("127.0.0.1", server.port());
  cli.set_read_timeout(10, 0);
  auto r = cli.Post("/whep", webrtcbin_sdp::localOffer(viewer.webrtc()), "application/sdp");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("sound alone"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("no sound"), std::string::npos) << r->body;
  EXPECT_TRUE(server.viewerStats().empty());
}

}  // namespace
}  // namespace zerohop::loopback
