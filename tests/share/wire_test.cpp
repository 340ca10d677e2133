// Handshake message encoding: round trips and every way a foreign or broken peer can get it wrong.
#include "share/wire.hpp"
#include "share/wire_codes.hpp"

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

// The error category travels as the number docs/share-protocol.md lists ("Codes"), never as the
// C++ enum's ordinal; a number this build does not know reads as a protocol error.
TEST(ShareWire, RejectCodesAreTheDocumentedNumbers) {
  const std::pair<Errc, std::uint8_t> documented[] = {
      {Errc::kInvalidArgument, 0}, {Errc::kNotFound, 1}, {Errc::kUnavailable, 2}, {Errc::kUnsupported, 3},
      {Errc::kIo, 4},              {Errc::kDevice, 5},   {Errc::kProtocol, 6},    {Errc::kTimeout, 7},
      {Errc::kInternal, 8}};
  for (const auto& [code, number] : documented) {
    auto bytes = encodeReject(Reject{code, "why"});
    ASSERT_GE(bytes.size(), 20u);
    EXPECT_EQ(bytes[16], number) << errcName(code);  // the payload's first u32, little-endian
    EXPECT_EQ(bytes[17] | bytes[18] | bytes[19], 0);
    EXPECT_EQ(decodeReject(bytes).code, code);
    bytes[16] = 99;
    EXPECT_EQ(decodeReject(bytes).code, Errc::kProtocol) << "an unknown category";
  }
}

// Pixel formats and memory kinds in the control block and slot records: the documented numbers.
TEST(ShareWire, RingCodesAreTheDocumentedNumbers) {
  const std::pair<PixelFormat, std::uint32_t> formats[] = {
      {PixelFormat::kUnknown, 0}, {PixelFormat::kYUYV, 1},  {PixelFormat::kUYVY, 2}, {PixelFormat::kNV12, 3},
      {PixelFormat::kI420, 4},    {PixelFormat::kRGB24, 5}, {PixelFormat::kBGRx, 6}, {PixelFormat::kRGBA, 7},
      {PixelFormat::kMJPEG, 8},   {PixelFormat::kH264, 9},  {PixelFormat::kOpus, 11}};
  for (const auto& [format, number] : formats) {
    EXPECT_EQ(formatToWire(format), number) << formatName(format);
    EXPECT_EQ(formatFromWire(number), format);
  }
  EXPECT_FALSE(formatFromWire(10)) << "10 was VP8, which no ring held: never reused";
  EXPECT_FALSE(formatFromWire(12));
  EXPECT_EQ(memoryToWire(MemoryKind::kDevice), 2u);
  EXPECT_EQ(memoryFromWire(1), MemoryKind::kPinned);
  EXPECT_FALSE(memoryFromWire(3));
  EXPECT_EQ(matrixToWire(ColorMatrix::kBt709), 1);
  EXPECT_EQ(rangeToWire(ColorRange::kFull), 1);
  EXPECT_FALSE(matrixFromWire(2));
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
