// viewer_feedback.hpp: rtpsession's per-source numbers folded into one reading, the viewer's media
// report block read from its own RTCP preferred when newer, and what congestion control believes of two
// readings (congestionFeedback); no GStreamer.
#include "stream/viewer_feedback.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

namespace zerohop::stream {
namespace {

constexpr std::uint32_t kViewer = 0xabc, kMedia = 0x1111, kRtx = 0x2222;

void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(x >> s));
}

// An RR from kViewer with one block per (source, fraction lost /256, extended highest sequence).
std::vector<std::uint8_t> receiverReport(const std::vector<std::tuple<std::uint32_t, std::uint8_t, std::uint32_t>>& blocks) {
  std::vector<std::uint8_t> v = {static_cast<std::uint8_t>(0x80 | blocks.size()), 201, 0, 0};
  put32(v, kViewer);
  for (const auto& [source, fraction, seq] : blocks) {
    put32(v, source);
    v.push_back(fraction);
    v.insert(v.end(), {0, 0, 0});
    put32(v, seq);
    put32(v, 0);
    put32(v, 0);
    put32(v, 0);
  }
  const std::size_t words = v.size() / 4 - 1;
  v[2] = static_cast<std::uint8_t>(words >> 8);
  v[3] = static_cast<std::uint8_t>(words);
  return v;
}

TEST(ViewerFeedback, SourceStatsGiveOurOctetsAndTheViewersNewestBlockAboutTheMedia) {
  FeedbackReading r;
  RtpSourceStats ours{kMedia, true, 12345u};
  addSourceStats(r, ours, kMedia);
  RtpSourceStats rtx{kRtx, true, 99u};
  addSourceStats(r, rtx, kMedia);  // the RTX source's bytes are not the media's
  EXPECT_EQ(r.octetsSent, 12345u);
  EXPECT_FALSE(r.report);

  RtpSourceStats aboutRtx{kViewer, false, std::nullopt, true, kRtx, 128, 65536, 5000};
  addSourceStats(r, aboutRtx, kMedia);
  EXPECT_FALSE(r.report);  // a block about the RTX SSRC says nothing about the media
  RtpSourceStats viewer{kViewer, false, std::nullopt, true, kMedia, 64, 65536 / 20, 700};
  addSourceStats(r, viewer, kMedia);
  ASSERT_TRUE(r.report);
  EXPECT_DOUBLE_EQ(r.report->fractionLost, 0.25);
  EXPECT_DOUBLE_EQ(r.report->rttMs, (65536 / 20) * 1000.0 / 65536.0);
  EXPECT_EQ(r.report->highestSeq, 700u);
  RtpSourceStats older{kViewer + 1, false, std::nullopt, true, kMedia, 0, 0, 600};
  addSourceStats(r, older, kMedia);
  EXPECT_EQ(r.report->highestSeq, 700u);  // an older report does not replace a newer one
}

TEST(ViewerFeedback, TheMediaBlockIsKeptWhereverItIsInThePacket) {
  MediaReportTracker t(kMedia);
  EXPECT_FALSE(t.latest());
  const std::vector<std::uint8_t> rr = receiverReport({{kMedia, 128, 900}, {kRtx, 0, 5000}});
  t.onCompoundRtcp(rr.data(), rr.size());
  ASSERT_TRUE(t.latest());
  EXPECT_EQ(t.latest()->source, kMedia);
  EXPECT_EQ(t.latest()->extHighestSeq, 900u);
  const std::vector<std::uint8_t> stale = receiverReport({{kMedia, 0, 800}});  // reordered, older
  t.onCompoundRtcp(stale.data(), stale.size());
  EXPECT_EQ(t.latest()->extHighestSeq, 900u);
  const std::vector<std::uint8_t> garbage = {0x00, 0x01, 0x02};
  t.onCompoundRtcp(garbage.data(), garbage.size());
  EXPECT_EQ(t.latest()->extHighestSeq, 900u);
}

