#include "stream/video_offer.hpp"

#include <gtest/gtest.h>

#include <string>

#include "test_sdp.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

using test::chromiumOffer;
using test::withoutLines;

Errc codeOf(const std::string& sdp) {
  try {
    chooseH264(sdp);
  } catch (const Error& e) {
    return e.code();
  }
  return Errc::kInternal;  // "accepted"
}

TEST(H264Offer, ChromiumOfferPicks42e01fAndItsRtx) {
  const std::string offer = chromiumOffer();
  const int expected = test::offered42e01fPayloadType(offer);
  ASSERT_GT(expected, 0) << "the captured offer has no 42e01f packetization-mode=1 entry";
  const VideoChoice c = chooseH264(offer);
  EXPECT_EQ(c.payloadType, expected);
  EXPECT_EQ(c.profileLevelId, "42e01f");
  EXPECT_EQ(c.mediaIndex, 0);
  EXPECT_TRUE(c.nackFeedback) << "Chromium offers a=rtcp-fb:<pt> nack: its receiver reports are checked against its NACKs";
  // Chromium pairs every codec with an rtx payload type: a=fmtp:<rtx> apt=<pt>.
  EXPECT_NE(offer.find("a=fmtp:" + std::to_string(c.rtxPayloadType) + " apt=" + std::to_string(expected)),
            std::string::npos);
}

TEST(H264Offer, FallsBackToBaselineWhen42e01fIsAbsent) {
  const std::string offer = withoutLines(chromiumOffer(), R"(a=fmtp:\d+ .*profile-level-id=42e01f)");
  const VideoChoice c = chooseH264(offer);
  EXPECT_EQ(c.profileLevelId, "42001f");
  EXPECT_NE(offer.find("a=fmtp:" + std::to_string(c.payloadType) +
                       " level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f"),
            std::string::npos);
}

TEST(H264Offer, PrefersConstrainedBaselineOverBaselineRegardlessOfOrder) {
  const std::string sdp =
      "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
      "m=video 9 UDP/TLS/RTP/SAVPF 100 101\r\na=ice-ufrag:u\r\na=ice-pwd:p\r\na=fingerprint:sha-256 AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB\r\n"
      "a=recvonly\r\na=rtpmap:100 H264/90000\r\na=fmtp:100 packetization-mode=1;profile-level-id=42001f\r\n"
      "a=rtpmap:101 h264/90000\r\na=fmtp:101 profile-level-id=42C01E;packetization-mode=1\r\n";
  const VideoChoice c = chooseH264(sdp);
  EXPECT_EQ(c.payloadType, 101);
  EXPECT_EQ(c.profileLevelId, "42c01e");
  EXPECT_EQ(c.rtxPayloadType, -1);
  EXPECT_FALSE(c.nackFeedback) << "no a=rtcp-fb nack offered";
}

TEST(H264Offer, MalformedOffersAreInvalidArgument) {
  for (const std::string& bad :
       {std::string(), std::string("hello"), std::string("\r\n\r\n"),
        std::string("v=1\r\nm=video 9 RTP/AVP 96\r\n"), std::string("v=0\r\ns=-\r\n"),
        std::string("v=0\r\nm=video\r\n"), std::string("v=0\r\nm=video x RTP/AVP 96\r\n"),
        std::string("v=0\r\nthis is not sdp\r\n"),
        std::string("v=0\r\nm=video 9 RTP/AVP 96\r\na=rtpmap:999 H264/90000\r\n"),
        std::string("v=0\r\nm=video 9 RTP/AVP 96\x01\r\n"), std::string("{\"sdp\": \"v=0\"}")}) {
    EXPECT_EQ(codeOf(bad), Errc::kInvalidArgument) << "input: " << bad;
  }
  // A real offer stripped of its DTLS fingerprint cannot make a WebRTC session.
  EXPECT_EQ(codeOf(withoutLines(chromiumOffer(), "a=fingerprint:.*")), Errc::kInvalidArgument);
}

