// `zerohop record` against a real `zerohop serve --share --audio test`: 10 s recorded at the camera's
// rate, the camera's sound beside the picture and in sync with it (the tone's clicks against the
// camera's markers, decoded from the file), and a recorder SIGKILLed mid-way leaves a file ffprobe still
// reads (MP4 and Matroska).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "beside_program.hpp"
#include "child_process.hpp"
#include "ffprobe.hpp"
#include "file_av_sync.hpp"

namespace zerohop {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::probeFile;
using testing::freePort;

const std::string kCli = zerohop::testing::besideProgram(ZEROHOP_CLI_PATH);

class RecordCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::haveFfprobe()) return;
    share_ = "rec" + std::to_string(getpid());
    // A keyframe a second, so a recorder starts within one; the test tone, shared as NAME.opus.
    serve_ = std::make_unique<ChildProcess>(std::vector<std::string>{
        kCli, "serve", "--source", "test:640x360@30", "--audio", "test", "--share", share_, "--keyint", "30",
        "--listen", "127.0.0.1:" + std::to_string(freePort())});
    if (!serve_->waitForStdoutLine("open http://", 20s)) serve_.reset();
  }
  static void TearDownTestSuite() { serve_.reset(); }
  void SetUp() override {
    if (!testing::haveFfprobe()) GTEST_SKIP() << "ffprobe is not on PATH (Debian: apt install ffmpeg)";
    ASSERT_TRUE(serve_) << "zerohop serve did not start";
    dir_ = fs::temp_directory_path() / ("zerohop-record-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static inline std::unique_ptr<ChildProcess> serve_;
  static inline std::string share_;
  fs::path dir_;
};

TEST_F(RecordCli, RecordsTenSecondsAtTheCameraRateFromAKeyframe) {
  const std::string out = (dir_ / "ten.mp4").string();
  ChildProcess rec({kCli, "record", share_ + ".h264", "--out", out, "--seconds", "10"});
  const auto code = rec.waitExit(25s);
  ASSERT_TRUE(code.has_value()) << "record did not stop after 10 s";
  ASSERT_EQ(*code, 0) << rec.stderrText();
  EXPECT_NE(rec.stderrText().find("done"), std::string::npos) << rec.stderrText();
  const auto p = probeFile(out);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.codec, "h264");
  EXPECT_NEAR(p.durationSeconds, 10.0, 0.5);
  EXPECT_NEAR(static_cast<double>(p.frames), 300.0, 15.0);  // 30 fps, a few lost on a loaded box at most
  EXPECT_NEAR(p.frameRate, 30.0, 1.5);
  EXPECT_TRUE(p.firstIsKeyframe);
}

TEST_F(RecordCli, TheCamerasSoundIsRecordedBesideItsPictureInSync) {
  for (const std::string ext : {"mp4", "mkv"}) {
    SCOPED_TRACE(ext);
    const std::string out = (dir_ / ("av." + ext)).string();
    ChildProcess rec({kCli, "record", share_ + ".h264", "--out", out, "--seconds", "4"});
    const auto code = rec.waitExit(20s);
    ASSERT_TRUE(code.has_value()) << "record did not stop after 4 s";
    ASSERT_EQ(*code, 0) << rec.stderrText();
    EXPECT_NE(rec.stderrText().find("and its sound '" + share_ + ".opus'"), std::string::npos) << rec.stderrText();
    const auto a = testing::probeAudio(out);
    ASSERT_TRUE(a.ok) << a.error;
    EXPECT_EQ(a.codec, "opus");
    const auto sync = testing::measureFileAvSync(out);
    ASSERT_TRUE(sync.error.empty()) << sync.error;
    // The sound spans the pictures (10 ms packets against 33 ms frames).
    EXPECT_NEAR(sync.audioSeconds, sync.videoSeconds, 0.1);
    // A marker frame's exposure is the frame period ending at its time, and the tone clicks at the
    // marker instant within it: click - marker is -33..0 ms (the phase is fixed for a run), give or take
    // 10 ms for the codecs. A sound shifted by a packet or more falls outside. Four seconds hold three
    // or four of each.
    ASSERT_GE(sync.offsetsMs.size(), 3u) << sync.markers << " markers, " << sync.clicks << " clicks";
    auto offsets = sync.offsetsMs;
    std::sort(offsets.begin(), offsets.end());
    const double median = offsets[offsets.size() / 2];
    std::printf("%s: %zu marker/click pairs, click - marker median %.1f ms; sound %.2f s, pictures %.2f s\n",
                ext.c_str(), offsets.size(), median, sync.audioSeconds, sync.videoSeconds);
    EXPECT_GE(median, -43.0);
    EXPECT_LE(median, 10.0);
  }
  // --no-sound: the pictures alone.
  const std::string out = (dir_ / "silent.mkv").string();
  ChildProcess rec({kCli, "record", share_ + ".h264", "--out", out, "--seconds", "1", "--no-sound"});
  ASSERT_EQ(rec.waitExit(15s), 0) << rec.stderrText();
  EXPECT_TRUE(probeFile(out).ok);
  EXPECT_FALSE(testing::probeAudio(out).ok);
}

