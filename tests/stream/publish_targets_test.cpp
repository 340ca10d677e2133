// Where serve publishes besides its own viewers: the WHIP endpoint URL and the resource
// its Location names, and the Janus RTP target. Pure string logic.
#include <gtest/gtest.h>

#include <string>

#include "stream/janus_target.hpp"
#include "stream/whip_url.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
    return e.what();
  }
  return "accepted";
}

TEST(WhipUrl, ParsesSchemeHostPortAndTarget) {
  HttpUrl u = parseHttpUrl("http://127.0.0.1:8889/live/cam0/whip?x=1");
  EXPECT_EQ(u.scheme, "http");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 8889);
  EXPECT_EQ(u.target, "/live/cam0/whip?x=1");
  EXPECT_EQ(u.origin(), "http://127.0.0.1:8889");

  u = parseHttpUrl("HTTPS://whip.example.org");
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.port, 443);
  EXPECT_EQ(u.target, "/");

  u = parseHttpUrl("http://[::1]:9000/w");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 9000);
  EXPECT_EQ(u.str(), "http://[::1]:9000/w");

  u = parseHttpUrl("http://h?q");
  EXPECT_EQ(u.port, 80);
  EXPECT_EQ(u.target, "/?q");
}

TEST(WhipUrl, RefusesWhatItCannotUse) {
  EXPECT_NE(refusal([] { parseHttpUrl("rtsp://h/x"); }).find("not an http"), std::string::npos);
  EXPECT_NE(refusal([] { parseHttpUrl("http:///x"); }).find("no host"), std::string::npos);
  EXPECT_NE(refusal([] { parseHttpUrl("http://h:0/x"); }).find("port"), std::string::npos);
  EXPECT_NE(refusal([] { parseHttpUrl("http://h:65536/x"); }).find("port"), std::string::npos);
  EXPECT_NE(refusal([] { parseHttpUrl("http://h:80a/x"); }).find("port"), std::string::npos);
  EXPECT_NE(refusal([] { parseHttpUrl("http://h:/x"); }).find("empty port"), std::string::npos);
  EXPECT_NE(refusal([] { parseHttpUrl("http://u:p@h/x"); }).find("user info"), std::string::npos);
  // The password in user info is never quoted back (it ends up in logs).
  const std::string withPassword = refusal([] { parseHttpUrl("https://me:s3cret@h:8443/w?x=1"); });
  EXPECT_EQ(withPassword.find("s3cret"), std::string::npos) << withPassword;
  EXPECT_NE(withPassword.find("https://***@h:8443/w?x=1"), std::string::npos) << withPassword;
  EXPECT_NE(refusal([] { parseHttpUrl("http://h/x#frag"); }).find("fragment"), std::string::npos);
  EXPECT_NE(refusal([] { parseHttpUrl("http://h/a b"); }).find("spaces"), std::string::npos);
  EXPECT_NE(refusal([] { parseHttpUrl("http://[::1/x"); }).find("IPv6"), std::string::npos);
}

TEST(WhipUrl, ResolvesTheLocationOfTheResource) {
  const HttpUrl ep = parseHttpUrl("http://10.0.0.5:8080/rtc/v1/whip/?app=live");
  EXPECT_EQ(resolveLocation(ep, "/rtc/v1/whip/session/42").str(),
            "http://10.0.0.5:8080/rtc/v1/whip/session/42");
  EXPECT_EQ(resolveLocation(ep, "session/42").str(), "http://10.0.0.5:8080/rtc/v1/whip/session/42");
  EXPECT_EQ(resolveLocation(ep, "https://other:9443/r/1").str(), "https://other:9443/r/1");
  EXPECT_EQ(resolveLocation(ep, "//other/r/1").str(), "http://other:80/r/1");
  const HttpUrl flat = parseHttpUrl("http://h:1/whip");
  EXPECT_EQ(resolveLocation(flat, "abc").str(), "http://h:1/abc");
  try {
    resolveLocation(ep, "");
    ADD_FAILURE() << "an empty Location was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kProtocol);
  }
  EXPECT_NE(refusal([&] { resolveLocation(ep, "ftp://x/y"); }), "accepted");
}

