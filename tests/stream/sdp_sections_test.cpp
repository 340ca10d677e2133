// Answers accept only what serve sends: the offer cut down to the chosen video section for webrtcbin,
// every other section answered rejected (port 0), and the offer checks a hostile peer meets first
// (a garbage DTLS fingerprint; a WHIP answer without usable video).
#include "stream/sdp_sections.hpp"

#include <gtest/gtest.h>

#include <string>

#include "stream/video_offer.hpp"
#include "test_sdp.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

const std::string kFingerprint =
    "a=fingerprint:sha-256 AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB\r\n";

// What a hostile WHEP viewer offers: audio, then the video serve sends, then a data channel, bundled.
std::string audioVideoDataOffer() {
  return "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE a v d\r\n" + kFingerprint +
         "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:a\r\na=ice-ufrag:u\r\na=ice-pwd:p\r\n"
         "a=sendrecv\r\na=rtpmap:111 opus/48000/2\r\n"
         "m=video 9 UDP/TLS/RTP/SAVPF 100\r\nc=IN IP4 0.0.0.0\r\na=mid:v\r\na=ice-ufrag:u\r\na=ice-pwd:p\r\n"
         "a=recvonly\r\na=rtpmap:100 H264/90000\r\na=fmtp:100 packetization-mode=1;profile-level-id=42e01f\r\n"
         "m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:d\r\n"
         "a=ice-ufrag:u\r\na=ice-pwd:p\r\na=sctp-port:5000\r\na=max-message-size:262144\r\n";
}

TEST(OfferSections, WebrtcbinSeesOnlyTheChosenVideoSection) {
  const std::string offer = audioVideoDataOffer();
  const VideoChoice choice = chooseH264(offer);
  ASSERT_EQ(choice.mediaIndex, 1);
  const OfferCut cut = keepOnlySection(offer, choice.mediaIndex);
  EXPECT_EQ(cut.offer.find("m=application"), std::string::npos) << cut.offer;
  EXPECT_EQ(cut.offer.find("sctp-port"), std::string::npos) << cut.offer;
  EXPECT_EQ(cut.offer.find("m=audio"), std::string::npos) << cut.offer;
  EXPECT_NE(cut.offer.find("a=group:BUNDLE v\r\n"), std::string::npos) << "the group names the kept mid only: " << cut.offer;
  EXPECT_NE(cut.offer.find("m=video 9 UDP/TLS/RTP/SAVPF 100\r\nc=IN IP4 0.0.0.0\r\na=mid:v\r\n"), std::string::npos);
  EXPECT_NE(cut.offer.find(kFingerprint), std::string::npos) << "session lines are kept";
  // What webrtcbin is given is still an offer serve accepts, its video now the first section.
  EXPECT_EQ(chooseH264(cut.offer).mediaIndex, 0);
  ASSERT_EQ(cut.rejectedKinds.size(), 2u);
  EXPECT_EQ(cut.rejectedKinds[0], "audio");
  EXPECT_EQ(cut.rejectedKinds[1], "application");
}

TEST(OfferSections, TheAnswerRejectsEveryOtherSectionInOfferOrder) {
  const OfferCut cut = keepOnlySection(audioVideoDataOffer(), 1);
  const std::string webrtcbinAnswer =
      "v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE v\r\n"
      "m=video 9 UDP/TLS/RTP/SAVPF 100\r\nc=IN IP4 0.0.0.0\r\na=ice-ufrag:U\r\na=ice-pwd:P\r\na=mid:v\r\n"
      "a=setup:active\r\na=fingerprint:sha-256 F0\r\na=sendonly\r\n";
  const std::string answer = withRejectedSections(webrtcbinAnswer, cut);
  // Each rejected section also carries the answer's credentials, fingerprint and role (webrtcbin as a
  // viewer checks them in every section).
  const std::string transport = "a=ice-ufrag:U\r\na=ice-pwd:P\r\na=setup:active\r\na=fingerprint:sha-256 F0\r\n";
  EXPECT_EQ(answer,
            "v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE v\r\n"
            "m=audio 0 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:a\r\n" + transport +
            webrtcbinAnswer.substr(webrtcbinAnswer.find("m=video")) +
            "m=application 0 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:d\r\n" + transport);
}

