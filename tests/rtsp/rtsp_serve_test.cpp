// `zerohop serve --source rtsp://...` as a user runs it, against the test RTSP camera: the camera's H.264 is
// passed through (/stats says passthrough and names the camera), its password appears in no output, /stats
// or /metrics, and a camera nobody serves ends serve with a line saying so; `zerohop probe rtsp://...` says
// what the camera offers (an H.265 camera: that serve decodes it) from its SDP alone, without PLAY, and plays
// up to one keyframe only when the SDP states no size.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "beside_program.hpp"
#include "child_process.hpp"
#include "rtsp_test_camera.hpp"

namespace zerohop::rtsp {
namespace {

using namespace std::chrono_literals;
using zerohop::testing::ChildProcess;

const std::string kCli = zerohop::testing::besideProgram(ZEROHOP_CLI_PATH);

TEST(RtspServe, PassesTheCameraThroughAndNeverPrintsItsPassword) {
  TestCamera camera({"--user", "admin", "--password", "hunter2", "--auth", "digest"});
  const auto port = zerohop::testing::freePort();
  ChildProcess serve({kCli, "serve", "--source", camera.url("admin:hunter2"), "--listen",
                      "127.0.0.1:" + std::to_string(port)});
  ASSERT_TRUE(serve.waitForStdoutLine("open http://", 20s)) << serve.stderrText();
  httplib::Client client("127.0.0.1", port);
  nlohmann::json stats;
  for (int i = 0; i < 50; ++i) {  // until frames have gone through (bounded: 5 s)
    auto res = client.Get("/stats");
    ASSERT_TRUE(res) << "no answer from /stats";
    stats = nlohmann::json::parse(res->body);
    if (stats["frames"].get<int>() > 10) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GT(stats["frames"].get<int>(), 10) << stats.dump();
  EXPECT_EQ(stats["path"], "passthrough") << stats.dump();
  // The camera's clock once its first sender report came, its frames' arrival before (never local).
  EXPECT_TRUE(stats["capture_clock"] == "camera" || stats["capture_clock"] == "arrival") << stats.dump();
  EXPECT_NE(stats["source"].get<std::string>().find("rtsp://***@127.0.0.1:" + std::to_string(camera.port())),
            std::string::npos)
      << stats.dump();
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("hunter2"), std::string::npos);
  EXPECT_EQ(stats.dump().find("hunter2"), std::string::npos);
  serve.signal(SIGINT);
  EXPECT_EQ(serve.waitExit(20s), 0) << serve.stderrText();  // a bound, not a speed: 2 busy cores, ASan
  EXPECT_EQ(serve.stderrText().find("hunter2"), std::string::npos) << serve.stderrText();
  EXPECT_EQ(serve.stdoutText().find("hunter2"), std::string::npos) << serve.stdoutText();
}

TEST(RtspServe, ACameraNobodyServesEndsServeSayingSo) {
  const auto cameraPort = zerohop::testing::freePort();
  const auto r = zerohop::testing::run(
      {kCli, "serve", "--source", "rtsp://admin:hunter2@127.0.0.1:" + std::to_string(cameraPort) + "/test",
       "--listen", "127.0.0.1:" + std::to_string(zerohop::testing::freePort())});
  EXPECT_EQ(r.exitCode, 3) << r.err;  // kExitUnavailable
  EXPECT_NE(r.err.find("cannot reach the camera at 127.0.0.1:" + std::to_string(cameraPort)),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos) << r.out;
}

TEST(RtspProbe, SaysWhatTheCameraOffersWithoutItsPassword) {
  TestCamera camera({"--user", "admin", "--password", "hunter2", "--auth", "digest"});
  const auto r = zerohop::testing::run({kCli, "probe", camera.url("admin:hunter2")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("rtsp://***@127.0.0.1:" + std::to_string(camera.port()) + "/test"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("offers      video H264/90000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("h264 320x240 @30 fps (as its SDP's parameter sets state: nothing was played)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(camera.plays(std::chrono::milliseconds(200)), 0) << "the probe played the stream";
  EXPECT_EQ((r.out + r.err).find("hunter2"), std::string::npos) << r.out << r.err;
  TestCamera audioOnly({"--codec", "pcma"});
  const auto none = zerohop::testing::run({kCli, "probe", audioOnly.url()});
  EXPECT_EQ(none.exitCode, 3) << none.err;
  EXPECT_NE(none.err.find("the camera offers audio PCMA/8000 and no H.264 or H.265 video"), std::string::npos)
      << none.err;
  TestCamera h265({"--codec", "h265"});
  const auto hevc = zerohop::testing::run({kCli, "probe", h265.url()});
  EXPECT_EQ(hevc.exitCode, 0) << hevc.err;
  EXPECT_NE(hevc.out.find("offers      video H265/90000"), std::string::npos) << hevc.out;
  EXPECT_NE(hevc.out.find("h265 320x240 @30 fps (as its SDP"), std::string::npos) << hevc.out;
  EXPECT_NE(hevc.out.find("decodes its H.265 on the CPU"), std::string::npos) << hevc.out;
  EXPECT_EQ(h265.plays(std::chrono::milliseconds(200)), 0) << "the probe played the stream";
}

TEST(RtspProbe, ACameraWhoseSdpStatesNoSizeIsPlayedUpToItsFirstKeyframe) {
  // FFmpeg's RTP behind rtsp_clip_server.py, its SDP without sprop-parameter-sets (they come in band).
  TestCamera camera({"--no-sprop"}, 0, zerohop::testing::besideProgram(ZEROHOP_RTSP_CLIP_SERVER_SCRIPT));
  const auto r = zerohop::testing::run({kCli, "probe", camera.url()});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("h264 320x240 @30 fps (from its first IDR: its SDP states no size or rate"), std::string::npos)
      << r.out;
  EXPECT_EQ(camera.plays(std::chrono::milliseconds(200)), 1) << "played once, for the keyframe";
}

}  // namespace
}  // namespace zerohop::rtsp