TEST(H264Offer, OffersWithoutUsableH264AreUnsupported) {
  const std::string offer = chromiumOffer();
  // VP8/VP9/AV1 only: every H264 rtpmap removed.
  const std::string noH264 = withoutLines(offer, R"(a=rtpmap:\d+ H264/90000)");
  try {
    chooseH264(noH264);
    FAIL() << "accepted an offer without H.264";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("42e01f"), std::string::npos) << e.what();
  }
  // H.264 only with packetization-mode=0, or only Main/High profiles.
  EXPECT_EQ(codeOf(withoutLines(offer, R"(a=fmtp:\d+ .*packetization-mode=1.*)")), Errc::kUnsupported);
  EXPECT_EQ(codeOf(withoutLines(offer, R"(a=fmtp:\d+ .*profile-level-id=42.*)")), Errc::kUnsupported);
  // The viewer wants to send, not receive.
  std::string sendonly = offer;
  sendonly.replace(sendonly.find("a=recvonly"), 10, "a=sendonly");
  EXPECT_EQ(codeOf(sendonly), Errc::kUnsupported);
  // Audio only.
  EXPECT_EQ(codeOf("v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n"),
            Errc::kUnsupported);
}

TEST(VideoOffer, Vp8WhenTheOfferHasNoUsableH264AndTheStreamCanSendIt) {
  const std::string offer = withoutLines(chromiumOffer(), R"(a=rtpmap:\d+ H264/90000)");
  const VideoChoice c = chooseVideo(offer, SendableCodecs{true, {}});
  EXPECT_EQ(c.codec, Codec::kVP8);
  EXPECT_NE(offer.find("a=rtpmap:" + std::to_string(c.payloadType) + " VP8/90000"), std::string::npos);
  EXPECT_TRUE(c.profileLevelId.empty());
  EXPECT_NE(offer.find("a=fmtp:" + std::to_string(c.rtxPayloadType) + " apt=" + std::to_string(c.payloadType)),
            std::string::npos);
  EXPECT_FALSE(c.extensions.empty()) << "the offer's extensions are kept for VP8 too";
  // H.264 stays the choice whenever it is usable, VP8 or not.
  EXPECT_EQ(chooseVideo(chromiumOffer(), SendableCodecs{true, {}}).codec, Codec::kH264);
}

TEST(VideoOffer, RefusalListsWhatTheOfferHadAndWhatTheServerSends) {
  const std::string offer = withoutLines(chromiumOffer(), R"(a=rtpmap:\d+ H264/90000)");
  try {
    chooseVideo(offer, SendableCodecs{false, "the camera's H.264 is passed through undecoded"});
    FAIL() << "accepted a VP8 offer the stream cannot serve";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(what.find("it has no usable H.264 (it offers VP8, VP9"), std::string::npos) << what;
    EXPECT_NE(what.find("H.264 Constrained Baseline"), std::string::npos) << what;
    EXPECT_NE(what.find("the camera's H.264 is passed through undecoded"), std::string::npos) << what;
  }
  // Main-profile H.264 only, to a server that can send VP8 but the offer has none either.
  const std::string sdp =
      "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
      "m=video 9 UDP/TLS/RTP/SAVPF 100\r\na=ice-ufrag:u\r\na=ice-pwd:p\r\na=fingerprint:sha-256 AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB\r\n"
      "a=recvonly\r\na=rtpmap:100 H264/90000\r\na=fmtp:100 packetization-mode=1;profile-level-id=4d001f\r\n";
  try {
    chooseVideo(sdp, SendableCodecs{true, {}});
    FAIL() << "accepted Main-profile H.264";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no usable H.264 and no VP8 (it offers H264 4d001f/mode 1); this server "
                                         "sends H.264 Constrained Baseline (packetization-mode=1, profile-level-id "
                                         "42e01f) or VP8"),
              std::string::npos)
        << e.what();
  }
}


// An offer of two Constrained Baseline formats: 42e01f (level 3.1, first) and 42e028 (level 4.0).
std::string twoLevelOffer() {
  return "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
         "m=video 9 UDP/TLS/RTP/SAVPF 100 101\r\na=ice-ufrag:u\r\na=ice-pwd:p\r\na=fingerprint:sha-256 AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB\r\n"
         "a=recvonly\r\na=rtpmap:100 H264/90000\r\n"
         "a=fmtp:100 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r\n"
         "a=rtpmap:101 H264/90000\r\na=fmtp:101 packetization-mode=1;profile-level-id=42e028\r\n";
}

VideoChoice chooseAtLevel(const std::string& sdp, int level) {
  SendableCodecs s;
  s.h264Level = level;
  return chooseVideo(sdp, s);
}