TEST(OfferSections, ChromiumsOfferPassesUnchanged) {
  const std::string offer = test::chromiumOffer();
  const OfferCut cut = keepOnlySection(offer, chooseH264(offer).mediaIndex);
  EXPECT_EQ(test::withoutLines(cut.offer, "$^"), test::withoutLines(offer, "$^")) << "one bundled video section: nothing to cut";
  EXPECT_TRUE(cut.before.empty());
  EXPECT_TRUE(cut.after.empty());
  EXPECT_EQ(withRejectedSections("v=0\r\nm=video 9 X 1\r\n", cut), "v=0\r\nm=video 9 X 1\r\n");
}

TEST(OfferSections, AVideoSectionWithoutMidIsRefused) {
  const std::string offer = test::withoutLines(test::chromiumOffer(), "a=mid:.*");
  try {
    keepOnlySection(offer, 0);
    FAIL() << "an offer without a=mid went on to webrtcbin";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no a=mid"), std::string::npos) << e.what();
  }
  EXPECT_THROW(keepOnlySection(test::chromiumOffer(), 1), Error) << "there is no second section";
}

TEST(OfferFingerprint, AGarbageDtlsFingerprintIsRefusedAtOfferTimeSayingWhy) {
  const std::string good = test::chromiumOffer();
  for (const std::string& bad : {std::string("a=fingerprint:sha-256 00"), std::string("a=fingerprint:sha-256 zz"),
                                 std::string("a=fingerprint:sha-999 AB:CD"), std::string("a=fingerprint:garbage"),
                                 std::string("a=fingerprint:sha-1 AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB"),
                                 std::string("a=fingerprint:sha-256 ABAB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:")}) {
    const std::string offer = test::withoutLines(good, "a=fingerprint:.*") + bad + "\r\n";
    try {
      chooseH264(offer);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << bad;  // 400 at offer time
      EXPECT_NE(std::string(e.what()).find("DTLS handshake could not check"), std::string::npos) << e.what();
    }
  }
  // The well-formed ones of every hash function in RFC 8122's registry, in either case.
  for (const auto& [hash, bytes] : {std::pair{"sha-1", 20}, {"SHA-256", 32}, {"sha-512", 64}, {"md5", 16}}) {
    std::string fp = std::string("a=fingerprint:") + hash + " ";
    for (int i = 0; i < bytes; ++i) fp += i == 0 ? "0f" : ":A0";
    EXPECT_NO_THROW(chooseH264(test::withoutLines(good, "a=fingerprint:.*") + fp + "\r\n")) << fp;
  }
}

std::string answerWith(const std::string& media) {
  return "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n" + kFingerprint + media;
}

