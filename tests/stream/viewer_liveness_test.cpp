// ViewerLiveness (src/stream/viewer_liveness.hpp): when a viewer counts as gone, from its connection
// state and the gaps between its RTCP reports; no GStreamer, time passed in.
#include "stream/viewer_liveness.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace zerohop::stream {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kStart = 1000 * kSecond;  // any CLOCK_MONOTONIC time

TEST(ViewerLiveness, NotConnectedIsNeverGoneBySilence) {
  ViewerLiveness l;
  EXPECT_EQ(l.connectedNs(), 0);
  EXPECT_EQ(l.goneReason(kStart + 3600 * kSecond), "");  // the owner's connect timeout applies instead
}

TEST(ViewerLiveness, ConnectedWithoutReportsIsGoneAfterTheLongestSilence) {
  ViewerLiveness l;
  EXPECT_TRUE(l.noteConnected(kStart));
  EXPECT_FALSE(l.noteConnected(kStart + kSecond));  // the first connection counts
  EXPECT_EQ(l.connectedNs(), kStart);
  EXPECT_EQ(l.goneReason(kStart + 20 * kSecond), "");  // exactly kRtcpSilenceMax: not yet
  EXPECT_NE(l.goneReason(kStart + 20 * kSecond + 1).find("no RTCP from the viewer for 20000 ms"), std::string::npos);
}

TEST(ViewerLiveness, SilenceAllowedIsFourTimesTheLongestGapWithinTheBounds) {
  ViewerLiveness browser;  // reports every second: the floor, 10 s
  browser.noteConnected(kStart);
  for (int i = 1; i <= 5; ++i) browser.noteReport(0x42, kStart + i * kSecond);
  const std::int64_t last = kStart + 5 * kSecond;
  EXPECT_EQ(browser.goneReason(last + 10 * kSecond), "");
  const std::string why = browser.goneReason(last + 10 * kSecond + 1);
  EXPECT_NE(why.find("its reports had come at most 1000 ms apart"), std::string::npos) << why;

  ViewerLiveness avpf;  // a 3 s gap: 12 s allowed
  avpf.noteConnected(kStart);
  avpf.noteReport(0x42, kStart + kSecond);
  avpf.noteReport(0x42, kStart + 4 * kSecond);
  EXPECT_EQ(avpf.goneReason(kStart + 16 * kSecond), "");
  EXPECT_NE(avpf.goneReason(kStart + 16 * kSecond + 1), "");

  ViewerLiveness slow;  // a 7.5 s gap: 30 s, capped at 20 s
  slow.noteConnected(kStart);
  slow.noteReport(0x42, kStart + kSecond);
  slow.noteReport(0x42, kStart + kSecond + 7'500'000'000);
  const std::int64_t at = kStart + kSecond + 7'500'000'000;
  EXPECT_EQ(slow.goneReason(at + 20 * kSecond), "");
  EXPECT_NE(slow.goneReason(at + 20 * kSecond + 1), "");
}

TEST(ViewerLiveness, DisconnectedLongerThanTheGraceIsGoneAndComingBackClearsIt) {
  ViewerLiveness l;
  l.noteConnected(kStart);
  l.noteReport(0x42, kStart);
  EXPECT_TRUE(l.noteDisconnected(true, kStart + kSecond));
  EXPECT_FALSE(l.noteDisconnected(true, kStart + 2 * kSecond));  // still the same disconnection
  EXPECT_EQ(l.goneReason(kStart + 6 * kSecond), "");
  EXPECT_EQ(l.goneReason(kStart + 6 * kSecond + 1), "disconnected for more than 5 s");
  EXPECT_FALSE(l.noteDisconnected(false, kStart + 6 * kSecond));
  l.noteReport(0x42, kStart + 6 * kSecond);
  EXPECT_EQ(l.goneReason(kStart + 7 * kSecond), "");
  EXPECT_TRUE(l.noteDisconnected(true, kStart + 8 * kSecond));  // a new disconnection starts its own grace
  EXPECT_EQ(l.goneReason(kStart + 13 * kSecond), "");
}

TEST(ViewerLiveness, RemembersTheSsrcsTheViewerReportedFromUpToTheLimit) {
  ViewerLiveness l;
  EXPECT_FALSE(l.isViewerSsrc(7));
  l.noteReport(7, kStart);
  l.noteReport(9, kStart + 1);
  l.noteReport(7, kStart + 2);
  EXPECT_EQ(l.viewerSsrcs(), (std::vector<std::uint32_t>{7, 9}));
  EXPECT_TRUE(l.isViewerSsrc(9));
  for (std::uint32_t s = 100; s < 120; ++s) l.noteReport(s, kStart + 3 + s);
  EXPECT_EQ(l.viewerSsrcs().size(), ViewerLiveness::kMaxViewerSsrcs);
  EXPECT_FALSE(l.isViewerSsrc(119));
}

}  // namespace
}  // namespace zerohop::stream