TEST(H264OfferLevel, ProfileLevelIdLevelReadsTheLevelAnd1b) {
  EXPECT_EQ(profileLevelIdLevel("42e01f"), 31);
  EXPECT_EQ(profileLevelIdLevel("42E028"), 40);
  EXPECT_EQ(profileLevelIdLevel("42e02a"), 42);
  EXPECT_EQ(profileLevelIdLevel("42f00b"), 9) << "constraint_set3 with level_idc 11 is level 1b";
  EXPECT_EQ(profileLevelIdLevel("42e00b"), 11);
  EXPECT_EQ(profileLevelIdLevel("42e0"), 0);
  EXPECT_EQ(levelName(31), "3.1");
  EXPECT_EQ(levelName(40), "4.0");
  EXPECT_EQ(levelName(9), "1b");
}

TEST(H264OfferLevel, AFormatWhoseLevelCoversTheStreamIsPreferred) {
  const std::string offer = twoLevelOffer();
  VideoChoice c = chooseAtLevel(offer, 40);  // 1080p30
  EXPECT_EQ(c.payloadType, 101);
  EXPECT_EQ(c.profileLevelId, "42e028");
  EXPECT_TRUE(c.levelCovered);
  EXPECT_EQ(c.offeredLevel, 40);
  EXPECT_EQ(c.streamLevel, 40);
  EXPECT_FALSE(c.levelAsymmetryAllowed);

  c = chooseAtLevel(offer, 31);  // 720p30: both cover it, so 42e01f as before
  EXPECT_EQ(c.payloadType, 100);
  EXPECT_TRUE(c.levelCovered);
  EXPECT_TRUE(c.levelAsymmetryAllowed);

  c = chooseAtLevel(offer, 0);  // level not known (nothing published yet): today's choice
  EXPECT_EQ(c.payloadType, 100);
  EXPECT_TRUE(c.levelCovered);
  EXPECT_EQ(c.streamLevel, 0);
}

TEST(H264OfferLevel, NoOfferedLevelCoversTheStreamStillServesAndSaysSo) {
  const VideoChoice c = chooseAtLevel(twoLevelOffer(), 42);  // 1080p60
  EXPECT_EQ(c.payloadType, 100) << "no format covers 4.2: the usual order decides";
  EXPECT_FALSE(c.levelCovered);
  EXPECT_EQ(c.offeredLevel, 31);
  EXPECT_EQ(c.streamLevel, 42);
  // A covering plain Baseline beats a Constrained Baseline that does not cover.
  const std::string withBaseline40 = twoLevelOffer() + "";
  const std::string sdp = test::withoutLines(withBaseline40, R"(a=fmtp:101 .*)") +
                          "a=fmtp:101 packetization-mode=1;profile-level-id=42002a\r\n";
  const VideoChoice b = chooseAtLevel(sdp, 42);
  EXPECT_EQ(b.payloadType, 101);
  EXPECT_TRUE(b.levelCovered);
}

// The stream's level at the usual sizes against a browser's offer (Chromium: 42e01f and 42001f, level 3.1
// only). The levels are h264LevelIdc's (ITU-T H.264 Table A-1), checked at these sizes by
// H264Level.LowestLevelThatHoldsTheStreamNeverBelow31 (tests/encode): 720p30 3600 macroblocks x 30 = 108,000/s
// (3.1), 720p60 216,000/s (3.2), 1080p30 8160 x 30 = 244,800/s (4.0), 1080p60 489,600/s (4.2).
TEST(H264OfferLevel, ChromiumsLevel31CoversOnly720p30) {
  struct Case {
    std::uint32_t w, h;
    double fps;
    int level;
  };
  for (const Case& k : {Case{1280, 720, 30, 31}, Case{1280, 720, 60, 32}, Case{1920, 1080, 30, 40},
                        Case{1920, 1080, 60, 42}}) {
    SCOPED_TRACE(std::to_string(k.w) + "x" + std::to_string(k.h) + "@" + std::to_string(k.fps));
    const int level = k.level;
    const VideoChoice c = chooseAtLevel(chromiumOffer(), level);
    EXPECT_EQ(c.profileLevelId, "42e01f");
    EXPECT_EQ(c.levelCovered, level <= 31);
    EXPECT_TRUE(c.levelAsymmetryAllowed);
  }
}

}  // namespace
}  // namespace zerohop::stream
