// takeRepairSsrcLines / withRepairSsrcLines: the RTX SSRC's a=ssrc lines out of what webrtcbin is given,
// back into what the peer receives, everything else byte for byte.

#include "stream/sdp_repair_ssrc.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zerohop::stream {
namespace {

// The layout of an answer webrtcbin 1.22 made for Chromium's offer (media 1111, RTX 2222).
const std::string kSession = "v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n";
const std::string kVideoBeforeRtx =
    "m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\n"
    "a=rtpmap:96 H264/90000\r\n"
    "a=rtpmap:97 rtx/90000\r\n"
    "a=fmtp:97 apt=96\r\n"
    "a=ssrc-group:FID 1111 2222\r\n"
    "a=ssrc:1111 msid:user1@host-1 webrtctransceiver0\r\n"
    "a=ssrc:1111 cname:user1@host-1\r\n";
const std::string kRtx =
    "a=ssrc:2222 msid:user1@host-1 webrtctransceiver0\r\n"
    "a=ssrc:2222 cname:user1@host-1\r\n";
const std::string kVideo = kVideoBeforeRtx + kRtx + "a=mid:0\r\n";

TEST(SdpRepairSsrc, TakesOnlyTheRtxSsrcLinesAndKeepsTheFidGroup) {
  const RepairSsrcLines split = takeRepairSsrcLines(kSession + kVideo);
  EXPECT_EQ(split.kept, kSession + kVideoBeforeRtx + "a=mid:0\r\n");
  ASSERT_EQ(split.taken.size(), 2u);
  EXPECT_TRUE(split.taken[0].empty());
  EXPECT_EQ(split.taken[1], (std::vector<std::string>{"a=ssrc:2222 msid:user1@host-1 webrtctransceiver0",
                                                      "a=ssrc:2222 cname:user1@host-1"}));
}

TEST(SdpRepairSsrc, PutsThemBackWhereTheyWereWithLinesAddedAfterwards) {
  const std::string original = kSession + kVideo;
  const RepairSsrcLines split = takeRepairSsrcLines(original);
  EXPECT_EQ(withRepairSsrcLines(split.kept, split), original);
  // webrtcbin's local description after ICE gathering: candidates appended to the section.
  const std::string candidates =
      "a=candidate:1 1 UDP 2015363327 127.0.0.1 40000 typ host\r\na=end-of-candidates\r\n";
  EXPECT_EQ(withRepairSsrcLines(split.kept + candidates, split), original + candidates);
}

TEST(SdpRepairSsrc, LeavesADescriptionWithoutFidGroupAlone) {
  const std::string noGroup =
      "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=ssrc:1111 cname:x\r\na=ssrc:2222 cname:x\r\na=mid:0\r\n";
  const RepairSsrcLines split = takeRepairSsrcLines(noGroup);
  EXPECT_EQ(split.kept, noGroup);
  EXPECT_EQ(withRepairSsrcLines(noGroup, split), noGroup);
  EXPECT_EQ(takeRepairSsrcLines("").kept, "");
  EXPECT_EQ(withRepairSsrcLines("", takeRepairSsrcLines("")), "");
}

TEST(SdpRepairSsrc, MatchesWholeSsrcsOnlyAndHandlesLfEndingsAndAnUnterminatedLastLine) {
  // 22 is a prefix of 2222 and 2222 of 22222: neither is the repair SSRC.
  const std::string in =
      "a=ssrc-group:FID 1111 2222\na=ssrc:22 cname:x\na=ssrc:2222 cname:x\na=ssrc:22222 cname:x\na=ssrc:2222";
  const RepairSsrcLines split = takeRepairSsrcLines(in);
  EXPECT_EQ(split.kept, "a=ssrc-group:FID 1111 2222\na=ssrc:22 cname:x\na=ssrc:22222 cname:x\n");
  EXPECT_EQ(withRepairSsrcLines("a=ssrc-group:FID 1111 2222\na=ssrc:22 cname:x", split),
            "a=ssrc-group:FID 1111 2222\na=ssrc:22 cname:x\r\na=ssrc:2222 cname:x\r\na=ssrc:2222\r\n");
}

TEST(SdpRepairSsrc, EachSectionGetsBackItsOwnLines) {
  const std::string in =
      "v=0\r\nm=video 9 RTP/AVPF 96 97\r\na=ssrc-group:FID 1 2\r\na=ssrc:1 cname:a\r\na=ssrc:2 "
      "cname:a\r\na=mid:0\r\n"
      "m=video 9 RTP/AVPF 96 97\r\na=ssrc-group:FID 3 4\r\na=ssrc:3 cname:b\r\na=ssrc:4 "
      "cname:b\r\na=mid:1\r\n";
  const RepairSsrcLines split = takeRepairSsrcLines(in);
  EXPECT_EQ(split.kept,
            "v=0\r\nm=video 9 RTP/AVPF 96 97\r\na=ssrc-group:FID 1 2\r\na=ssrc:1 cname:a\r\na=mid:0\r\n"
            "m=video 9 RTP/AVPF 96 97\r\na=ssrc-group:FID 3 4\r\na=ssrc:3 cname:b\r\na=mid:1\r\n");
  EXPECT_EQ(withRepairSsrcLines(split.kept, split), in);
}

}  // namespace
}  // namespace zerohop::stream