TEST(PublishAnswer, AnAnswerWithoutUsableVideoIsRefusedSayingWhatItHad) {
  EXPECT_NO_THROW(checkPublishAnswer(answerWith("m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=recvonly\r\n"), 96));
  const struct {
    std::string media, says;
  } cases[] = {
      {"m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=recvonly\r\n", "it has m=audio port 9 recvonly"},
      {"m=video 0 UDP/TLS/RTP/SAVPF 96\r\n", "m=video port 0"},
      {"m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=inactive\r\n", "m=video port 9 inactive"},
      {"m=video 9 UDP/TLS/RTP/SAVPF 97\r\na=recvonly\r\n", "payload type 96"},
  };
  for (const auto& c : cases) {
    try {
      checkPublishAnswer(answerWith(c.media), 96);
      ADD_FAILURE() << "accepted " << c.media;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kProtocol);
      EXPECT_NE(std::string(e.what()).find("no usable video section"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
  try {
    checkPublishAnswer("<html>hello</html>", 96);
    ADD_FAILURE() << "accepted HTML";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kProtocol);
    EXPECT_NE(std::string(e.what()).find("not usable SDP"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zerohop::stream

namespace zerohop::stream {
namespace {

// Sound (issue 35): the chosen audio section reaches webrtcbin beside the video; the rest is rejected in place.
TEST(OfferSections, TheChosenAudioSectionIsKeptBesideTheVideo) {
  const std::string offer = audioVideoDataOffer();
  const auto audio = chooseAudio(offer);
  ASSERT_TRUE(audio.has_value());
  EXPECT_EQ(audio->mediaIndex, 0);
  EXPECT_EQ(audio->payloadType, 111);
  const OfferCut cut = keepSections(offer, 1, audio->mediaIndex);
  EXPECT_NE(cut.offer.find("a=group:BUNDLE a v\r\n"), std::string::npos) << cut.offer;
  const std::size_t a = cut.offer.find("m=audio 9 "), v = cut.offer.find("m=video 9 ");
  ASSERT_NE(a, std::string::npos) << cut.offer;
  ASSERT_NE(v, std::string::npos) << cut.offer;
  EXPECT_LT(a, v) << "offer order kept";
  EXPECT_EQ(cut.offer.find("m=application"), std::string::npos) << cut.offer;
  ASSERT_EQ(cut.rejectedKinds.size(), 1u);
  EXPECT_EQ(cut.rejectedKinds[0], "application");
  EXPECT_TRUE(cut.before.empty());
  EXPECT_TRUE(cut.between.empty());
  EXPECT_EQ(cut.after.size(), 1u);
}

TEST(OfferSections, ARejectedSectionBetweenTheKeptOnesStaysInItsPlace) {
  const std::string offer =
      "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE v d a\r\n" + kFingerprint +
      "m=video 9 UDP/TLS/RTP/SAVPF 100\r\nc=IN IP4 0.0.0.0\r\na=mid:v\r\na=recvonly\r\na=rtpmap:100 H264/90000\r\n"
      "m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:d\r\na=sctp-port:5000\r\n"
      "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:a\r\na=recvonly\r\na=rtpmap:111 opus/48000/2\r\n";
  const OfferCut cut = keepSections(offer, 0, 2);
  EXPECT_NE(cut.offer.find("a=group:BUNDLE v a\r\n"), std::string::npos) << cut.offer;
  ASSERT_EQ(cut.between.size(), 1u);
  const std::string webrtcbinAnswer =
      "v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE v a\r\n"
      "m=video 9 UDP/TLS/RTP/SAVPF 100\r\nc=IN IP4 0.0.0.0\r\na=ice-ufrag:U\r\na=ice-pwd:P\r\na=mid:v\r\n"
      "a=setup:active\r\na=fingerprint:sha-256 F0\r\na=sendonly\r\n"
      "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=ice-ufrag:U\r\na=ice-pwd:P\r\na=mid:a\r\n"
      "a=setup:active\r\na=fingerprint:sha-256 F0\r\na=sendonly\r\n";
  const std::string answer = withRejectedSections(webrtcbinAnswer, cut);
  const std::size_t v = answer.find("m=video 9 "), d = answer.find("m=application 0 "), a = answer.find("m=audio 9 ");
  ASSERT_NE(v, std::string::npos) << answer;
  ASSERT_NE(d, std::string::npos) << answer;
  ASSERT_NE(a, std::string::npos) << answer;
  EXPECT_LT(v, d) << answer;
  EXPECT_LT(d, a) << answer;
}

TEST(AudioOffer, OnlyAReceivingOpusSectionIsChosen) {
  const std::string head = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n";
  const std::string video = "m=video 9 UDP/TLS/RTP/SAVPF 100\r\na=mid:v\r\na=rtpmap:100 H264/90000\r\n";
  EXPECT_FALSE(chooseAudio(head + video).has_value()) << "no audio section: video only";
  EXPECT_FALSE(chooseAudio(head + video + "m=audio 0 UDP/TLS/RTP/SAVPF 111\r\na=mid:a\r\na=rtpmap:111 opus/48000/2\r\n"))
      << "port 0";
  EXPECT_TRUE(chooseAudio(head + video + "m=audio 0 UDP/TLS/RTP/SAVPF 111\r\na=mid:a\r\na=bundle-only\r\n"
                                         "a=rtpmap:111 opus/48000/2\r\n"))
      << "port 0 with a=bundle-only is open (RFC 8843)";
  EXPECT_FALSE(chooseAudio(head + video + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:a\r\na=sendonly\r\n"
                                          "a=rtpmap:111 opus/48000/2\r\n"))
      << "the offerer would not receive";
  EXPECT_FALSE(chooseAudio(head + video + "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:a\r\na=rtpmap:0 PCMU/8000\r\n"))
      << "no Opus";
  const auto second = chooseAudio(head + video + "m=audio 0 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n" +
                                  "m=audio 9 UDP/TLS/RTP/SAVPF 0 109\r\na=mid:b\r\na=rtpmap:0 PCMU/8000\r\n"
                                  "a=rtpmap:109 OPUS/48000/2\r\n");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->mediaIndex, 2);
  EXPECT_EQ(second->payloadType, 109);
}

// An offer of sound alone (issue 35): no video section that receives, an Opus one that does. A video
// section that receives, even one without a codec we send, is chooseVideo()'s to answer or refuse.
TEST(AudioOffer, SoundAloneIsAnOfferWithoutAReceivingVideoSection) {
  const std::string head =
      "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=ice-ufrag:u\r\na=ice-pwd:p\r\n" + kFingerprint;
  const std::string audio =
      "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:a\r\na=recvonly\r\na=rtpmap:111 opus/48000/2\r\n";
  const auto alone = chooseAudioOnly(head + audio);
  ASSERT_TRUE(alone.has_value());
  EXPECT_FALSE(alone->hasVideo());
  EXPECT_EQ(alone->codec, Codec::kOpus);
  ASSERT_TRUE(alone->audio.has_value());
  EXPECT_EQ(alone->audio->mediaIndex, 0);
  EXPECT_EQ(alone->audio->payloadType, 111);

  const std::string rejectedVideo =
      "m=video 0 UDP/TLS/RTP/SAVPF 100\r\na=mid:v\r\na=rtpmap:100 H264/90000\r\n";
  const auto afterRejected = chooseAudioOnly(head + rejectedVideo + audio);
  ASSERT_TRUE(afterRejected.has_value()) << "a rejected video section (port 0) asks for nothing";
  EXPECT_EQ(afterRejected->audio->mediaIndex, 1);
  const std::string inactiveVideo =
      "m=video 9 UDP/TLS/RTP/SAVPF 100\r\na=mid:v\r\na=inactive\r\na=rtpmap:100 H264/90000\r\n";
  EXPECT_TRUE(chooseAudioOnly(head + inactiveVideo + audio).has_value()) << "nor does an inactive one";

  const std::string vp9Video =
      "m=video 9 UDP/TLS/RTP/SAVPF 98\r\na=mid:v\r\na=recvonly\r\na=rtpmap:98 VP9/90000\r\n";
  EXPECT_FALSE(chooseAudioOnly(head + vp9Video + audio).has_value())
      << "a receiving video section is answered or refused by chooseVideo(), never dropped for the sound";
  EXPECT_FALSE(chooseAudioOnly(head + "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:a\r\na=rtpmap:0 PCMU/8000\r\n"))
      << "no Opus: nothing to send";
  for (const std::string& malformed : {std::string("not sdp"), head}) {  // head: no m= line at all
    try {
      (void)chooseAudioOnly(malformed);
      ADD_FAILURE() << "a malformed offer is an error, as chooseVideo() says: " << malformed;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
    }
  }
}

// Of the audio section's a=extmap lines only abs-capture-time is kept (the one the audio track sends), with
// the offer's id; one the offerer would not receive, or an id offered twice, is passed over; the video
// section's lines are not the audio's.
TEST(AudioOffer, OnlyAbsCaptureTimeIsKeptFromTheAudioSection) {
  const std::string head = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n";
  const std::string abs = std::string(kAbsCaptureTimeUri), twcc = std::string(kTransportWideCcUri);
  const std::string video = "m=video 9 UDP/TLS/RTP/SAVPF 100\r\na=mid:v\r\na=extmap:7 " + abs + "\r\n";
  const std::string audio = "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:a\r\na=rtpmap:111 opus/48000/2\r\n";
  const auto kept =
      chooseAudio(head + video + audio + "a=extmap:3 " + twcc + "\r\na=extmap:9 " + abs + "\r\n");
  ASSERT_TRUE(kept.has_value());
  ASSERT_EQ(kept->extensions.size(), 1u);
  EXPECT_EQ(kept->extensions[0].id, 9);
  EXPECT_EQ(kept->extensions[0].uri, abs);
  EXPECT_TRUE(chooseAudio(head + video + audio)->extensions.empty())
      << "the video section's extmap is its own";
  EXPECT_TRUE(chooseAudio(head + audio + "a=extmap:9/sendonly " + abs + "\r\n")->extensions.empty());
  EXPECT_TRUE(
      chooseAudio(head + audio + "a=extmap:9 " + abs + "\r\na=extmap:9 " + twcc + "\r\n")->extensions.empty())
      << "an id offered twice means nothing";
}

}  // namespace
}  // namespace zerohop::stream