TEST_F(RecordCli, KilledRecorderLeavesAFileThatPlays) {
  for (const std::string ext : {"mp4", "mkv"}) {
    SCOPED_TRACE(ext);
    const std::string out = (dir_ / ("killed." + ext)).string();
    ChildProcess rec({kCli, "record", share_ + ".h264", "--out", out});
    // Wait (bounded) until the file already holds two seconds of finished fragments/clusters.
    testing::ProbeResult before;
    for (auto deadline = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < deadline;) {
      if (fs::exists(out)) before = probeFile(out);
      if (before.frames >= 60) break;
      std::this_thread::sleep_for(250ms);
    }
    ASSERT_GE(before.frames, 60) << "the file never held 2 s: " << before.error;
    rec.signal(SIGKILL);
    ASSERT_EQ(rec.waitExit(5s), 128 + SIGKILL);
    const auto after = probeFile(out);
    ASSERT_TRUE(after.ok) << after.error;
    EXPECT_GE(after.frames, before.frames);
    EXPECT_TRUE(after.firstIsKeyframe);
  }
}

TEST_F(RecordCli, SigintClosesTheFileAndAnImageShareIsRefused) {
  const std::string out = (dir_ / "int.mkv").string();
  ChildProcess rec({kCli, "record", share_ + ".h264", "--out", out});
  testing::ProbeResult p;
  for (auto deadline = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < deadline;) {
    if (fs::exists(out)) p = probeFile(out);
    if (p.frames >= 30) break;
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_GE(p.frames, 30) << p.error;
  rec.signal(SIGINT);
  ASSERT_EQ(rec.waitExit(5s), 0) << rec.stderrText();
  const auto closed = probeFile(out);
  ASSERT_TRUE(closed.ok) << closed.error;
  EXPECT_GT(closed.durationSeconds, 0.9);  // the trailer (Cues, duration) was written
  EXPECT_TRUE(closed.firstIsKeyframe);

  const auto refused = testing::run({kCli, "record", share_, "--out", (dir_ / "x.mp4").string()});
  EXPECT_EQ(refused.exitCode, 2) << refused.err;
  EXPECT_NE(refused.err.find(share_ + ".h264"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.mp4"));
}

// serve's own recording (no `zerohop record`): each camera its own file from its [[camera]] table, the
// sound beside the picture where the camera has one; SIGINT leaves both files whole.
TEST_F(RecordCli, ServeRecordsEachCameraToItsOwnFileWithItsSound) {
  const fs::path front = dir_ / "front.mkv", back = dir_ / "back.mp4", config = dir_ / "cameras.toml";
  std::ofstream(config) << "[[camera]]\nname = \"front\"\nsource = \"test:640x360@30\"\naudio = \"test\"\n"
                        << "record = \"" << front.string() << "\"\n\n[[camera]]\nname = \"back\"\n"
                        << "source = \"test:320x240@30\"\nrecord = \"" << back.string() << "\"\n";
  ChildProcess serve({kCli, "--config", config.string(), "serve", "--keyint", "30", "--listen",
                      "127.0.0.1:" + std::to_string(freePort())});
  ASSERT_TRUE(serve.waitForStdoutLine("open http://", 20s)) << serve.stderrText();
  testing::ProbeResult f, b;
  for (auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;) {
    if (fs::exists(front)) f = probeFile(front.string());
    if (fs::exists(back)) b = probeFile(back.string());
    if (f.frames >= 90 && b.frames >= 90) break;
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_GE(f.frames, 90) << "front's file never held 3 s: " << f.error;
  ASSERT_GE(b.frames, 90) << "back's file never held 3 s: " << b.error;
  serve.signal(SIGINT);
  ASSERT_EQ(serve.waitExit(10s), 0) << serve.stderrText();
  EXPECT_NE(serve.stderrText().find("recording to " + front.string()), std::string::npos)
      << serve.stderrText();

  f = probeFile(front.string());
  ASSERT_TRUE(f.ok) << f.error;
  EXPECT_EQ(f.codec, "h264");
  EXPECT_TRUE(f.firstIsKeyframe);
  EXPECT_GT(f.durationSeconds, 2.9) << "the trailer (Cues, duration) was written at stop";
  const auto sound = testing::probeAudio(front.string());
  ASSERT_TRUE(sound.ok) << "front has a microphone: its file has its sound. " << sound.error;
  EXPECT_EQ(sound.codec, "opus");
  const auto sync = testing::measureFileAvSync(front.string());
  ASSERT_TRUE(sync.error.empty()) << sync.error;
  ASSERT_GE(sync.offsetsMs.size(), 2u) << sync.markers << " markers, " << sync.clicks << " clicks";
  auto offsets = sync.offsetsMs;
  std::sort(offsets.begin(), offsets.end());
  const double median = offsets[offsets.size() / 2];
  std::printf("front.mkv: %ld frames, %.2f s, %zu marker/click pairs, click - marker median %.1f ms\n",
              f.frames, f.durationSeconds, offsets.size(), median);
  EXPECT_GE(median, -43.0);  // as TheCamerasSoundIsRecordedBesideItsPictureInSync
  EXPECT_LE(median, 10.0);

  b = probeFile(back.string());
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_TRUE(b.firstIsKeyframe);
  EXPECT_NEAR(b.frameRate, 30.0, 1.5);
  EXPECT_FALSE(testing::probeAudio(back.string()).ok) << "back has no microphone";
}

}  // namespace
}  // namespace zerohop
