// VP8 viewers on loopback: a webrtcbin that offers VP8 only (as Firefox ESR without OpenH264 does)
// negotiates with StreamServer over WHEP once the stream says it can send VP8, receives rtpvp8pay's
// RTP of real VP8 frames and decodes them with vp8dec; an H.264 viewer watching at the same time gets
// H.264 only. Before the stream can send VP8, the same offer is refused 422 with a text that names
// what it offered and what the server sends.

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "loopback_harness.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using namespace loopback;

class Vp8Receive : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string missing = missingLoopbackElement();
    if (missing.empty()) haveElements({"vp8enc", "vp8dec", "rtpvp8pay", "rtpvp8depay"}, missing);
    if (!missing.empty()) GTEST_SKIP() << "GStreamer element " << missing << " is not installed (scripts/install-deps.sh)";
    h264_ = encodeTestUnits(60);
    vp8_ = encodeTestUnits(60, Codec::kVP8);
    ASSERT_EQ(vp8_.size(), 60u);
    ASSERT_TRUE(vp8_[0]->keyframe);
    StreamConfig config;
    config.port = 0;
    server_ = std::make_unique<StreamServer>(config);
  }
  void TearDown() override {
    viewers_.clear();
    server_.reset();
  }

  // Publishes frame i of both encodes every 33 ms while `more()`; VP8 only while a viewer wants it, as
  // the pipeline does.
  template <typename More>
  void publishWhile(More more) {
    for (std::size_t i = 0; more(); i = (i + 1) % vp8_.size()) {
      server_->unnamedStream()->deliver(h264_[i]);
      if (server_->unnamedStream()->wants(TrackKey{Codec::kVP8})) server_->unnamedStream()->deliver(vp8_[i]);
      std::this_thread::sleep_for(33ms);
    }
  }

  std::vector<EncodedUnitPtr> h264_, vp8_;
  std::unique_ptr<StreamServer> server_;
  std::vector<std::unique_ptr<LoopbackViewer>> viewers_;
};

TEST_F(Vp8Receive, Vp8OnlyOfferIsRefusedWithWhatItOfferedUntilTheStreamCanSendVp8) {
  LoopbackViewer viewer(false, Codec::kVP8);
  const std::string offer = viewer.createOffer();
  httplib::Client cli("127.0.0.1", server_->port());
  cli.set_read_timeout(10, 0);
  auto r = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  EXPECT_NE(r->body.find("it has no usable H.264 (it offers VP8"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("H.264 Constrained Baseline"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("VP8 is not available"), std::string::npos) << r->body;

  SinkSetup passthrough;
  passthrough.unavailable.push_back({Codec::kVP8, "the camera's H.264 is passed through undecoded"});
  server_->unnamedStream()->attach(passthrough);
  r = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  EXPECT_NE(r->body.find("the camera's H.264 is passed through undecoded"), std::string::npos) << r->body;
  EXPECT_EQ(server_->viewerCount(), 0u);
}

TEST_F(Vp8Receive, Vp8ViewerDecodesVp8WhileAnH264ViewerGetsH264) {
  server_->unnamedStream()->attach(SinkSetup{});  // every codec can be had
  EXPECT_FALSE(server_->unnamedStream()->wants(TrackKey{Codec::kVP8}));
  viewers_.push_back(std::make_unique<LoopbackViewer>(false, Codec::kVP8));
  LoopbackViewer& vp8 = *viewers_.back();
  ASSERT_TRUE(connectOverWhep(vp8, *server_));
  EXPECT_NE(vp8.answerSdp.find("VP8/90000"), std::string::npos) << vp8.answerSdp;
  EXPECT_EQ(vp8.answerSdp.find("H264"), std::string::npos) << vp8.answerSdp;
  EXPECT_TRUE(server_->unnamedStream()->wants(TrackKey{Codec::kVP8}))
      << "a VP8 viewer exists: the VP8 encode must run";
  viewers_.push_back(std::make_unique<LoopbackViewer>());
  LoopbackViewer& h264 = *viewers_.back();
  ASSERT_TRUE(connectOverWhep(h264, *server_));

  const auto deadline = std::chrono::steady_clock::now() + 15s;
  publishWhile([&] {
    return (vp8.decodedFrames < 30 || h264.receivedUnits < 30) && std::chrono::steady_clock::now() < deadline;
  });
  EXPECT_GE(vp8.decodedFrames.load(), 30) << "vp8dec decoded too few pictures";
  EXPECT_EQ(vp8.decodedWidth.load(), 320);
  EXPECT_TRUE(vp8.firstWasKeyframe.load()) << "a joining VP8 viewer must receive nothing before a keyframe";
  EXPECT_GE(h264.receivedUnits.load(), 30);
  EXPECT_EQ(h264.width.load(), 320) << "the H.264 viewer's h264parse did not read an SPS";

  const auto stats = server_->viewerStats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].codec, "VP8");
  EXPECT_EQ(stats[1].codec, "H264");

  // The last VP8 viewer leaves (DELETE): nobody wants VP8 any more, so the pipeline stops its encode.
  httplib::Client cli("127.0.0.1", server_->port());
  auto r = cli.Delete(vp8.location);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(server_->unnamedStream()->wants(TrackKey{Codec::kVP8}));
}

}  // namespace
}  // namespace zerohop