TEST(JanusTarget, DirectFormPortsDefaultsAndOptions) {
  JanusTarget j = parseJanusTarget("10.77.0.1:5004");
  EXPECT_EQ(j.mountpoint, 0u);
  EXPECT_EQ(j.rtp.host, "10.77.0.1");
  EXPECT_EQ(j.rtp.rtpPort, 5004);
  EXPECT_EQ(j.rtp.rtcpPort, 5005);
  EXPECT_EQ(j.rtp.payloadType, 96);
  EXPECT_EQ(j.rtp.audioPort, 0) << "no sound unless asked";

  j = parseJanusTarget("10.77.0.1:5004?audio=5006");
  EXPECT_EQ(j.rtp.audioPort, 5006);
  EXPECT_EQ(j.rtp.audioRtcpPort, 5007);
  EXPECT_EQ(j.rtp.audioPayloadType, 111);

  j = parseJanusTarget("janus.lan:6000?rtcp=7000&pt=100");
  EXPECT_EQ(j.rtp.host, "janus.lan");
  EXPECT_EQ(j.rtp.rtcpPort, 7000);
  EXPECT_EQ(j.rtp.payloadType, 100);

  j = parseJanusTarget("[fd00::1]:5004");
  EXPECT_EQ(j.rtp.host, "fd00::1");
  EXPECT_EQ(j.rtp.rtpPort, 5004);
  EXPECT_EQ(parseJanusTarget("h:65535?rtcp=5000").rtp.rtpPort, 65535);
}

TEST(JanusTarget, ApiFormNamesTheMountpoint) {
  JanusTarget j = parseJanusTarget("10.77.0.1:8088?mountpoint=7");
  EXPECT_EQ(j.mountpoint, 7u);
  EXPECT_EQ(j.apiPort, 8088);
  EXPECT_EQ(j.rtp.host, "10.77.0.1");
  EXPECT_TRUE(j.secret.empty());
  j = parseJanusTarget("[::1]:8088?secret=s3&mountpoint=12");
  EXPECT_EQ(j.mountpoint, 12u);
  EXPECT_EQ(j.secret, "s3");
  EXPECT_EQ(j.rtp.host, "::1");
}

TEST(JanusTarget, RefusesWhatItCannotUse) {
  EXPECT_NE(refusal([] { parseJanusTarget("10.0.0.1"); }).find("no :PORT"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget(":5004"); }).find("no host"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:0"); }).find("port"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:65535"); }).find("PORT+1"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("fd00::1:5004"); }).find("brackets"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:5004?pt=8"); }).find("pt"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:5004?rtcp=5004"); }).find("RTP port itself"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:5004?room=1"); }).find("unknown option"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:5004?rtcp="); }).find("empty"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:8088?mountpoint=0"); }).find("mountpoint"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:8088?mountpoint=x"); }).find("mountpoint"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:8088?mountpoint=7&rtcp=9"); }).find("come from Janus"),
            std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:8088?mountpoint=7&audio=9"); }).find("come from Janus"),
            std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:5004?audio=5005"); }).find("other ports"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:5004?audio=5003"); }).find("other ports"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:5004?audio=65535"); }).find("audio"), std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:5004?secret=s"); }).find("goes with mountpoint"),
            std::string::npos);
  EXPECT_NE(refusal([] { parseJanusTarget("h:8088?mountpoint=7&secret="); }).find("secret is empty"),
            std::string::npos);
  // A refusal quotes the target, never the mountpoint's secret.
  const std::string quoted = refusal([] { parseJanusTarget("h:8088?secret=hush-42&mountpoint=x"); });
  EXPECT_NE(quoted.find("h:8088?secret=...&mountpoint=x"), std::string::npos) << quoted;
  EXPECT_EQ(quoted.find("hush-42"), std::string::npos) << quoted;
}

}  // namespace
}  // namespace zerohop::stream
