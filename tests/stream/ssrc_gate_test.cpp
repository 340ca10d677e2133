// SsrcGate (src/stream/ssrc_gate.hpp): what a viewer may send into serve's RTP stack, judged on the clear
// bytes before SRTP decryption: no RTP at all, RTCP from the first few sender SSRCs, DTLS untouched.
#include "stream/ssrc_gate.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace zerohop::stream {
namespace {

void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(x >> s));
}

// An SRTP-looking packet (a 12-byte header, payload type 96, 10 bytes of "ciphertext"): 22 bytes, as the
// hostile viewer of issue 33 sent.
std::vector<std::uint8_t> rtp(std::uint32_t ssrc, std::uint8_t markerAndType = 96) {
  std::vector<std::uint8_t> v = {0x80, markerAndType, 0x12, 0x34};
  put32(v, 90000);
  put32(v, ssrc);
  v.resize(22, 0xab);
  return v;
}

// An SRTCP receiver report header from `sender` (type 201), with an SRTCP index and tag's worth of bytes.
std::vector<std::uint8_t> rtcp(std::uint32_t sender, std::uint8_t type = 201) {
  std::vector<std::uint8_t> v = {0x80, type, 0, 1};
  put32(v, sender);
  v.resize(22, 0xcd);
  return v;
}

TEST(SsrcGate, ClassifiesByTheFirstByteAndThePayloadType) {
  const std::vector<std::uint8_t> stun = {0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xa4, 0x42};
  const std::vector<std::uint8_t> dtls = {22, 0xfe, 0xfd, 0, 0};  // a DTLS 1.2 handshake record
  EXPECT_EQ(classifyPacket(stun.data(), stun.size()).kind, PacketKind::kStun);
  EXPECT_EQ(classifyPacket(dtls.data(), dtls.size()).kind, PacketKind::kDtls);
  const auto media = rtp(0xdeadbeef);
  const PacketClass m = classifyPacket(media.data(), media.size());
  EXPECT_EQ(m.kind, PacketKind::kRtp);
  EXPECT_EQ(m.ssrc, 0xdeadbeefu);
  const auto marked = rtp(7, 0x80 | 96);  // marker set: second byte 224, still RTP (RFC 5761 §4)
  EXPECT_EQ(classifyPacket(marked.data(), marked.size()).kind, PacketKind::kRtp);
  for (std::uint8_t type : {192, 200, 201, 205, 206, 223}) {
    const auto report = rtcp(0x01020304, type);
    const PacketClass r = classifyPacket(report.data(), report.size());
    EXPECT_EQ(r.kind, PacketKind::kRtcp) << int(type);
    EXPECT_EQ(r.ssrc, 0x01020304u);
  }
  const auto shortRtp = std::vector<std::uint8_t>(media.begin(), media.begin() + 11);
  EXPECT_EQ(classifyPacket(shortRtp.data(), shortRtp.size()).kind, PacketKind::kOther);
  EXPECT_EQ(classifyPacket(nullptr, 0).kind, PacketKind::kOther);
}

TEST(SsrcGate, DropsEveryRtpPacketAndCountsIt) {
  SsrcGate gate;
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const auto p = rtp(0x10000 + i);
    EXPECT_FALSE(gate.admit(p.data(), p.size()));
  }
  const auto fixed = rtp(42);
  EXPECT_FALSE(gate.admit(fixed.data(), fixed.size()));
  EXPECT_EQ(gate.dropped(), 1001u);
  EXPECT_TRUE(gate.rtcpSenders().empty()) << "RTP must not take a sender's place";
}

TEST(SsrcGate, AdmitsRtcpFromTheFirstSendersOnly) {
  SsrcGate gate;
  for (std::uint32_t s = 1; s <= SsrcGate::kMaxRtcpSenders; ++s) {
    const auto p = rtcp(s);
    EXPECT_TRUE(gate.admit(p.data(), p.size())) << s;
  }
  for (std::uint32_t s = 100; s < 1100; ++s) {  // a junk flood of RTCP with fresh sender SSRCs
    const auto p = rtcp(s, 200 + s % 6);
    EXPECT_FALSE(gate.admit(p.data(), p.size())) << s;
  }
  for (int round = 0; round < 3; ++round) {  // the first senders keep being heard
    for (std::uint32_t s = 1; s <= SsrcGate::kMaxRtcpSenders; ++s) {
      const auto p = rtcp(s, 205);
      EXPECT_TRUE(gate.admit(p.data(), p.size())) << s;
    }
  }
  EXPECT_EQ(gate.dropped(), 1000u);
  EXPECT_EQ(gate.rtcpSenders(), (std::vector<std::uint32_t>{1, 2, 3, 4}));
}

TEST(SsrcGate, PassesDtlsAndStunAndDropsTruncatedRtp) {
  SsrcGate gate;
  const std::vector<std::uint8_t> stun = {0x01, 0x01, 0x00, 0x00};
  const std::vector<std::uint8_t> dtls = {23, 0xfe, 0xfd, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(gate.admit(stun.data(), stun.size()));
    EXPECT_TRUE(gate.admit(dtls.data(), dtls.size()));
  }
  const std::vector<std::uint8_t> truncated = {0x80, 96, 0, 1, 0, 0};  // an RTP first byte, 6 bytes
  EXPECT_FALSE(gate.admit(truncated.data(), truncated.size()));
  const std::vector<std::uint8_t> truncatedRtcp = {0x80, 201, 0, 1};
  EXPECT_FALSE(gate.admit(truncatedRtcp.data(), truncatedRtcp.size()));
  EXPECT_EQ(gate.dropped(), 2u);
  EXPECT_TRUE(gate.rtcpSenders().empty());
}

}  // namespace
}  // namespace zerohop::stream
