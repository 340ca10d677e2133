// The RTP header extension payloads against their specs' own figures (webrtc.org's playout-delay and
// abs-capture-time pages, the NTP timestamp format of RFC 3550 / RFC 5905), and parse-back.
#include "stream/rtp_extension_payloads.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "stream/video_offer.hpp"
#include "test_sdp.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

using Bytes3 = std::array<std::uint8_t, 3>;

// The spec's use cases: 0 ms (render at once), 100/150/200 ms (interactive), 400 ms (streaming), and
// its range, 0 - 40950 ms in steps of 10 ms: 12 bits MIN, then 12 bits MAX, big-endian.
TEST(PlayoutDelayPayload, TwelveBitFieldsInUnitsOfTenMilliseconds) {
  EXPECT_EQ(encodePlayoutDelay({0, 0}), (Bytes3{0x00, 0x00, 0x00}));
  EXPECT_EQ(encodePlayoutDelay({100, 200}), (Bytes3{0x00, 0xa0, 0x14}));       // MIN 10, MAX 20
  EXPECT_EQ(encodePlayoutDelay({150, 150}), (Bytes3{0x00, 0xf0, 0x0f}));       // MIN = MAX = 15
  EXPECT_EQ(encodePlayoutDelay({400, 40950}), (Bytes3{0x02, 0x8f, 0xff}));     // MIN 40, MAX 4095
  EXPECT_EQ(encodePlayoutDelay({40950, 40950}), (Bytes3{0xff, 0xff, 0xff}));   // the top of the range
  EXPECT_EQ(encodePlayoutDelay({10, 0x123 * 10}), (Bytes3{0x00, 0x11, 0x23}));  // MIN's low nibble shares a byte
}

TEST(PlayoutDelayPayload, ParsesBack) {
  for (const PlayoutDelay d : {PlayoutDelay{0, 0}, PlayoutDelay{100, 200}, PlayoutDelay{0, 40950},
                               PlayoutDelay{40950, 40950}, PlayoutDelay{2730, 1370 * 3}}) {
    const auto bytes = encodePlayoutDelay(d);
    const auto back = decodePlayoutDelay(bytes.data(), bytes.size());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, d) << d.minMs << "," << d.maxMs;
  }
  const std::uint8_t four[4] = {0, 0, 0, 0};
  EXPECT_FALSE(decodePlayoutDelay(four, 4).has_value()) << "the payload is exactly 3 bytes";
  EXPECT_FALSE(decodePlayoutDelay(four, 2).has_value());
}