TEST(ViewerFeedback, TheNewerOfRtpsessionsAndThePacketsReportIsRead) {
  MediaReportTracker t(kMedia);
  FeedbackReading none;
  t.preferNewer(none);
  EXPECT_FALSE(none.report);  // nothing from either

  const std::vector<std::uint8_t> rr = receiverReport({{kMedia, 128, 900}});
  t.onCompoundRtcp(rr.data(), rr.size());
  FeedbackReading fromStats;
  fromStats.report = FeedbackReading::ReceiverReport{0.1, 30, 950};
  t.preferNewer(fromStats);
  EXPECT_EQ(fromStats.report->highestSeq, 950u);  // rtpsession's is newer: kept, with its RTT
  EXPECT_DOUBLE_EQ(fromStats.report->rttMs, 30);

  FeedbackReading stale;
  stale.report = FeedbackReading::ReceiverReport{0.1, 30, 850};  // rtpsession kept an older block
  t.preferNewer(stale);
  EXPECT_EQ(stale.report->highestSeq, 900u);
  EXPECT_DOUBLE_EQ(stale.report->fractionLost, 0.5);
  EXPECT_DOUBLE_EQ(stale.report->rttMs, 0);  // no RTT from the packet alone
}

constexpr std::int64_t kNow = 5'000'000'000;

FeedbackReading withReport(double fractionLost, std::uint32_t highestSeq, std::uint64_t nacks,
                           double rttMs = 40) {
  FeedbackReading r;
  r.report = FeedbackReading::ReceiverReport{fractionLost, rttMs, highestSeq};
  r.nackRequests = nacks;
  return r;
}

TEST(CongestionFeedback, AReportsLossIsHeldToTheViewersNacksOnlyWhenItNegotiatedNack) {
  const FeedbackReading last = withReport(0, 1000, 10);
  const FeedbackReading now = withReport(0.5, 1300, 25);  // claims half of 300 packets, NACKed 15
  const CongestionFeedback nack = congestionFeedback(now, last, kNow, true, 10);
  EXPECT_TRUE(nack.fresh);
  EXPECT_FALSE(nack.lossFromTransportCc);
  EXPECT_DOUBLE_EQ(nack.lossFraction.value_or(-1), 0.05);  // 15 / 300
  EXPECT_DOUBLE_EQ(nack.rttMs.value_or(-1), 40);
  // Without NACK nothing holds the claim: it is taken as it is (EncodeTargets then follows such a viewer
  // only while no viewer with NACK shares its encode: followedEstimates).
  EXPECT_DOUBLE_EQ(congestionFeedback(now, last, kNow, false, 10).lossFraction.value_or(-1), 0.5);
  // The same report again is no news: the estimate holds.
  EXPECT_FALSE(congestionFeedback(now, now, kNow, true, 25).fresh);
}

TEST(CongestionFeedback, OnceATransportCcWindowCameAReportsClaimedLossIsNotRead) {
  FeedbackReading last = withReport(0, 1000, 0);
  last.transport = FeedbackReading::TransportWindow{20, 20, 0, 1000, 1000, 0.01};
  FeedbackReading now = withReport(0.5, 1300, 0, 45);  // a report claiming 50 %, the same window as before
  now.transport = last.transport;
  const CongestionFeedback f = congestionFeedback(now, last, kNow, false, 0);
  EXPECT_FALSE(f.fresh) << "a receiver report's loss was read beside transport-cc's acknowledgements";
  EXPECT_FALSE(f.lossFraction);
  // A new window that acknowledged everything: loss 0 whatever the report says.
  now.transport = FeedbackReading::TransportWindow{21, 21, 0, 1010, 1005, 0.02};
  const CongestionFeedback g = congestionFeedback(now, last, kNow, false, 0);
  EXPECT_TRUE(g.fresh);
  EXPECT_TRUE(g.lossFromTransportCc);
  EXPECT_DOUBLE_EQ(g.lossFraction.value_or(-1), 0.0);
  EXPECT_DOUBLE_EQ(g.receiveKbps.value_or(-1), 1005);
}

TEST(CongestionFeedback, ATransportCcWindowIsTakenAsTheViewerAcknowledgedItNotCheckedAgainstNacks) {
  // What serve believes of forged transport-cc (docs/reliability.md, "Hostile peers"): a window whose acks
  // say half was lost and the rest came at half the rate, from a viewer with NACK that NACKed nothing.
  FeedbackReading last;
  last.transport = FeedbackReading::TransportWindow{20, 20, 0, 1000, 1000, 0.01};
  FeedbackReading now;
  now.transport = FeedbackReading::TransportWindow{20, 10, 50, 1000, 500, 2.0};
  const CongestionFeedback f = congestionFeedback(now, last, kNow, true, 0);
  EXPECT_TRUE(f.fresh);
  EXPECT_DOUBLE_EQ(f.lossFraction.value_or(-1), 0.5);
  EXPECT_DOUBLE_EQ(f.receiveKbps.value_or(-1), 500);
  EXPECT_DOUBLE_EQ(f.deltaOfDeltaMs.value_or(-1), 2.0);
}

}  // namespace
}  // namespace zerohop::stream
