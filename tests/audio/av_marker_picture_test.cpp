// The A/V marker in the picture (core/av_marker_picture.hpp): the block reads back in every format the
// camera side writes, clear of the timecode; and the test camera shows it in exactly the frames whose
// exposure holds a marker instant, the instants the test tone (renderTone, on the same capture clock)
// clicks at.
#include "core/av_marker_picture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "audio/tone_source.hpp"
#include "core/av_marker.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/source.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

// A host frame of `format` over its own zeroed storage.
struct HostPicture {
  HostPicture(PixelFormat format, std::uint32_t w, std::uint32_t h) {
    const ImageLayout layout = computeLayout(format, w, h, 64);
    bytes.assign(layout.totalBytes, 0);
    frame.format = format;
    frame.width = w;
    frame.height = h;
    bindLayout(frame, layout, bytes.data(), MemoryKind::kHost);
  }
  std::vector<std::uint8_t> bytes;
  Frame frame;
};

TEST(AvMarkerPicture, BlockReadsBackShownAndHiddenInEveryFormatBesideTheTimecode) {
  for (PixelFormat format :
       {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12, PixelFormat::kI420}) {
    SCOPED_TRACE(formatName(format));
    HostPicture p(format, 640, 360);
    const Timecode tc{1'234'567, 42};
    ASSERT_TRUE(drawTimecode(p.frame, tc));
    ASSERT_TRUE(drawAvMarker(p.frame, true));
    EXPECT_EQ(readAvMarker(p.frame), true);
    EXPECT_NEAR(*avMarkerLuma(p.frame), 235.0, 0.01);
    EXPECT_EQ(readTimecode(p.frame), tc) << "the marker covers the timecode";
    ASSERT_TRUE(drawAvMarker(p.frame, false));
    EXPECT_EQ(readAvMarker(p.frame), false);
    EXPECT_NEAR(*avMarkerLuma(p.frame), 16.0, 0.01);
  }
  const AvMarkerRect r = avMarkerRect(1280, 720);
  EXPECT_EQ(r.x, 960u);
  EXPECT_EQ(r.y, 544u);
  EXPECT_EQ(r.width, 320u);
  EXPECT_EQ(r.height, 176u);
  HostPicture tiny(PixelFormat::kI420, 32, 32);  // too small to hold a block
  EXPECT_FALSE(drawAvMarker(tiny.frame, true));
  EXPECT_FALSE(readAvMarker(tiny.frame).has_value());
}

TEST(AvMarkerPicture, TestCameraShowsItInExactlyTheFramesWhoseExposureHoldsAClickOfTheTone) {
  auto cam = openSource(parseSourceSpec("test:320x180@100"));
  constexpr std::int64_t kPeriodNs = 10'000'000;
  struct Seen {
    std::int64_t beginNs, endNs;
    bool shown;
  };
  std::vector<Seen> frames;
  int shown = 0, afterLastShown = 0;
  // A marker frame (a marker a second) and a few frames after it; at most 6 s (a frame dropped on a busy
  // box may take a marker with it: the next second's is waited for then).
  const auto deadline = std::chrono::steady_clock::now() + 6s;
  while ((shown < 1 || afterLastShown < 5 || frames.size() < 20) &&
         std::chrono::steady_clock::now() < deadline) {
    auto lease = cam->next(500ms);
    if (!lease) continue;
    const Frame& f = lease->frame();
    const auto read = readAvMarker(f);
    ASSERT_TRUE(read.has_value());
    frames.push_back({f.captureNs() - kPeriodNs, f.captureNs(), *read});
    EXPECT_EQ(*read, avMarkerIn(f.captureNs() - kPeriodNs, f.captureNs())) << "frame " << f.sequence;
    ASSERT_TRUE(readTimecode(f).has_value()) << "the marker left the timecode readable";
    if (*read) {
      ++shown;
      afterLastShown = 0;
    } else {
      ++afterLastShown;
    }
  }
  ASSERT_GE(shown, 1) << "no marker frame in " << frames.size() << " frames";
  EXPECT_GE(frames.size(), 20u);

  // The tone over the same span of the capture clock (begun on a whole second, so a sample falls on
  // each marker instant): each click starts inside a frame that shows the marker, and each frame that
  // shows it holds a click's start.
  audio::ToneSettings tone;
  const std::int64_t origin = avMarkerAtOrBefore(frames.front().beginNs);
  const auto samples =
      static_cast<std::size_t>((frames.back().endNs - origin) / 1'000'000'000.0 * audio::kSampleRate);
  std::vector<std::int16_t> pcm(samples + 1);
  audio::renderTone(pcm, origin, 0, tone);
  std::vector<std::int64_t> clicks;
  for (std::size_t i = 0; i < pcm.size(); ++i) {
    const bool loud = std::abs(pcm[i]) > 16'000;
    const bool wasLoud = i > 0 && std::abs(pcm[i - 1]) > 16'000;
    const auto k = static_cast<std::int64_t>(i);
    if (loud && !wasLoud)
      clicks.push_back(origin + k / audio::kSampleRate * 1'000'000'000 +
                       audio::framesToNs(k % audio::kSampleRate));
  }
  ASSERT_GE(clicks.size(), 1u);
  int matched = 0;
  for (const Seen& s : frames) {
    int inside = 0;
    for (std::int64_t c : clicks) inside += c >= s.beginNs && c < s.endNs;
    EXPECT_EQ(inside > 0, s.shown) << "frame exposed from " << s.beginNs << " ns";
    matched += inside > 0 && s.shown;
  }
  EXPECT_EQ(matched, shown);
}

}  // namespace
}  // namespace zerohop
