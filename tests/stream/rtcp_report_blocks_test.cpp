// rtcpReportBlocks (src/stream/rtcp_report_blocks.hpp): every report block of a compound RTCP packet,
// so a viewer whose reports list the RTX SSRC's block after the media SSRC's is heard about the media.
#include "stream/rtcp_report_blocks.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace zerohop::stream {
namespace {

void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(x >> s));
}

// One report block about `source`: fraction lost `fraction`/256, extended highest sequence `seq`.
void block(std::vector<std::uint8_t>& v, std::uint32_t source, std::uint8_t fraction, std::uint32_t seq) {
  put32(v, source);
  v.push_back(fraction);
  v.insert(v.end(), {0, 0, 3});  // cumulative lost 3
  put32(v, seq);
  put32(v, 7);       // jitter
  put32(v, 0x1234);  // LSR
  put32(v, 0x10);    // DLSR
}

// An RR from `reporter` with one block per (source, fraction, seq).
std::vector<std::uint8_t> receiverReport(std::uint32_t reporter,
                                         const std::vector<std::pair<std::uint32_t, std::uint8_t>>& blocks) {
  std::vector<std::uint8_t> v = {static_cast<std::uint8_t>(0x80 | blocks.size()), 201, 0, 0};
  put32(v, reporter);
  std::uint32_t seq = 1000;
  for (const auto& [source, fraction] : blocks) block(v, source, fraction, seq++);
  const std::size_t words = v.size() / 4 - 1;
  v[2] = static_cast<std::uint8_t>(words >> 8);
  v[3] = static_cast<std::uint8_t>(words);
  return v;
}

constexpr std::uint32_t kViewer = 0xabc, kMedia = 0x1111, kRtx = 0x2222;

TEST(RtcpReportBlocks, EveryBlockIsReadWhicheverComesLast) {
  // aiortc's order: media first, RTX last (rtpsession's stats then keep only the RTX block).
  std::vector<std::uint8_t> rr = receiverReport(kViewer, {{kMedia, 128}, {kRtx, 0}});
  // A compound packet: the RR, then an SDES rtpsession would read too (skipped here).
  rr.insert(rr.end(), {0x81, 202, 0, 2});
  put32(rr, kViewer);
  rr.insert(rr.end(), {0, 0, 0, 0});
  const auto blocks = rtcpReportBlocks(rr.data(), rr.size());
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].reporter, kViewer);
  EXPECT_EQ(blocks[0].source, kMedia);
  EXPECT_DOUBLE_EQ(blocks[0].fractionLost, 0.5);
  EXPECT_EQ(blocks[0].extHighestSeq, 1000u);
  EXPECT_EQ(blocks[0].lsr, 0x1234u);
  EXPECT_EQ(blocks[0].dlsr, 0x10u);
  EXPECT_EQ(blocks[1].source, kRtx);
  EXPECT_EQ(blocks[1].extHighestSeq, 1001u);
}

TEST(RtcpReportBlocks, SenderReportBlocksComeAfterItsSenderInfo) {
  std::vector<std::uint8_t> sr = {0x81, 200, 0, 12};
  put32(sr, kViewer);
  for (int i = 0; i < 5; ++i) put32(sr, 0xffffffff);  // NTP, RTP timestamp, packets, octets
  block(sr, kMedia, 64, 77);
  ASSERT_EQ(sr.size(), 52u);
  const auto blocks = rtcpReportBlocks(sr.data(), sr.size());
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].source, kMedia);
  EXPECT_DOUBLE_EQ(blocks[0].fractionLost, 0.25);
  EXPECT_EQ(blocks[0].extHighestSeq, 77u);
}

TEST(RtcpReportBlocks, MalformedInputStopsWithWhatWasReadBefore) {
  std::vector<std::uint8_t> rr = receiverReport(kViewer, {{kMedia, 1}});
  std::vector<std::uint8_t> broken = rr;
  broken.insert(broken.end(), {0x81, 201, 0xff, 0xff, 0, 0});  // a length far past the data
  EXPECT_EQ(rtcpReportBlocks(broken.data(), broken.size()).size(), 1u);
  std::vector<std::uint8_t> lying = rr;
  lying[0] = 0x80 | 31;  // claims 31 blocks in a packet that holds one
  EXPECT_EQ(rtcpReportBlocks(lying.data(), lying.size()).size(), 1u);
  std::vector<std::uint8_t> v1 = rr;
  v1[0] = 0x41;  // version 1
  EXPECT_TRUE(rtcpReportBlocks(v1.data(), v1.size()).empty());
  EXPECT_TRUE(rtcpReportBlocks(nullptr, 12).empty());
  EXPECT_TRUE(rtcpReportBlocks(rr.data(), 3).empty());
  // A flood of blocks is read up to the bound.
  std::vector<std::uint8_t> many;
  for (int i = 0; i < 10; ++i) {
    const auto one = receiverReport(kViewer, std::vector<std::pair<std::uint32_t, std::uint8_t>>(31, {kMedia, 0}));
    many.insert(many.end(), one.begin(), one.end());
  }
  EXPECT_EQ(rtcpReportBlocks(many.data(), many.size()).size(), kMaxRtcpReportBlocks);
}

}  // namespace
}  // namespace zerohop::stream
