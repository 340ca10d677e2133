// The serve pipeline with an H.264 camera (run under zerohop-camemu --format h264 by CTest): the
// camera's access units go out with no decode and no encode (the pipeline names no encoder, stages
// convert/encode never happen), every IDR on NAME.h264 carries SPS/PPS even when the camera sends them
// only once, and keyframe requests reach the camera where it has the control (and are counted only then).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "emulator_env.hpp"
#include "encode/annexb.hpp"
#include "encode/h264_test_decoder.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/pipeline.hpp"
#include "zerohop/share.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using testing::asFrame;
using testing::H264TestDecoder;

PipelineConfig passthroughConfig(const std::string& share) {
  PipelineConfig c;
  c.source = parseSourceSpec("v4l2:" + test::emulatedDevice() + "?format=h264&size=640x480&fps=30");
  c.stream.port = 0;  // the kernel's choice
  c.shareName = share;
  return c;
}

std::string uniqueShareName() { return "zh-passthrough-" + std::to_string(::getpid()); }

bool keyframeControlOn() {
  const char* v = std::getenv("ZEROHOP_CAMEMU_KEYFRAME_CONTROL");
  return !v || std::string(v) != "0";
}

TEST(PipelinePassthrough, CameraH264IsSentWithoutEncoderAndIdrsCarryParameterSets) {
  ZEROHOP_REQUIRE_EMULATOR("");
  const std::string share = uniqueShareName();
  PipelineConfig config = passthroughConfig(share);
  StreamServer server(config.stream);  // the viewers' server: the pipeline binds no port
  config.viewers = server.unnamedStream();
  Pipeline pipeline(config);
  pipeline.start();
  Subscriber units(share + ".h264");
  int idrs = 0, seen = 0;
  const std::int64_t end = monotonicNs() + 2'500'000'000;  // an IDR a second, plus the one asked for at start
  while (monotonicNs() < end) {
    auto f = units.next(500ms);
    if (!f) continue;
    ++seen;
    const auto types = encode::nalTypes(f->frame().data[0], f->frame().bytesUsed);
    ASSERT_FALSE(types.empty()) << "access unit " << f->frame().sequence << " is not Annex B";
    if (encode::containsIdr(f->frame().data[0], f->frame().bytesUsed)) {
      ++idrs;
      EXPECT_TRUE(f->frame().keyframe);
      EXPECT_NE(std::find(types.begin(), types.end(), encode::kNalSps), types.end()) << "IDR without SPS";
      EXPECT_NE(std::find(types.begin(), types.end(), encode::kNalPps), types.end()) << "IDR without PPS";
    }
    ASSERT_TRUE(f->valid());
  }
  EXPECT_GE(idrs, 3) << seen << " access units read";
  const auto stats = nlohmann::json::parse(pipeline.statsJson());
  pipeline.stop();
  EXPECT_NE(stats["encoder"].get<std::string>().find("passthrough"), std::string::npos) << stats.dump();
  EXPECT_GT(stats["frames"].get<std::uint64_t>(), 60u);
  EXPECT_FALSE(stats["stages"].contains("encode")) << stats.dump();
  EXPECT_FALSE(stats["stages"].contains("convert")) << stats.dump();
  EXPECT_TRUE(stats["stages"].contains("send")) << stats.dump();
  EXPECT_GT(stats["total"]["samples"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(stats["share_readers"].get<int>(), 1) << "the NAME.h264 reader is counted in passthrough";
  // The pipeline asks for a keyframe at start: counted only where the camera has the control.
  if (keyframeControlOn()) {
    EXPECT_GE(stats["keyframes_forced"].get<std::uint64_t>(), 1u);
  } else {
    EXPECT_EQ(stats["keyframes_forced"].get<std::uint64_t>(), 0u);
  }
  EXPECT_TRUE(stats.contains("held_back_until_idr")) << stats.dump();
  EXPECT_FALSE(pipeline.failure()) << pipeline.failure()->what();
}

// The frame share of a passed-through camera: its H.264 decoded beside the passthrough while a reader is
// attached (the first picture without waiting for the camera's next IDR), each picture the camera's own
// (timecode read back from the decoded pixels); with the reader gone the decode stops.
TEST(PipelinePassthrough, AFrameShareReaderGetsTheCamerasPicturesDecodedBesideIt) {
  ZEROHOP_REQUIRE_EMULATOR("");
  const std::string share = uniqueShareName();
  PipelineConfig config = passthroughConfig(share);
  StreamServer server(config.stream);
  config.viewers = server.unnamedStream();
  Pipeline pipeline(config);
  pipeline.start();
  const auto decode = [&] { return nlohmann::json::parse(pipeline.statsJson())["passthrough_decode"]; };
  // Until the camera has run a while, nothing wants pictures: none are decoded.
  const std::int64_t settled = monotonicNs() + 700'000'000;
  while (monotonicNs() < settled) std::this_thread::sleep_for(50ms);
  auto before = decode();
  ASSERT_TRUE(before["available"].get<bool>()) << before.dump();
  EXPECT_FALSE(before["running"].get<bool>()) << before.dump();
  EXPECT_EQ(before["pictures"].get<std::uint64_t>(), 0u) << "decoded with no reader: " << before.dump();
  int read = 0, timecodes = 0;
  {
    Subscriber frames(share);
    const std::int64_t end = monotonicNs() + 10'000'000'000;
    while (read < 30 && monotonicNs() < end) {
      auto f = frames.next(500ms);
      if (!f) continue;
      ++read;
      ASSERT_EQ(f->frame().format, PixelFormat::kI420);
      ASSERT_EQ(f->frame().width, 640u);
      if (auto tc = readTimecode(f->frame());
          tc && tc->wallClockMs == (f->frame().wallClockMs & kTimecodeMsMask)) {
        ++timecodes;
      }
      ASSERT_TRUE(f->valid());
    }
    EXPECT_TRUE(decode()["running"].get<bool>());
  }
  EXPECT_EQ(read, 30) << "the reader got " << read << " pictures in 10 s";
  EXPECT_GE(timecodes, 29) << "of " << read << " pictures, " << timecodes
                           << " carry the camera's timecode of their own capture";
  // The reader is gone: the decode stops (the share notices a departed reader within its keep-alive).
  const std::int64_t deadline = monotonicNs() + 10'000'000'000;
  while (decode()["running"].get<bool>() && monotonicNs() < deadline) std::this_thread::sleep_for(50ms);
  const auto after = decode();
  pipeline.stop();
  EXPECT_FALSE(after["running"].get<bool>()) << "still decoding with no reader: " << after.dump();
  EXPECT_EQ(after["errors"].get<std::uint64_t>(), 0u) << after.dump();
  EXPECT_FALSE(pipeline.failure()) << pipeline.failure()->what();
}

/// Takes rung 1's units, as a sink whose receiver sits on rung 1 would.
class RungOne final : public UnitSink {
 public:
  void deliver(const EncodedUnitPtr& unit) override {
    if (unit->codec != Codec::kH264 || unit->rendition != 1) return;
    std::lock_guard lock(mutex_);
    units_.push_back(unit);
  }
  std::string describe() const override { return "rung 1 (test)"; }
  bool wants(TrackKey track) const override { return track == TrackKey{Codec::kH264, 1}; }
  std::vector<EncodedUnitPtr> units() const {
    std::lock_guard lock(mutex_);
    return units_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<EncodedUnitPtr> units_;
};

// A ladder on a passed-through camera: rung 0 is the camera's own H.264, rung 1 its pictures decoded
// beside the passthrough, halved and encoded by x264: units of 320x240 that decode, each picture carrying
// the camera's timecode of its own capture.
TEST(PipelinePassthrough, ALowerRungIsTheDecodedPicturesHalvedAndEncoded) {
  ZEROHOP_REQUIRE_EMULATOR("");
  PipelineConfig config = passthroughConfig(uniqueShareName());
  config.renditions = "1:2000-3000,2:300-1000";
  StreamServer server(config.stream);
  config.viewers = server.unnamedStream();
  Pipeline pipeline(config);
  auto rung = std::make_shared<RungOne>();
  pipeline.addUnitSink(rung);
  pipeline.start();
  const std::int64_t end = monotonicNs() + 10'000'000'000;
  while (rung->units().size() < 30 && monotonicNs() < end) std::this_thread::sleep_for(20ms);
  const auto stats = nlohmann::json::parse(pipeline.statsJson());
  pipeline.stop();
  const auto units = rung->units();
  ASSERT_GE(units.size(), 30u) << stats.dump();
  EXPECT_TRUE(units[0]->keyframe) << "a rung starts with an IDR";
  H264TestDecoder decoder;
  int pictures = 0, timecodes = 0;
  for (const EncodedUnitPtr& unit : units) {
    for (const auto& picture : decoder.decode(*unit)) {
      ++pictures;
      ASSERT_EQ(picture->width, 320);
      ASSERT_EQ(picture->height, 240);
      if (auto tc = readTimecode(asFrame(*picture));
          tc && tc->wallClockMs == (unit->wallClockMs & kTimecodeMsMask)) {
        ++timecodes;
      }
    }
  }
  EXPECT_EQ(pictures, static_cast<int>(units.size()));
  EXPECT_GE(timecodes, pictures - 2) << "pictures whose timecode is their unit's capture";
  EXPECT_EQ(stats["path"], "passthrough");
  EXPECT_EQ(stats["renditions"][1]["running"], true) << stats.dump();
  EXPECT_EQ(stats["renditions"][1]["encoder"], "libx264") << stats.dump();
  EXPECT_EQ(stats["renditions"][0]["min_kbps"], 3000) << "rung 0 needs all of the camera's rate";
  EXPECT_EQ(stats["passthrough_decode"]["running"], true) << stats.dump();
  EXPECT_FALSE(pipeline.failure()) << pipeline.failure()->what();
}

}  // namespace
}  // namespace zerohop
