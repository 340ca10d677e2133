// What a WHIP endpoint's answer takes of the simulcast offer (simulcast_sdp.hpp).
#include "stream/simulcast_sdp.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zerohop::stream {
namespace {

using Rids = std::vector<std::string>;

std::string answerWith(const std::string& videoLines) {
  return "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE video0 audio1\r\n"
         "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:video0\r\na=recvonly\r\na=rtpmap:96 H264/90000\r\n" +
         videoLines +
         "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:audio1\r\na=recvonly\r\na=rid:x recv\r\n"
         "a=simulcast:recv x\r\n";
}

TEST(SimulcastSdp, LayersAreNamedHighestFirst) {
  EXPECT_EQ(simulcastRid(0), "h");
  EXPECT_EQ(simulcastRid(1), "m");
  EXPECT_EQ(simulcastRid(2), "l");
  EXPECT_EQ(simulcastRid(3), "r3");
}

TEST(SimulcastSdp, TheAnswersRecvListInItsOrder) {
  EXPECT_EQ(simulcastReceivedRids(answerWith("a=rid:h recv\r\na=rid:m recv\r\na=rid:l recv\r\n"
                                             "a=simulcast:recv h;m;l\r\n")),
            (Rids{"h", "m", "l"}));
  // Janus answers in the order it was offered; another endpoint may reorder: the answer's order is kept.
  EXPECT_EQ(simulcastReceivedRids(answerWith("a=rid:l recv\r\na=rid:h recv\r\na=simulcast:recv l;h\r\n")),
            (Rids{"l", "h"}));
}

TEST(SimulcastSdp, PausedAlternativeAndUndeclaredStreamsAreLeftOut) {
  // "~m" paused; "l,x": alternatives, the first is what is sent; "q" has no a=rid line.
  EXPECT_EQ(
      simulcastReceivedRids(answerWith("a=rid:h recv\r\na=rid:m recv\r\na=rid:l recv\r\na=rid:x recv\r\n"
                                       "a=simulcast:recv h;~m;l,x;q\r\n")),
      (Rids{"h", "l"}));
  // A rid declared "send" is not one the endpoint receives.
  EXPECT_EQ(simulcastReceivedRids(answerWith("a=rid:h send\r\na=rid:m recv\r\na=simulcast:recv h;m\r\n")),
            (Rids{"m"}));
  // Both directions on one line (RFC 8853 §5.1): only the recv list counts.
  EXPECT_EQ(
      simulcastReceivedRids(answerWith("a=rid:h recv\r\na=rid:s send\r\na=simulcast:send s recv h\r\n")),
      (Rids{"h"}));
}

TEST(SimulcastSdp, AnAnswerWithoutSimulcastTakesNoLayers) {
  EXPECT_TRUE(simulcastReceivedRids(answerWith("")).empty());  // the audio section's lines do not count
  EXPECT_TRUE(simulcastReceivedRids("").empty());
  EXPECT_TRUE(simulcastReceivedRids("a=simulcast:recv h\r\na=rid:h recv\r\n").empty());  // no m-section
  EXPECT_TRUE(simulcastReceivedRids(answerWith("a=simulcast:recv\r\n")).empty());        // no list
  EXPECT_TRUE(simulcastReceivedRids(answerWith("a=simulcast:recv ;;~\r\na=rid: recv\r\n")).empty());
}

TEST(SimulcastSdp, TheFirstVideoSectionsMid) {
  EXPECT_EQ(
      firstVideoMid(
          "v=0\r\na=mid:x\r\nm=audio 9 RTP/SAVPF 111\r\na=mid:audio0\r\n"
          "m=video 9 RTP/SAVPF 96\r\na=sendonly\r\na=mid:video1\r\nm=video 9 RTP/SAVPF 96\r\na=mid:v2\r\n"),
      "video1");
  EXPECT_EQ(firstVideoMid("v=0\nm=video 9 RTP/SAVPF 96\na=mid:0\n"), "0");
  EXPECT_EQ(firstVideoMid("v=0\r\nm=audio 9 RTP/SAVPF 111\r\na=mid:a\r\n"), "");
}

}  // namespace
}  // namespace zerohop::stream
