// Handshake message encoding: round trips and every way a foreign or broken peer can get it wrong.
#include "share/wire.hpp"

#include <gtest/gtest.h>

namespace zerohop::share_detail {
namespace {

TEST(ShareWire, HelloRoundTrips) {
  Hello h;
  h.minVersion = 1;
  h.maxVersion = 3;
  h.acceptMemory = kAcceptHost | kAcceptDevice;
  h.pid = 4242;
  const auto bytes = encodeHello(h);
  const auto back = decodeHello(bytes);
  EXPECT_EQ(back.minVersion, 1);
  EXPECT_EQ(back.maxVersion, 3);
  EXPECT_EQ(back.acceptMemory, kAcceptHost | kAcceptDevice);
  EXPECT_EQ(back.pid, 4242);
  const auto header = decodeHeader(bytes);
  EXPECT_EQ(header.magic, kWireMagic);
  EXPECT_EQ(header.version, kProtocolVersion);
  EXPECT_EQ(header.type, MessageType::kHello);
}

TEST(ShareWire, WelcomeRoundTrips) {
  Welcome w;
  w.readerId = 7;
  w.leaseEntries = 32;
  w.controlBytes = 8192;
  w.slotBytes = 1ull << 33;
  w.leaseBytes = 4096;
  w.sessionId = 0x0123456789ABCDEFull;
  const auto back = decodeWelcome(encodeWelcome(w));
  EXPECT_EQ(back.transport, Transport::kHostMemfd);
  EXPECT_EQ(back.readerId, 7u);
  EXPECT_EQ(back.slotBytes, 1ull << 33);
  EXPECT_EQ(back.sessionId, 0x0123456789ABCDEFull);
}

TEST(ShareWire, RejectCarriesCodeAndReason) {
  const auto back = decodeReject(encodeReject(Reject{Errc::kUnavailable, "uid 65534 may not subscribe"}));
  EXPECT_EQ(back.code, Errc::kUnavailable);
  EXPECT_EQ(back.reason, "uid 65534 may not subscribe");
}

TEST(ShareWire, RejectReasonIsBounded) {
  const auto bytes = encodeReject(Reject{Errc::kProtocol, std::string(5000, 'x')});
  EXPECT_LE(bytes.size(), kMaxMessageBytes);
  EXPECT_EQ(decodeReject(bytes).reason.size(), 1024u);
}

void expectProtocolError(const std::vector<std::uint8_t>& bytes, const std::string& fragment) {
  try {
    decodeHello(bytes);
    ADD_FAILURE() << "decodeHello accepted a malformed message";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kProtocol);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ShareWire, RejectsShortMessages) {
  auto bytes = encodeHello(Hello{});
  bytes.resize(10);
  expectProtocolError(bytes, "shorter than the 16-byte header");
}

TEST(ShareWire, RejectsBadMagic) {
  auto bytes = encodeHello(Hello{});
  bytes[0] ^= 0xFF;
  expectProtocolError(bytes, "bad magic");
}

TEST(ShareWire, RejectsLengthThatDisagreesWithTheMessage) {
  auto bytes = encodeHello(Hello{});
  bytes.pop_back();  // truncated payload
  expectProtocolError(bytes, "payload bytes");
  auto huge = encodeHello(Hello{});
  huge[8] = huge[9] = huge[10] = huge[11] = 0xFF;  // announces 4 GiB
  expectProtocolError(huge, "payload bytes");
}

TEST(ShareWire, RejectsOversizedMessages) {
  std::vector<std::uint8_t> bytes = encodeHello(Hello{});
  bytes.resize(kMaxMessageBytes + 1);
  expectProtocolError(bytes, "exceeds");
}

TEST(ShareWire, RejectsWrongTypeAndWrongPayloadSize) {
  expectProtocolError(encodeWelcome(Welcome{}), "expected a Hello");
  auto bytes = encodeHello(Hello{});
  bytes.push_back(0);
  bytes[8] = static_cast<std::uint8_t>(bytes.size() - kHeaderBytes);
  expectProtocolError(bytes, "Hello payload of 13 bytes");
}

TEST(ShareWire, HeaderVersionIsReportedNotJudged) {
  const auto bytes = encodeHello(Hello{2, 2, kAcceptHost, 1}, 2);
  EXPECT_EQ(decodeHeader(bytes).version, 2);
}

}  // namespace
}  // namespace zerohop::share_detail
