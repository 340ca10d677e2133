// Several emulated cameras in one process, through our own V4L2 capture code (run by CTest as
// `zerohop-camemu --camera ... --camera ... -- <this test>`): every camera is listed and probed with
// its own format first, streams at once with the others at its own format, size and rate with the
// test camera's timecode in the picture, and an unplug of one leaves the others streaming.
// The expected settings are read from the environment the launcher set (camerasFromEnvironment).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "camemu/camemu_config.hpp"
#include "core/payload_check.hpp"
#include "zerohop/capture.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/timecode.hpp"
#include "../capture/picture_timecode.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using camemu::EmuConfig;

// The cameras the launcher configured; skips unless run under zerohop-camemu with several.
std::vector<EmuConfig> emulatedCameras() {
  const char* preload = std::getenv("LD_PRELOAD");
  const char* list = std::getenv(camemu::kEnvCameras);
  if (!preload || std::string_view(preload).find("zerohop_camemu") == std::string_view::npos || !list ||
      !*list)
    return {};
  return camemu::camerasFromEnvironment();
}

#define REQUIRE_CAMERAS(cameras)                                                                     \
  do {                                                                                               \
    if ((cameras).size() < 2)                                                                        \
      GTEST_SKIP() << "needs several emulated cameras: run as zerohop-camemu --camera ... --camera " \
                      "... -- <this test> (ctest does)";                                             \
  } while (0)

std::unique_ptr<FrameSource> open(const EmuConfig& c) {
  return openV4l2Source(parseSourceSpec(
      "v4l2:" + c.devicePath + "?format=" + std::string(formatName(c.format)) +
      "&size=" + std::to_string(c.width) + "x" + std::to_string(c.height) + "&fps=" + std::to_string(c.fps)));
}

using test::pictureTimecode;

// What one camera's capture thread saw.
struct StreamReport {
  std::string failure;  // empty: every frame passed its checks
  int frames = 0;
  int timecodes = 0;  // frames whose picture timecode was read and matched
  int keyframes = 0;
  std::uint64_t firstSeq = 0, lastSeq = 0;
  std::int64_t firstNs = 0, lastNs = 0;
  double periodMs() const {
    return lastSeq > firstSeq ? (lastNs - firstNs) / 1e6 / static_cast<double>(lastSeq - firstSeq) : 0;
  }
};

// Reads `count` frames from `source` (opened on `c`), checking each against the camera's settings;
// `fromStart`: these are the stream's first frames (an H.264 one starts with an IDR).
StreamReport readAndCheck(FrameSource& source, const EmuConfig& c, int count, bool fromStart) {
  StreamReport r;
  try {
    for (int i = 0; i < count; ++i) {
      auto lease = source.next(3000ms);
      if (!lease) {
        r.failure = "no frame within 3 s after " + std::to_string(r.frames);
        return r;
      }
      const Frame& f = lease->frame();
      if (f.format != c.format || f.width != c.width || f.height != c.height) {
        r.failure = "frame is " + std::string(formatName(f.format)) + " " + std::to_string(f.width) + "x" +
                    std::to_string(f.height);
        return r;
      }
      const char* defect = nullptr;
      if (f.format == PixelFormat::kH264) {
        defect = core_detail::annexBDefect(f.data[0], f.bytesUsed);
        if (fromStart && i == 0 && !f.keyframe) defect = "the stream does not start with an IDR";
      } else if (f.format == PixelFormat::kMJPEG) {
        defect = core_detail::mjpegDefect(f.data[0], f.bytesUsed);
      } else if (f.bytesUsed != computeLayout(f.format, f.width, f.height).totalBytes) {
        defect = "raw frame of the wrong size";
      }
      if (defect) {
        r.failure = "frame " + std::to_string(f.sequence) + ": " + defect;
        return r;
      }
      r.keyframes += f.keyframe;
      if (const auto tc = pictureTimecode(f)) {
        if (tc->sequence != (f.sequence & kTimecodeSeqMask)) {
          r.failure = "frame " + std::to_string(f.sequence) + " carries timecode sequence " +
                      std::to_string(tc->sequence);
          return r;
        }
        ++r.timecodes;
      } else if (f.format != PixelFormat::kH264) {
        r.failure = "no readable timecode in frame " + std::to_string(f.sequence);
        return r;
      }
      const std::int64_t cap = f.times.at(Stage::kCapture);
      if (i == 0) {
        r.firstSeq = f.sequence;
        r.firstNs = cap;
      } else if (f.sequence <= r.lastSeq || cap <= r.lastNs) {
        r.failure = "sequence or driver timestamp went backwards at frame " + std::to_string(f.sequence);
        return r;
      }
      r.lastSeq = f.sequence;
      r.lastNs = cap;
      ++r.frames;
    }
  } catch (const Error& e) {
    r.failure = e.what();
  }
  return r;
}

TEST(MultiCamera, ListedAndProbedEachWithItsOwnFormat) {
  const auto cameras = emulatedCameras();
  REQUIRE_CAMERAS(cameras);
  const auto nodes = listVideoNodes();
  const auto devices = probeCaptureDevices();
  std::vector<std::string> busInfos;
  for (const EmuConfig& c : cameras) {
    EXPECT_NE(std::find(nodes.begin(), nodes.end(), c.devicePath), nodes.end())
        << c.devicePath << " not listed";
    auto it = std::find_if(devices.begin(), devices.end(),
                           [&](const CaptureDevice& d) { return d.path == c.devicePath; });
    ASSERT_NE(it, devices.end()) << c.devicePath << " not probed";
    EXPECT_EQ(it->driver, "zerohop-camemu");
    ASSERT_FALSE(it->formats.empty());
    EXPECT_EQ(it->formats.front().format, c.format) << c.devicePath << ": its launch format is offered first";
    busInfos.push_back(it->busInfo);
  }
  std::sort(busInfos.begin(), busInfos.end());
  EXPECT_EQ(std::unique(busInfos.begin(), busInfos.end()), busInfos.end()) << "two cameras share a bus_info";
}

