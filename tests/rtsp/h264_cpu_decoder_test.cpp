// H264CpuDecoder (src/rtsp) against clips ffmpeg's libx264 makes (as an IP camera would send them: no
// B-frames, SPS/PPS before each IDR, Annex B): every access unit decodes to one I420 picture of the clip's
// size, in order, at 720p and 1080p; and what a decode costs per frame (CPU time of this thread), printed
// for docs/benchmarks.md (not bounded: the box is shared).
#include "rtsp/h264_cpu_decoder.hpp"

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
}

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "encode/annexb.hpp"
#include "zerohop/error.hpp"

namespace zerohop::rtsp {
namespace {

using namespace std::chrono_literals;

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// `frames` frames of ffmpeg's testsrc2 at WxH as libx264 Annex B (an access unit delimiter before each
// access unit, an IDR every 30 frames, SPS/PPS before each), split into access units.
std::vector<std::vector<std::uint8_t>> clip(int width, int height, int frames) {
  const std::string path = "/tmp/zerohop-h264-decoder-test-" + std::to_string(getpid()) + "-" +
                           std::to_string(width) + "x" + std::to_string(height) + ".h264";
  testing::ChildProcess ffmpeg(
      {"/usr/bin/ffmpeg",
       "-hide_banner",
       "-loglevel",
       "error",
       "-y",
       "-f",
       "lavfi",
       "-i",
       "testsrc2=size=" + std::to_string(width) + "x" + std::to_string(height) + ":rate=30",
       "-frames:v",
       std::to_string(frames),
       "-c:v",
       "libx264",
       "-preset",
       "ultrafast",
       "-tune",
       "zerolatency",
       "-pix_fmt",
       "yuv420p",
       "-g",
       "30",
       "-bf",
       "0",
       "-x264-params",
       "repeat-headers=1",
       "-bsf:v",
       "h264_metadata=aud=insert",
       "-f",
       "h264",
       path});
  const auto rc = ffmpeg.waitExit(60s);
  if (!rc || *rc != 0) {
    ADD_FAILURE() << "ffmpeg could not make the clip: " << ffmpeg.stderrText();
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  std::vector<std::vector<std::uint8_t>> units;
  for (const auto& nal : encode::nalUnits(bytes.data(), bytes.size())) {
    if (nal.type == encode::kNalAud || units.empty()) units.emplace_back();
    units.back().insert(units.back().end(), bytes.begin() + static_cast<std::ptrdiff_t>(nal.offset),
                        bytes.begin() + static_cast<std::ptrdiff_t>(nal.offset + nal.size));
  }
  return units;
}

void decodesEveryUnit(int width, int height) {
  constexpr int kFrames = 60;
  const auto units = clip(width, height, kFrames);
  ASSERT_EQ(units.size(), static_cast<std::size_t>(kFrames));
  H264CpuDecoder decoder;
  std::vector<double> costMs;
  int pictures = 0;
  for (const auto& unit : units) {
    const double before = threadCpuMs();
    auto picture = decoder.decode(unit.data(), unit.size());
    costMs.push_back(threadCpuMs() - before);
    ASSERT_TRUE(picture) << "low delay: each access unit gives its picture at once (unit " << pictures << ")";
    EXPECT_EQ(picture->width, width);
    EXPECT_EQ(picture->height, height);
    EXPECT_TRUE(picture->format == AV_PIX_FMT_YUV420P || picture->format == AV_PIX_FMT_YUVJ420P);
    ++pictures;
  }
  EXPECT_EQ(pictures, kFrames);
  std::sort(costMs.begin(), costMs.end());
  double sum = 0;
  for (double c : costMs) sum += c;
  std::printf(
      "H264CpuDecoder %dx%d: decode CPU per frame mean %.2f ms, p50 %.2f ms, max %.2f ms (%d frames, 1 "
      "thread)\n",
      width, height, sum / static_cast<double>(costMs.size()), costMs[costMs.size() / 2], costMs.back(),
      kFrames);
}

TEST(H264CpuDecoder, DecodesEveryAccessUnitAt720p) {
  decodesEveryUnit(1280, 720);
}
TEST(H264CpuDecoder, DecodesEveryAccessUnitAt1080p) {
  decodesEveryUnit(1920, 1080);
}

TEST(H264CpuDecoder, ARefusedUnitSaysSoAndTheNextIdrDecodes) {
  const auto units = clip(320, 240, 31);
  ASSERT_EQ(units.size(), 31u);
  H264CpuDecoder decoder;
  // Garbage where an access unit belongs: a refused unit (Error) or no picture, never a crash.
  const std::vector<std::uint8_t> garbage{0, 0, 0, 1, 0x65, 0xff, 0x00, 0x13, 0x37, 0x42};
  try {
    decoder.decode(garbage.data(), garbage.size());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kProtocol);
    EXPECT_NE(std::string(e.what()).find("H.264"), std::string::npos) << e.what();
  }
  auto picture = decoder.decode(units[30].data(), units[30].size());  // frame 30: the second IDR
  ASSERT_TRUE(picture) << "an IDR with its SPS/PPS decodes after a bad unit";
  EXPECT_EQ(picture->width, 320);
}

}  // namespace
}  // namespace zerohop::rtsp
