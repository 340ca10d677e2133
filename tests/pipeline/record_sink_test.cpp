// A camera's recording as a unit sink (src/pipeline/record_sink.*): what it is given reaches the file,
// a disk that stalls costs the oldest units (never the encode's time), a file that cannot be written
// ends the recording with the reason. ffprobe reads what was written.
#include "record_sink.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "ffprobe.hpp"
#include "x264_test_units.hpp"

namespace zerohop {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::vector<EncodedUnitPtr> encodeUnits(int count) {
  return testing::encodeX264Units(count, 30);
}

template <typename Pred>
bool waitFor(Pred pred, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);  // polling a condition, bounded
  }
  return true;
}

class RecordSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::haveFfprobe()) GTEST_SKIP() << "ffprobe is not on PATH (Debian: apt install ffmpeg)";
    dir_ = fs::temp_directory_path() / ("zerohop-record-sink-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RecordSinkTest, WritesWhatItIsGivenFromTheKeyframeItAsksForWhenAttached) {
  const auto units = encodeUnits(90);
  const std::string path = (dir_ / "cam.mp4").string();
  std::atomic<int> asked{0};
  {
    RecordSink sink(record::RecorderOptions{path, 0, 0, false});
    EXPECT_TRUE(sink.wants(TrackKey{Codec::kH264, 0}));
    EXPECT_FALSE(sink.wants(TrackKey{Codec::kOpus, 0})) << "no sound asked for";
    EXPECT_FALSE(sink.wants(TrackKey{Codec::kH264, 1})) << "the main encode only";
    SinkSetup setup;
    setup.requestKeyframe = [&] { ++asked; };
    sink.attach(setup);
    EXPECT_EQ(asked.load(), 1) << "the file starts at a keyframe: one is asked for at once";
    for (const auto& u : units) sink.deliver(u);
    ASSERT_TRUE(waitFor([&] { return sink.stats().units == 90; }, 10s))
        << sink.stats().units << " of 90 written";
    const RecordingStatus s = sink.stats();
    EXPECT_EQ(s.files, 1u);
    EXPECT_EQ(s.currentPath, path);
    EXPECT_EQ(s.dropped, 0u);
    EXPECT_TRUE(s.error.empty()) << s.error;
    sink.detach();
  }  // the destructor writes the trailer
  const auto p = testing::probeFile(path);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.frames, 90);
  EXPECT_TRUE(p.firstIsKeyframe);
  EXPECT_NEAR(p.durationSeconds, 3.0, 0.1);
}

// A camera opened again (CameraRunner gives each new pipeline the same sink): the file goes on, from the
// new pipeline's first keyframe; nothing before it is lost and nothing is started over.
TEST_F(RecordSinkTest, AttachedAgainItGoesOnInTheSameFileFromTheNextKeyframe) {
  const auto units = encodeUnits(90);  // IDRs at 0, 30 and 60
  const std::string path = (dir_ / "reopened.mkv").string();
  std::atomic<int> asked{0};
  SinkSetup setup;
  setup.requestKeyframe = [&] { ++asked; };
  {
    RecordSink sink(record::RecorderOptions{path, 0, 0, false});
    sink.attach(setup);
    for (std::size_t i = 0; i < 30; ++i) sink.deliver(units[i]);
    ASSERT_TRUE(waitFor([&] { return sink.stats().units == 30; }, 10s)) << sink.stats().units << " of 30";
    sink.detach();
    sink.attach(setup);  // the camera's next pipeline; its first units are not a keyframe here
    EXPECT_EQ(asked.load(), 2) << "each pipeline is asked for a keyframe";
    for (std::size_t i = 45; i < 90; ++i) sink.deliver(units[i]);
    ASSERT_TRUE(waitFor([&] { return sink.stats().units == 60; }, 10s)) << sink.stats().units << " of 60";
    EXPECT_EQ(sink.stats().files, 1u) << "the same file goes on";
  }
  const auto p = testing::probeFile(path);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.frames, 60) << "units 45-59 refer to pictures the file lacks: left out, the file goes on at 60";
  EXPECT_TRUE(p.firstIsKeyframe);
}

// The "disk" is a FIFO nobody reads yet: the writer blocks opening it, as on a stalled disk. deliver()
// still returns at once; past the queue the oldest units go, counted, and a keyframe is asked for so the
// file can go on. Once a reader comes the file is written from a keyframe.
TEST_F(RecordSinkTest, AStalledDiskCostsTheOldestUnitsNeverTheCallersTime) {
  const auto units = encodeUnits(60);
  const std::string path = (dir_ / "stalled.mkv").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  std::atomic<int> asked{0};
  std::atomic<std::size_t> read{0};
  std::thread reader;  // joined after the sink: its end closes the FIFO, which ends the reader
  {
    RecordSink sink(record::RecorderOptions{path, 0, 0, false});
    SinkSetup setup;
    setup.requestKeyframe = [&] { ++asked; };
    sink.attach(setup);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000; ++i) sink.deliver(units[static_cast<std::size_t>(i) % units.size()]);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took, 5s) << "deliver() waited for the disk";
    const RecordingStatus s = sink.stats();
    // 1,000 delivered = dropped + queued (<= 400) + what the writer took before it stalled (one queue's
    // worth at most: it takes the whole queue at once; under ASan the first take is ~400 units).
    EXPECT_GE(s.dropped, 1000u - 2 * 400u) << "the queue holds 400; the writer took at most as many";
    EXPECT_GE(asked.load(), 2) << "a keyframe is asked for after the drop";

    // A reader: the writer's open returns and it writes what is queued, from its next keyframe.
    reader = std::thread([&] {
      const int fd = ::open(path.c_str(), O_RDONLY);
      if (fd < 0) return;
      char buf[65536];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) read += static_cast<std::size_t>(n);
      ::close(fd);
    });
    EXPECT_TRUE(waitFor([&] { return sink.stats().units > 0; }, 10s)) << "nothing written after the stall";
    sink.detach();
  }
  reader.join();
  EXPECT_GT(read.load(), 0u);
}

TEST_F(RecordSinkTest, AFileThatCannotBeWrittenEndsTheRecordingSayingWhy) {
  const auto units = encodeUnits(30);
  const std::string path = (dir_ / "no-such-dir" / "cam.mp4").string();
  RecordSink sink(record::RecorderOptions{path, 0, 0, false});
  sink.attach(SinkSetup{});
  for (const auto& u : units) sink.deliver(u);
  ASSERT_TRUE(waitFor([&] { return !sink.stats().error.empty(); }, 10s))
      << "the failed open was not reported";
  const RecordingStatus s = sink.stats();
  EXPECT_NE(s.error.find("cam.mp4"), std::string::npos) << "names the file: " << s.error;
  EXPECT_EQ(s.units, 0u);
  for (const auto& u : units) sink.deliver(u);  // ignored from now on, no crash
  EXPECT_FALSE(fs::exists(path));
}

TEST(RecordSinkNames, AFileNameWithoutAContainerIsRefusedAtOnce) {
  try {
    RecordSink sink(record::RecorderOptions{"/tmp/cam.avi", 0, 0, false});
    FAIL() << "a .avi recording was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(".mkv"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zerohop
