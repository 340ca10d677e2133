// An H.264 camera's keyframe control, through our capture code and the emulated camera (run under
// zerohop-camemu --format h264 by CTest): requestKeyframe() reaches the camera as
// V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME and the next frames bring an IDR long before the periodic one;
// a camera without the control says no; a camera that sends SPS/PPS only once really does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "emulator_env.hpp"
#include "encode/annexb.hpp"
#include "zerohop/capture.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<FrameSource> openH264() {
  return openV4l2Source(parseSourceSpec("v4l2:" + test::emulatedDevice() + "?format=h264&size=640x480&fps=30"));
}

bool emulatorSays(const char* variable, const char* value) {
  const char* v = std::getenv(variable);
  return v && std::string(v) == value;
}

// Next frame or a test failure.
FrameLease nextFrame(FrameSource& source) {
  auto lease = source.next(2s);
  if (!lease) throw std::runtime_error("no frame within 2 s");
  return std::move(*lease);
}

bool hasNal(const Frame& f, int type) {
  for (int t : encode::nalTypes(f.data[0], f.bytesUsed)) {
    if (t == type) return true;
  }
  return false;
}

TEST(CaptureH264Control, ForcedKeyframeArrivesWithinAFewFrames) {
  ZEROHOP_REQUIRE_EMULATOR("");
  if (!emulatorSays("ZEROHOP_CAMEMU_KEYFRAME_CONTROL", "1")) GTEST_SKIP() << "run with the keyframe control on";
  auto source = openH264();
  ASSERT_EQ(source->info().format, PixelFormat::kH264);
  // Wait for the periodic IDR (one a second at 30 fps), then 5 frames into its group of pictures.
  int frames = 0;
  while (!nextFrame(*source)->keyframe) ASSERT_LT(++frames, 90) << "no periodic IDR within 3 s";
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(nextFrame(*source)->keyframe) << "frame " << i << " after the IDR";
  ASSERT_TRUE(source->requestKeyframe());
  // The request lands before the camera encodes one of the next few frames (queued buffers are older).
  int after = 0;
  for (;;) {
    FrameLease f = nextFrame(*source);
    ++after;
    if (f->keyframe) {
      EXPECT_TRUE(encode::containsIdr(f->data[0], f->bytesUsed)) << "flagged keyframe without an IDR slice";
      break;
    }
    ASSERT_LT(after, 8) << "no IDR within 8 frames of the request (the periodic one is 25 frames away)";
  }
}

TEST(CaptureH264Control, CameraWithoutTheControlSaysNo) {
  ZEROHOP_REQUIRE_EMULATOR("");
  if (!emulatorSays("ZEROHOP_CAMEMU_KEYFRAME_CONTROL", "0")) GTEST_SKIP() << "run with --no-keyframe-control";
  auto source = openH264();
  EXPECT_FALSE(source->requestKeyframe());
  EXPECT_TRUE(nextFrame(*source)->bytesUsed > 0);
}

TEST(CaptureH264Control, HeadersOnceMeansLaterIdrsLackThem) {
  ZEROHOP_REQUIRE_EMULATOR("");
  if (!emulatorSays("ZEROHOP_CAMEMU_H264_HEADERS", "once")) GTEST_SKIP() << "run with --h264-headers=once";
  auto source = openH264();
  int idrs = 0, withSps = 0;
  for (int i = 0; i < 75 && idrs < 2; ++i) {
    FrameLease f = nextFrame(*source);
    if (encode::containsIdr(f->data[0], f->bytesUsed)) ++idrs;
    if (hasNal(f.frame(), encode::kNalSps)) ++withSps;
  }
  ASSERT_EQ(idrs, 2) << "two periodic IDRs expected within 2.5 s";
  EXPECT_EQ(withSps, 1) << "SPS must come once, with the first IDR only";
}

}  // namespace
}  // namespace zerohop