TEST(PlayoutDelayPayload, OptionTextIsCheckedWithTheReason) {
  EXPECT_EQ(parsePlayoutDelay("0,0", "--playout-delay"), (PlayoutDelay{0, 0}));
  EXPECT_EQ(parsePlayoutDelay(" 100 , 200 ", "--playout-delay"), (PlayoutDelay{100, 200}));
  auto why = [](const std::string& text) {
    try {
      parsePlayoutDelay(text, "--playout-delay");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(why("200,100").find("MIN is above MAX"), std::string::npos) << why("200,100");
  EXPECT_NE(why("5,10").find("multiples of 10"), std::string::npos) << why("5,10");
  EXPECT_NE(why("0,40960").find("0..40950"), std::string::npos) << why("0,40960");
  EXPECT_NE(why("-10,0").find("0..40950"), std::string::npos) << why("-10,0");
  for (const char* bad : {"", "0", "0,", ",0", "a,b", "0,0,0", "1e2,200"}) {
    EXPECT_NE(why(bad).find("expected MIN,MAX"), std::string::npos) << "\"" << bad << "\": " << why(bad);
  }
}

// UQ32.32: seconds since 1900-01-01 in the high 32 bits, the fraction of a second in the low 32.
TEST(AbsCaptureTimePayload, UnixTimeToNtpKnownValues) {
  EXPECT_EQ(unixNsToNtp(0), 0x83aa7e80'00000000ull);  // 1970-01-01: 2208988800 s after 1900
  EXPECT_EQ(unixNsToNtp(946684800'000000000), 0xbc17c200'00000000ull);          // 2000-01-01T00:00:00Z
  EXPECT_EQ(unixNsToNtp(946684800'500000000), 0xbc17c200'80000000ull);          // + 0.5 s
  EXPECT_EQ(unixNsToNtp(946684800'250000000), 0xbc17c200'40000000ull);          // + 0.25 s
  EXPECT_EQ(unixNsToNtp(946684800'001000000), 0xbc17c200'00418937ull);          // + 1 ms = 2^32/1000, rounded down
  EXPECT_EQ(unixNsToNtp(1796166891'000000000), 0xeeb9d36b'00000000ull);         // 2026-12-01T23:14:51Z
  // 2036-02-07T06:28:16Z: NTP era 0 ends and the 32-bit seconds wrap, as every NTP timestamp does.
  EXPECT_EQ(unixNsToNtp(2085978496'000000000), 0x00000000'00000000ull);
}

TEST(AbsCaptureTimePayload, NtpParsesBackToTheNanosecond) {
  for (const std::int64_t ns : {std::int64_t{0}, std::int64_t{1}, std::int64_t{999'999'999},
                                std::int64_t{946684800'001000000}, std::int64_t{1796166891'123456789}}) {
    EXPECT_EQ(ntpToUnixNs(unixNsToNtp(ns)), ns);
  }
  EXPECT_EQ(ntpToUnixNs(0xbc17c200'80000000ull), 946684800'500000000);
}

TEST(AbsCaptureTimePayload, EightOrSixteenBytesBigEndian) {
  std::uint8_t out[kAbsCaptureTimeMaxSize] = {};
  AbsCaptureTime v;
  v.captureNtp = 0x01020304'05060708ull;
  ASSERT_EQ(encodeAbsCaptureTime(v, out), 8u);  // the short form: no clock offset
  EXPECT_EQ(std::string(out, out + 8), std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  v.clockOffsetQ32 = -(std::int64_t{1} << 32);  // -1 s: two's complement Q32.32
  ASSERT_EQ(encodeAbsCaptureTime(v, out), 16u);
  EXPECT_EQ(std::string(out + 8, out + 16), std::string("\xff\xff\xff\xff\x00\x00\x00\x00", 8));

  const auto back = decodeAbsCaptureTime(out, 16);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->captureNtp, v.captureNtp);
  ASSERT_TRUE(back->clockOffsetQ32.has_value());
  EXPECT_EQ(*back->clockOffsetQ32, -(std::int64_t{1} << 32));
  const auto shortBack = decodeAbsCaptureTime(out, 8);
  ASSERT_TRUE(shortBack.has_value());
  EXPECT_FALSE(shortBack->clockOffsetQ32.has_value());
  EXPECT_FALSE(decodeAbsCaptureTime(out, 12).has_value()) << "only 8 or 16 bytes are defined";
}

// The offer's a=extmap lines: the ones we send are kept with the offer's ids; the rest, and lines we
// cannot use, are passed over without refusing the offer.
TEST(H264OfferExtensions, ChromiumOfferKeepsOurExtensionsWithItsIds) {
  const VideoChoice c = chooseH264(test::chromiumOffer());
  // The captured offer has transport-cc at 4 and playout-delay at 5; abs-capture-time only when the page
  // asks for it (setHeaderExtensionsToNegotiate), so not here.
  EXPECT_EQ(c.extensions, (std::vector<RtpExtension>{{4, std::string(kTransportWideCcUri)},
                                                      {5, std::string(kPlayoutDelayUri)}}));
  EXPECT_TRUE(c.transportCcFeedback);
}

TEST(H264OfferExtensions, UnusableExtmapLinesArePassedOver) {
  const std::string head =
      "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
      "m=video 9 UDP/TLS/RTP/SAVPF 100\r\na=ice-ufrag:u\r\na=ice-pwd:p\r\na=fingerprint:sha-256 AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB\r\n"
      "a=recvonly\r\na=rtpmap:100 H264/90000\r\na=fmtp:100 packetization-mode=1;profile-level-id=42e01f\r\n";
  const std::string abs(kAbsCaptureTimeUri), delay(kPlayoutDelayUri), twcc(kTransportWideCcUri);
  const VideoChoice c = chooseH264(head +
                                  "a=extmap:15 " + abs + "\r\n"            // 15 is reserved
                                  "a=extmap:3/sendonly " + delay + "\r\n"  // the offerer would not receive it
                                  "a=extmap:x " + twcc + "\r\n"            // no id
                                  "a=extmap:7\r\n"                          // no URI
                                  "a=extmap:22/recvonly " + abs + "\r\n"   // two-byte id, recvonly: kept
                                  "a=extmap:2 urn:ietf:params:rtp-hdrext:toffset\r\n"
                                  "a=extmap:2 " + twcc + "\r\n");          // id 2 named twice: neither
  EXPECT_EQ(c.extensions, (std::vector<RtpExtension>{{22, abs}}));
  EXPECT_FALSE(c.transportCcFeedback);
  const VideoChoice twice = chooseH264(head + "a=extmap:1 " + delay + "\r\na=extmap:2 " + delay + "\r\n" +
                                      "a=rtcp-fb:* transport-cc\r\n");
  EXPECT_EQ(twice.extensions, (std::vector<RtpExtension>{{1, delay}})) << "a URI offered twice: the first";
  EXPECT_TRUE(twice.transportCcFeedback) << "a=rtcp-fb:* applies to every payload type";
}

}  // namespace
}  // namespace zerohop::stream
