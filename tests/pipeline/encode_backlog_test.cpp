// EncodeBacklog: when the encode falls behind its source, the pipeline says so once per minute, with
// the figures; a few drops (a stall, a keyframe) say nothing.
#include "encode_backlog.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace zerohop {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kStart = 1'000 * kMs;

// Feeds BACKLOG one frame every FRAME_MS from AT for SECONDS, DROPS_PER_FRAME queue drops after each
// (the source sends 1 + DROPS_PER_FRAME frames per encoded one); returns the reports made.
struct Feed {
  EncodeBacklog backlog;
  std::int64_t at = kStart;
  std::uint64_t drops = 0;
  int reports = 0;
  std::optional<EncodeBacklog::Report> last;

  void run(double seconds, std::int64_t frameMs, double dropsPerFrame) {
    double owed = 0;
    for (std::int64_t end = at + static_cast<std::int64_t>(seconds * 1e9); at < end; at += frameMs * kMs) {
      owed += dropsPerFrame;
      while (owed >= 1) drops += 1, owed -= 1;
      if (auto r = backlog.onFrame(at, drops)) ++reports, last = r;
    }
  }
};

TEST(EncodeBacklog, AnEncodeThatKeepsUpSaysNothing) {
  Feed f;
  f.run(10, 16, 0);
  EXPECT_EQ(f.reports, 0);
}

TEST(EncodeBacklog, DropsUnderATenthOfTheFramesSayNothing) {
  Feed f;
  f.run(10, 16, 0.1);  // 1 of 11 frames dropped: 9 %
  EXPECT_EQ(f.reports, 0);
}

TEST(EncodeBacklog, AnEncodeTooSlowForTheSourceIsReportedAfterOneWindowWithItsFigures) {
  Feed f;
  f.run(1.9, 24, 0.4);  // 42 fps encoded of a 60 fps source: 2 of 7 frames dropped
  EXPECT_EQ(f.reports, 0) << "nothing before the first window ends";
  f.run(0.5, 24, 0.4);
  ASSERT_EQ(f.reports, 1);
  EXPECT_NEAR(f.last->seconds, 2.0, 0.03);
  EXPECT_NEAR(static_cast<double>(f.last->encoded) / f.last->seconds, 41.7, 1.0);
  EXPECT_NEAR(static_cast<double>(f.last->dropped) / static_cast<double>(f.last->encoded), 0.4, 0.03);
}

TEST(EncodeBacklog, AFallingBehindThatLastsIsReportedOnceAMinute) {
  Feed f;
  f.run(124, 24, 0.4);
  EXPECT_EQ(f.reports, 3) << "at ~2 s, ~62 s and ~123 s (windows of ~2.02 s)";
}

TEST(EncodeBacklog, ABacklogThatEndsAndComesBackAfterAMinuteIsReportedAgain) {
  Feed f;
  f.run(3, 24, 0.5);
  ASSERT_EQ(f.reports, 1);
  f.run(60, 16, 0);
  EXPECT_EQ(f.reports, 1);
  f.run(3, 24, 0.5);
  EXPECT_EQ(f.reports, 2);
}

TEST(EncodeBacklog, TheWarningGivesTheFiguresAndWhatToChange) {
  const EncodeBacklog::Report r{80, 84, 2.0};
  const auto text = describeBacklog(r, 18.94, 60);
  EXPECT_EQ(text,
            "falling behind the source: 80 of 164 frames dropped before encoding in the last 2.0 s "
            "(42.0 fps encoded); the encode takes 18.9 ms a frame at the median, the source sends one every "
            "16.7 ms (60 fps). Lower the size or the frame rate, give the encoder more threads, or encode on a "
            "GPU with NVENC");
  EXPECT_EQ(describeBacklog(r, 18.94, 0).find("the source sends"), std::string::npos) << "no rate: not said";
}

}  // namespace
}  // namespace zerohop