TEST(MultiCamera, EveryCameraStreamsAtOnceAtItsOwnFormatSizeAndRate) {
  const auto cameras = emulatedCameras();
  REQUIRE_CAMERAS(cameras);
  for (const EmuConfig& c : cameras) {
    if (c.faults.unplugAt) GTEST_SKIP() << c.devicePath << " is set to unplug (the Unplug case runs with it)";
  }
  std::vector<std::unique_ptr<FrameSource>> sources;
  for (const EmuConfig& c : cameras) sources.push_back(open(c));  // all open before any reads
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    const SourceInfo info = sources[i]->info();
    EXPECT_EQ(info.format, cameras[i].format) << cameras[i].devicePath;
    EXPECT_EQ(info.width, cameras[i].width) << cameras[i].devicePath;
    EXPECT_DOUBLE_EQ(info.fps, cameras[i].fps) << cameras[i].devicePath;
  }
  std::vector<StreamReport> reports(cameras.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < cameras.size(); ++i) {
      // About 1.5 s of each camera, all of them at the same time.
      const int count = static_cast<int>(cameras[i].fps * 3 / 2);
      threads.emplace_back(
          [&, i, count] { reports[i] = readAndCheck(*sources[i], cameras[i], count, true); });
    }
  }
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    const EmuConfig& c = cameras[i];
    const StreamReport& r = reports[i];
    SCOPED_TRACE(c.devicePath + " " + std::string(formatName(c.format)));
    EXPECT_EQ(r.failure, "");
    EXPECT_EQ(r.frames, static_cast<int>(c.fps * 3 / 2));
    // The driver clock per sequence step is the camera's own period (ticks a loaded machine skipped count).
    EXPECT_NEAR(r.periodMs(), 1000.0 / c.fps, 1000.0 / c.fps * 0.1);
    if (c.format == PixelFormat::kH264) {
      EXPECT_GE(r.keyframes, 1);
    } else {
#ifndef ZEROHOP_TEST_WITH_JPEG
      if (c.format == PixelFormat::kMJPEG) continue;
#endif
      EXPECT_EQ(r.timecodes, r.frames);
    }
    EXPECT_EQ(sources[i]->counters().errors, 0u);
  }
}

TEST(MultiCamera, UnplugOfOneLeavesTheOthersStreaming) {
  const auto cameras = emulatedCameras();
  REQUIRE_CAMERAS(cameras);
  const auto unplugged =
      std::find_if(cameras.begin(), cameras.end(), [](const EmuConfig& c) { return c.faults.unplugAt != 0; });
  if (unplugged == cameras.end())
    GTEST_SKIP() << "needs one camera with unplug-at= (ctest runs this case with it)";
  const std::size_t gone = static_cast<std::size_t>(unplugged - cameras.begin());
  std::vector<std::unique_ptr<FrameSource>> sources;
  for (const EmuConfig& c : cameras) sources.push_back(open(c));
  std::atomic<bool> unplugSeen{false};
  std::vector<StreamReport> reports(cameras.size());
  std::string unplugError;
  {
    std::vector<std::jthread> threads;
    threads.emplace_back([&] {
      try {
        for (int i = 0; i < 1000; ++i) {
          if (!sources[gone]->next(3000ms)) break;
        }
      } catch (const Error& e) {
        unplugError = e.what();
        EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
      }
      unplugSeen = true;
    });
    for (std::size_t i = 0; i < cameras.size(); ++i) {
      if (i == gone) continue;
      threads.emplace_back([&, i] {
        // Stream until the unplug was reported, then one more second of frames.
        while (!unplugSeen) {
          auto lease = sources[i]->next(3000ms);
          if (!lease) return;
        }
        reports[i] = readAndCheck(*sources[i], cameras[i], static_cast<int>(cameras[i].fps), false);
      });
    }
  }
  EXPECT_NE(unplugError.find("disconnected"), std::string::npos)
      << "the unplugged camera said: " << unplugError;
  try {
    open(cameras[gone]);
    FAIL() << "opened " << cameras[gone].devicePath << " while unplugged";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNotFound) << e.what();
  }
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    if (i == gone) continue;
    SCOPED_TRACE(cameras[i].devicePath);
    EXPECT_EQ(reports[i].failure, "");
    EXPECT_EQ(reports[i].frames, static_cast<int>(cameras[i].fps))
        << "stopped after the other camera's unplug";
    // Still the same session: its sequence went on, rising (readAndCheck fails a sequence that does
    // not), with no more gaps than a loaded machine makes: under ASan on a busy 2-core box the reader
    // took 30 frames out of 96 sequence numbers, and out of 129 beside a build (ci23), hence 10 s of the
    // camera's frames as the bound (it catches a sequence gone wild, not a starved reader).
    EXPECT_LE(reports[i].lastSeq - reports[i].firstSeq, static_cast<std::uint64_t>(cameras[i].fps) * 10);
  }
  // The node listing (what zerohop probe walks) has every camera but the unplugged one.
  const auto nodes = listVideoNodes();
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    EXPECT_EQ(std::find(nodes.begin(), nodes.end(), cameras[i].devicePath) != nodes.end(), i != gone)
        << cameras[i].devicePath;
  }
}

}  // namespace
}  // namespace zerohop
