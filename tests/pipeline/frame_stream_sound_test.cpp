// FrameStream with sound (FrameStreamConfig::audioChannels): a program's frames and its PCM (a 1 kHz sine
// at a quarter of full scale, pushed in 10 ms blocks stamped on the capture clock) reach an in-process
// GStreamer viewer whose offer has audio and video. The viewer connects before any sound was pushed (the
// stream has sound from the start), gets both tracks in one MediaStream, decodes the Opus, and it is the
// sine, not silence. A stream without sound refuses pushAudio, saying how to get one. Loopback only.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numbers>
#include <set>
#include <thread>
#include <vector>

#include "audio_video_viewer.hpp"
#include "loopback_harness.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/frame_stream.hpp"

namespace zerohop::loopback {
namespace {

using namespace std::chrono_literals;

FrameStreamConfig smallStream(std::uint32_t audioChannels) {
  FrameStreamConfig c;
  c.format = PixelFormat::kNV12;
  c.width = 320;
  c.height = 240;
  c.fps = 30;
  c.gpu = "off";
  c.encoder.encoder = "x264";
  c.stream.host = "127.0.0.1";
  c.stream.port = 0;
  c.audioChannels = audioChannels;
  return c;
}

void pushFrame(FrameStream& stream, std::uint64_t n) {
  InputSlot slot = stream.input().acquireWrite();
  Frame& f = slot.frame();
  for (std::uint32_t y = 0; y < f.height; ++y) std::memset(f.data[0] + y * f.pitch[0], static_cast<int>(y + 3 * n), f.width);
  for (std::uint32_t y = 0; y < f.height / 2; ++y) std::memset(f.data[1] + y * f.pitch[1], 128, f.width);
  Frame meta;
  meta.sequence = n;
  meta.times.mark(Stage::kCapture, monotonicNs());
  stream.input().commit(std::move(slot), meta);
}

TEST(FrameStreamSound, AProgramsPcmReachesAViewerBesideItsFrames) {
  std::string missing;
  if (!(missing = missingLoopbackElement()).empty() ||
      !haveElements({"opusdec", "rtpopusdepay", "rtpopuspay", "audioconvert"}, missing))
    GTEST_SKIP() << "GStreamer element " << missing << " is not installed (scripts/install-deps.sh)";
  FrameStream stream(smallStream(1));

  AudioVideoViewer viewer;
  const std::string offer = webrtcbin_sdp::localOffer(viewer.webrtc());
  httplib::Client cli("127.0.0.1", static_cast<int>(std::stoi(stream.url().substr(stream.url().rfind(':') + 1))));
  cli.set_read_timeout(10, 0);
  auto r = cli.Post("/whep", offer, "application/sdp");  // before any sound was pushed
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  ASSERT_EQ(r->status, 201) << r->body;
  ASSERT_NE(mLine(r->body, "audio"), "") << r->body;
  EXPECT_EQ(mLine(r->body, "audio").find("m=audio 0 "), std::string::npos) << "audio rejected: " << r->body;
  EXPECT_EQ(msidStreams(r->body).size(), 1u) << "both tracks in one MediaStream: " << r->body;
  ASSERT_TRUE(webrtcbin_sdp::applyAnswer(viewer.webrtc(), r->body)) << r->body;

  // The program's sound: 10 ms blocks of a 1 kHz sine, each stamped with its first sample's instant.
  std::atomic<bool> stop{false};
  std::thread sound([&] {
    const std::int64_t origin = monotonicNs();
    std::vector<std::int16_t> block(480);
    for (std::int64_t b = 0; !stop.load(); ++b) {
      for (std::size_t i = 0; i < block.size(); ++i) {
        const double t = static_cast<double>(b * 480 + static_cast<std::int64_t>(i)) / 48000.0;
        block[i] = static_cast<std::int16_t>(8192 * std::sin(2 * std::numbers::pi * 1000 * t));
      }
      stream.pushAudio(block.data(), block.size(), origin + b * 10'000'000);
      std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(origin + (b + 1) * 10'000'000)));
    }
  });
  // Half a second of sound decoded and 10 pictures, at most 20 s on a busy box.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (std::uint64_t n = 1; (viewer.decodedSamples.load() < 24'000 || viewer.videoUnits.load() < 10) &&
                            std::chrono::steady_clock::now() < deadline;
       ++n) {
    pushFrame(stream, n);
    std::this_thread::sleep_for(33ms);  // the frame interval (pacing)
  }
  stop = true;
  sound.join();
  EXPECT_GE(viewer.videoUnits.load(), 10) << "the pictures beside the sound";
  ASSERT_GE(viewer.decodedSamples.load(), 24'000) << "Opus decoded at the viewer (" << viewer.audioPackets.load()
                                                  << " audio RTP packets)";
  // A sine at a quarter of full scale has an RMS of ~5800; silence or concealment noise is far below.
  EXPECT_GT(viewer.rms(), 2000.0) << "the decoded sound is the program's sine, not silence";
  EXPECT_FALSE(stream.failure()) << stream.failure()->what();
}

TEST(FrameStreamSound, AStreamWithoutSoundRefusesPcmSayingHow) {
  FrameStream stream(smallStream(0));
  std::vector<std::int16_t> block(480, 0);
  try {
    stream.pushAudio(block.data(), block.size());
    ADD_FAILURE() << "pushAudio was taken by a stream without sound";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("audioChannels"), std::string::npos) << e.what();
  }
  FrameStream withSound(smallStream(2));
  EXPECT_THROW(withSound.pushAudio(nullptr, 480), Error);
  EXPECT_THROW(withSound.pushAudio(block.data(), 0), Error);
  std::vector<std::int16_t> tooLong(2 * 48'001, 0);
  EXPECT_THROW(withSound.pushAudio(tooLong.data(), 48'001), Error) << "more than a second in one block";
  EXPECT_NO_THROW(withSound.pushAudio(block.data(), 240)) << "240 stereo sample frames: 5 ms";
}

}  // namespace
}  // namespace zerohop::loopback
