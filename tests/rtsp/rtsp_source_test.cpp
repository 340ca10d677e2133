// RTSP cameras against a real RTSP server the test starts (GStreamer's, tests/rtsp/rtsp_camera.py, H.264
// of a test pattern at 320x240@30): the camera's access units arrive over TCP and UDP and decode, IDRs carry
// SPS/PPS, capture times come from the camera's RTCP sender reports, Digest credentials work, wrong ones say
// 401 and are not retried fast, an unreachable camera says so, a camera that goes away is reconnected with
// back-off and its frames flow again, and the serve pipeline passes its H.264 through to NAME.h264 undecoded
// and measures a viewer's wait for the camera's next IDR; an H.265 camera (x265) is decoded on the CPU and
// served as H.264.
#include "beside_program.hpp"
#include "rtsp/rtsp_source.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "beside_program.hpp"
#include "child_process.hpp"
#include "encode/annexb.hpp"
#include "h264_test_decoder.hpp"
#include "rtsp_test_camera.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/pipeline.hpp"
#include "zerohop/share.hpp"

namespace zerohop::rtsp {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;

// Log lines, kept while it lives (and still written to stderr for the test's output).
class LogLines {
 public:
  LogLines() {
    log::setSink([this](log::Level, std::string_view line) {
      std::fprintf(stderr, "[zerohop] %.*s\n", static_cast<int>(line.size()), line.data());
      std::lock_guard lock(mutex_);
      lines_.emplace_back(line);
    });
  }
  ~LogLines() { log::setSink({}); }
  std::vector<std::string> containing(const std::string& needle) const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& l : lines_) {
      if (l.find(needle) != std::string::npos) out.push_back(l);
    }
    return out;
  }
  std::string all() const {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

EncodedUnit asUnit(const Frame& f) {
  EncodedUnit unit;
  unit.bytes.assign(f.data[0], f.data[0] + f.bytesUsed);
  return unit;
}

bool hasNal(const std::uint8_t* data, std::size_t size, int type) {
  const auto types = encode::nalTypes(data, size);
  return std::find(types.begin(), types.end(), type) != types.end();
}

// Reads `count` frames (each wait bounded), decodes each; returns the pictures decoded.
int readAndDecode(FrameSource& source, int count, std::chrono::seconds within) {
  zerohop::testing::H264TestDecoder decoder;
  int pictures = 0, read = 0, idrs = 0;
  std::uint64_t lastSequence = 0;
  const std::int64_t end = monotonicNs() + std::chrono::nanoseconds(within).count();
  while (read < count && monotonicNs() < end) {
    auto lease = source.next(500ms);
    if (!lease) continue;
    const Frame& f = lease->frame();
    EXPECT_EQ(f.format, PixelFormat::kH264);
    if (read > 0) {
      EXPECT_EQ(f.sequence, lastSequence + 1);
    }
    lastSequence = f.sequence;
    EXPECT_GT(f.captureNs(), 0);
    EXPECT_LE(f.captureNs(), f.times.at(Stage::kIngest));
    if (encode::containsIdr(f.data[0], f.bytesUsed)) {
      ++idrs;
      EXPECT_TRUE(f.keyframe);
      EXPECT_TRUE(hasNal(f.data[0], f.bytesUsed, encode::kNalSps)) << "IDR without SPS";
      EXPECT_TRUE(hasNal(f.data[0], f.bytesUsed, encode::kNalPps)) << "IDR without PPS";
    }
    if (read == 0) {
      EXPECT_TRUE(f.keyframe) << "each connection starts at an IDR";
    }
    for (const auto& picture : decoder.decode(asUnit(f))) {
      EXPECT_EQ(picture->width, 320);
      EXPECT_EQ(picture->height, 240);
      ++pictures;
    }
    ++read;
  }
  EXPECT_EQ(read, count);
  EXPECT_GE(idrs, 1);
  return pictures;
}

// Reads `count` decoded I420 frames of the test camera's pattern (10 s at most): each 320x240 with three
// planes, sequence rising, stamped at capture before ingest, not a flat plane. Returns how many were read.
int readPatternFrames(FrameSource& source, int count) {
  int read = 0;
  std::uint64_t lastSequence = 0;
  const std::int64_t end = monotonicNs() + 10'000'000'000;
  while (read < count && monotonicNs() < end) {
    auto lease = source.next(500ms);
    if (!lease) continue;
    const Frame& f = lease->frame();
    if (f.format != PixelFormat::kI420 || f.planeCount != 3) {  // its planes cannot be read as I420
      ADD_FAILURE() << "frame " << read << ": " << formatName(f.format) << " with " << f.planeCount << " planes";
      return read;
    }
    EXPECT_EQ(f.width, 320u);
    EXPECT_EQ(f.height, 240u);
    EXPECT_GE(f.pitch[0], 320u);
    EXPECT_GE(f.pitch[1], 160u);
    if (read > 0) {
      EXPECT_GT(f.sequence, lastSequence);
    }
    lastSequence = f.sequence;
    EXPECT_GT(f.captureNs(), 0);
    EXPECT_LE(f.captureNs(), f.times.at(Stage::kIngest));
    int lo = 255, hi = 0;
    for (std::uint32_t y = 0; y < f.height; y += 8) {
      for (std::uint32_t x = 0; x < f.width; x += 8) {
        lo = std::min<int>(lo, f.data[0][y * f.pitch[0] + x]);
        hi = std::max<int>(hi, f.data[0][y * f.pitch[0] + x]);
      }
    }
    EXPECT_GT(hi - lo, 64) << "a decoded picture of the pattern, not a flat plane";
    ++read;
  }
  return read;
}

// Reads NAME.h264 from its first IDR (the reader may join between two) until `wanted` pictures decode
// (10 s at most), each 320x240; `onIdr` sees each IDR. Returns the pictures decoded.
int decodeShare(Subscriber& units, int wanted, const std::function<void(const Frame&)>& onIdr = {}) {
  zerohop::testing::H264TestDecoder decoder;
  int pictures = 0, idrs = 0;
  const std::int64_t end = monotonicNs() + 10'000'000'000;
  while (pictures < wanted && monotonicNs() < end) {
    auto f = units.next(500ms);
    if (!f) continue;
    const Frame& frame = f->frame();
    const bool idr = encode::containsIdr(frame.data[0], frame.bytesUsed);
    if (idrs == 0 && !idr) continue;
    if (idr) {
      ++idrs;
      if (onIdr) onIdr(frame);
    }
    for (const auto& picture : decoder.decode(asUnit(frame))) {
      EXPECT_EQ(picture->width, 320);
      EXPECT_EQ(picture->height, 240);
      ++pictures;
    }
  }
  return pictures;
}

TEST(RtspSource, TcpAccessUnitsArriveAndDecode) {
  TestCamera camera;
  const SourceSpec spec = parseSourceSpec(camera.url());
  auto source = openSource(spec);
  const SourceInfo info = source->info();
  EXPECT_EQ(info.format, PixelFormat::kH264);
  EXPECT_EQ(info.width, 320u);
  EXPECT_EQ(info.height, 240u);
  EXPECT_NEAR(info.fps, 30.0, 0.01);
  EXPECT_NE(info.description.find("over tcp"), std::string::npos) << info.description;
  EXPECT_GE(readAndDecode(*source, 40, 10s), 38);  // the decoder may hold none back in low-delay mode
  EXPECT_EQ(source->counters().frames, 40u);
  EXPECT_FALSE(source->requestKeyframe()) << "RTSP has no keyframe request; the source must not claim one";
}

TEST(RtspSource, UdpAccessUnitsArriveAndDecode) {
  TestCamera camera;
  auto source = openSource(parseSourceSpec(camera.url() + "?protocols=udp"));
  EXPECT_NE(source->info().description.find("over udp"), std::string::npos) << source->info().description;
  EXPECT_GE(readAndDecode(*source, 30, 10s), 28);
}

// A second, independent server: an ffmpeg-made libx264 clip, packetized and sent by FFmpeg's RTP muxer
// (its RTCP, its SDP), behind rtsp_clip_server.py's own RTSP; nothing of GStreamer on the camera's side.
TEST(RtspSource, SecondServerTcpAccessUnitsArriveAndDecode) {
  TestCamera camera({}, 0, zerohop::testing::besideProgram(ZEROHOP_RTSP_CLIP_SERVER_SCRIPT));
  auto source = openSource(parseSourceSpec(camera.url()));
  const SourceInfo info = source->info();
  EXPECT_EQ(info.format, PixelFormat::kH264);
  EXPECT_EQ(info.width, 320u);
  EXPECT_EQ(info.height, 240u);
  EXPECT_NEAR(info.fps, 30.0, 0.01);
  EXPECT_NE(info.description.find("over tcp"), std::string::npos) << info.description;
  EXPECT_GE(readAndDecode(*source, 40, 10s), 38);
  EXPECT_EQ(source->counters().frames, 40u);
  EXPECT_EQ(camera.connections(500ms), 1) << "one connection, no reconnect";
}

TEST(RtspSource, SecondServerUdpAccessUnitsArriveAndDecode) {
  TestCamera camera({}, 0, zerohop::testing::besideProgram(ZEROHOP_RTSP_CLIP_SERVER_SCRIPT));
  auto source = openSource(parseSourceSpec(camera.url() + "?protocols=udp"));
  EXPECT_NE(source->info().description.find("over udp"), std::string::npos) << source->info().description;
  EXPECT_GE(readAndDecode(*source, 30, 10s), 28);
}

// format=i420: the camera's H.264 decoded on the CPU; each frame an I420 picture of the camera's size with
// the access unit's sequence and times, the ball pattern's picture (not a flat plane).
TEST(RtspSource, FormatI420DecodesTheCamerasH264OnTheCpu) {
  TestCamera camera;
  auto source = openSource(parseSourceSpec(camera.url() + "?format=i420"));
  const SourceInfo info = source->info();
  EXPECT_EQ(info.format, PixelFormat::kI420);
  EXPECT_EQ(info.memory, MemoryKind::kHost);
  EXPECT_EQ(info.width, 320u);
  EXPECT_EQ(info.height, 240u);
  EXPECT_NE(info.description.find("decoded to I420"), std::string::npos) << info.description;
  EXPECT_EQ(readPatternFrames(*source, 30), 30);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Instrumented, on two busy cores, this loop can fall behind the camera's 30 fps for a moment and the
  // source then drops the oldest decoded picture, as it should; what is checked there is the decode.
  EXPECT_LE(source->counters().drops, 30u);
#else
  EXPECT_EQ(source->counters().drops, 0u);
#endif
}

TEST(RtspSource, CaptureTimesComeFromTheCameraOnceItSendsASenderReport) {
  LogLines logs;
  TestCamera camera;
  auto source = openSource(parseSourceSpec(camera.url()));
  // rtpbin sends its first sender report a second or two in; every frame after it carries the camera's time.
  // (Arrival-timed frames have capture == ingest exactly; camera-timed ones a capture before the arrival.)
  int cameraTimed = 0, before = 0;
  const std::int64_t end = monotonicNs() + 15'000'000'000;
  while (cameraTimed < 10 && monotonicNs() < end) {
    auto lease = source->next(500ms);
    if (!lease) continue;
    // What /stats says (capture_clock): the last frame's origin, switched with the log line.
    const CaptureOrigin origin = source->counters().captureOrigin;
    if (logs.containing("from the camera's clock").empty()) {
      EXPECT_EQ(origin, CaptureOrigin::kArrival);
      continue;
    }
    EXPECT_EQ(origin, CaptureOrigin::kCamera);
    const std::int64_t behind = lease->frame().times.at(Stage::kIngest) - lease->frame().captureNs();
    EXPECT_GE(behind, 0) << "a frame is not captured after it arrives";
    EXPECT_LT(behind, 1'000'000'000) << "the same host's clock: well under a second";
    if (behind > 0) ++before;
    EXPECT_NEAR(static_cast<double>(lease->frame().wallClockMs),
                static_cast<double>(realtimeNs() / 1'000'000), 2000.0);
    ++cameraTimed;
  }
  EXPECT_EQ(cameraTimed, 10) << logs.all();
  EXPECT_GE(before, 5) << "the camera's times are not the arrival times";
  EXPECT_EQ(logs.containing("arrival times until the camera's first RTCP sender report").size(), 1u)
      << logs.all();
}

TEST(RtspSource, DigestCredentialsWithReservedCharactersAreAccepted) {
  TestCamera camera({"--user", "admin", "--password", "p@ss:w/rd", "--auth", "digest"});
  auto source = openSource(parseSourceSpec(camera.url("admin:p%40ss%3Aw%2Frd")));
  EXPECT_EQ(source->info().description.find("p@ss"), std::string::npos) << source->info().description;
  EXPECT_NE(source->info().description.find("***@"), std::string::npos) << source->info().description;
  EXPECT_GE(readAndDecode(*source, 10, 10s), 8);
}

TEST(RtspSource, WrongCredentialsSay401AndAreNotRetried) {
  LogLines logs;
  TestCamera camera({"--user", "admin", "--password", "right", "--auth", "basic"});
  try {
    openSource(parseSourceSpec(camera.url("admin:wrongpass")));
    FAIL() << "opened with a wrong password";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_NE(what.find("401 Unauthorized"), std::string::npos) << what;
    EXPECT_NE(what.find("user and password"), std::string::npos) << what;
    EXPECT_EQ(what.find("wrongpass"), std::string::npos) << what;
  }
  EXPECT_LE(camera.connections(1s), 1) << "one connection, no retry loop";
  EXPECT_EQ(logs.all().find("wrongpass"), std::string::npos) << logs.all();
}

TEST(RtspSource, CredentialsRefusedAfterAReconnectWaitInsteadOfRetryingFast) {
  LogLines logs;
  auto first = std::make_unique<TestCamera>();
  const std::uint16_t port = first->port();
  RtspPolicy fast;  // without the 401 rule, this would retry every 100-200 ms
  fast.firstRetry = 100ms;
  fast.maxRetry = 200ms;
  RtspSource source(parseRtspUrl(first->url("admin:oldpass")), fast);
  ASSERT_TRUE(source.next(5s));
  first->kill();
  // The camera comes back with another password: the source's next connection gets 401.
  TestCamera second({"--user", "admin", "--password", "newpass", "--auth", "basic"}, port);
  const std::int64_t end = monotonicNs() + 10'000'000'000;
  while (logs.containing("401 Unauthorized").empty() && monotonicNs() < end) source.next(100ms);
  ASSERT_FALSE(logs.containing("401 Unauthorized").empty()) << logs.all();
  EXPECT_NE(logs.containing("401 Unauthorized").front().find("next try in 30 s"), std::string::npos)
      << logs.all();
  const int connections = second.connections(300ms);  // its output up to the 401 read
  const std::int64_t windowEnd = monotonicNs() + 2'000'000'000;
  while (monotonicNs() < windowEnd) EXPECT_FALSE(source.next(100ms));
  EXPECT_EQ(second.connections(100ms), connections) << "a connection within 2 s of the 401";
  EXPECT_EQ(logs.all().find("oldpass"), std::string::npos);
}

TEST(RtspSource, UnreachableCameraIsNamedClearly) {
  const std::uint16_t port = zerohop::testing::freePort();  // nobody listens there
  const std::int64_t start = monotonicNs();
  try {
    openSource(parseSourceSpec("rtsp://admin:hunter2@127.0.0.1:" + std::to_string(port) + "/test"));
    FAIL() << "opened a camera nobody serves";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_NE(
        what.find("cannot reach the camera at 127.0.0.1:" + std::to_string(port) + " (Connection refused)"),
        std::string::npos)
        << what;
    EXPECT_NE(what.find("rtsp://***@127.0.0.1"), std::string::npos) << what;
    EXPECT_EQ(what.find("hunter2"), std::string::npos) << what;
  }
  EXPECT_LT(monotonicNs() - start, 8'000'000'000) << "a refused connection fails within the TCP timeout";
}

// format=nv12 where NVDEC cannot run (this CI machine: no GPU; or a build without CUDA) is refused before
// any connection, with the reason and the CPU decode to use instead. Where NVDEC works, the camera
// nobody serves is what fails, and the GPU test (NvdecSourceTest) covers the decode.
TEST(RtspSource, Nv12WithoutNvdecSaysWhyAndOffersTheCpuDecode) {
  const std::uint16_t port = zerohop::testing::freePort();  // nobody listens there
  try {
    openSource(parseSourceSpec("rtsp://admin:hunter2@127.0.0.1:" + std::to_string(port) + "/test?format=nv12"));
    FAIL() << "opened a camera nobody serves";
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("cannot reach the camera") != std::string::npos) GTEST_SKIP() << "NVDEC works here: " << what;
    EXPECT_EQ(e.code(), Errc::kUnavailable) << what;
    EXPECT_TRUE(what.find("NVDEC cannot decode H.264 here (") != std::string::npos ||
                what.find("needs a zerohop built with CUDA") != std::string::npos)
        << what;
    EXPECT_NE(what.find("format=i420"), std::string::npos) << what;
    EXPECT_EQ(what.find("hunter2"), std::string::npos) << what;
  }
}

TEST(RtspSource, ACameraThatGoesAwayIsReconnectedWithBackoff) {
  LogLines logs;
  auto camera = std::make_unique<TestCamera>();
  const std::uint16_t port = camera->port();
  RtspPolicy policy;
  policy.firstRetry = 200ms;
  policy.maxRetry = 800ms;
  RtspSource source(parseRtspUrl(camera->url()), policy);
  ASSERT_TRUE(source.next(5s));
  camera->kill();
  // While it is down (after the few units already on their way): tries spaced 0.2, 0.4, 0.8, 0.8 s.
  const std::int64_t downUntil = monotonicNs() + 2'500'000'000;
  while (monotonicNs() < downUntil) source.next(100ms);
  const auto tries = logs.containing("next try in");
  ASSERT_GE(tries.size(), 3u) << logs.all();
  EXPECT_LE(tries.size(), 6u) << logs.all();
  EXPECT_NE(tries[0].find("next try in 0.2 s"), std::string::npos) << logs.all();
  EXPECT_NE(tries[1].find("next try in 0.4 s"), std::string::npos) << logs.all();
  EXPECT_NE(tries[2].find("next try in 0.8 s"), std::string::npos) << logs.all();
  EXPECT_NE(tries[0].find(std::to_string(port)), std::string::npos)
      << "the line names the camera: " << tries[0];
  // Back on the same port: frames flow again.
  camera = std::make_unique<TestCamera>(std::vector<std::string>{}, port);
  zerohop::testing::H264TestDecoder decoder;
  int pictures = 0;
  const std::int64_t end = monotonicNs() + 10'000'000'000;
  while (pictures < 10 && monotonicNs() < end) {
    auto lease = source.next(500ms);
    if (lease) pictures += static_cast<int>(decoder.decode(asUnit(lease->frame())).size());
  }
  EXPECT_GE(pictures, 10) << logs.all();
  EXPECT_EQ(logs.containing("camera is back").size(), 1u) << logs.all();
  EXPECT_EQ(source.counters().stalls, 1u) << "one outage";
}

// A camera whose IDRs are further apart than RtspPolicy::idrTimeout (here 1 s against an IDR every 3 s):
// the connection is dropped with a line naming the camera and the cause, counted as a stall, and frames
// flow again from an IDR.
TEST(RtspSource, NoIdrForTooLongReconnectsSayingWhy) {
  LogLines logs;
  TestCamera camera({"--keyint", "90"});
  RtspPolicy policy;
  policy.idrTimeout = 1000ms;
  policy.firstRetry = 100ms;
  RtspSource source(parseRtspUrl(camera.url()), policy);
  int after = 0;  // frames after the first "no IDR" line
  bool firstAfterIsIdr = false;
  const std::int64_t end = monotonicNs() + 10'000'000'000;
  while (after < 5 && monotonicNs() < end) {
    auto lease = source.next(500ms);
    if (!lease || logs.containing("no IDR for 1 s").empty()) continue;
    if (after++ == 0) firstAfterIsIdr = lease->frame().keyframe;
  }
  const auto lines = logs.containing("no IDR for 1 s");
  ASSERT_FALSE(lines.empty()) << logs.all();
  EXPECT_NE(lines[0].find(std::to_string(camera.port())), std::string::npos) << "the line names the camera: " << lines[0];
  EXPECT_NE(lines[0].find("I-frame interval"), std::string::npos) << lines[0];
  EXPECT_EQ(after, 5) << "frames flow again after the reconnect\n" << logs.all();
  EXPECT_TRUE(firstAfterIsIdr) << "a new connection starts at an IDR";
  EXPECT_GE(source.counters().stalls, 1u);
}

TEST(RtspSource, ACameraWithoutVideoIsRefusedWithWhatItOffers) {
  TestCamera camera({"--codec", "pcma"});
  try {
    openSource(parseSourceSpec(camera.url()));
    FAIL() << "opened a camera with no video";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), Errc::kUnsupported) << what;
    EXPECT_NE(what.find("audio PCMA/8000"), std::string::npos) << what;
    EXPECT_NE(what.find("no H.264 or H.265 video"), std::string::npos) << what;
  }
}

// An H.265 camera (x265 through rtph265pay): WebRTC viewers take no H.265 as it is, so its pictures are
// decoded on the CPU whatever the format asked, and the camera is served as a raw one; the log says so once.
TEST(RtspSource, AnH265CameraIsDecodedOnTheCpu) {
  LogLines logs;
  TestCamera camera({"--codec", "h265"});
  auto source = openSource(parseSourceSpec(camera.url()));
  const SourceInfo info = source->info();
  EXPECT_EQ(info.format, PixelFormat::kI420);
  EXPECT_EQ(info.width, 320u);
  EXPECT_EQ(info.height, 240u);
  EXPECT_NE(info.description.find(" h265 "), std::string::npos) << info.description;
  EXPECT_NE(info.description.find("decoded to I420"), std::string::npos) << info.description;
  EXPECT_EQ(logs.containing("the camera sends H.265").size(), 1u) << logs.all();
  EXPECT_EQ(readPatternFrames(*source, 30), 30) << logs.all();
}

// The serve pipeline with an H.265 camera: its decoded pictures are encoded as H.264 (x264) for viewers and
// the H.264 share, and those units decode to the camera's size.
TEST(RtspPipeline, AnH265CameraIsEncodedAsH264ForViewers) {
  TestCamera camera({"--codec", "h265"});
  PipelineConfig config;
  config.source = parseSourceSpec(camera.url());
  config.gpu = "off";
  config.stream.port = 0;
  config.shareName = "zh-rtsp265-" + std::to_string(::getpid());
  StreamServer server(config.stream);  // the viewers' server: the pipeline binds no port
  config.viewers = server.unnamedStream();
  Pipeline pipeline(config);
  pipeline.start();
  Subscriber units(config.shareName + ".h264");
  const int pictures = decodeShare(units, 30);
  const std::string statsText = pipeline.statsJson();
  pipeline.stop();
  EXPECT_GE(pictures, 30);
  const auto stats = nlohmann::json::parse(statsText);
  EXPECT_NE(stats["encoder"].get<std::string>().find("libx264"), std::string::npos) << statsText;
  EXPECT_FALSE(pipeline.failure()) << pipeline.failure()->what();
}

// The serve pipeline with an RTSP camera: passthrough (no decode, no encode), every IDR on NAME.h264 with
// SPS/PPS, the units decode, and nothing it reports holds the camera's password.
TEST(RtspPipeline, CameraH264IsPassedThroughAndDecodes) {
  TestCamera camera({"--user", "admin", "--password", "hunter2", "--auth", "digest"});
  PipelineConfig config;
  config.source = parseSourceSpec(camera.url("admin:hunter2"));
  config.stream.port = 0;
  config.shareName = "zh-rtsp-" + std::to_string(::getpid());
  StreamServer server(config.stream);  // the viewers' server: the pipeline binds no port
  config.viewers = server.unnamedStream();
  Pipeline pipeline(config);
  pipeline.start();
  Subscriber units(config.shareName + ".h264");
  int idrs = 0;
  const int pictures = decodeShare(units, 30, [&](const Frame& idr) {
    ++idrs;
    EXPECT_TRUE(hasNal(idr.data[0], idr.bytesUsed, encode::kNalSps));
    EXPECT_TRUE(hasNal(idr.data[0], idr.bytesUsed, encode::kNalPps));
  });
  const std::string statsText = pipeline.statsJson();
  pipeline.stop();
  EXPECT_GE(pictures, 30);
  EXPECT_GE(idrs, 1);
  const auto stats = nlohmann::json::parse(statsText);
  EXPECT_NE(stats["encoder"].get<std::string>().find("passthrough"), std::string::npos) << statsText;
  EXPECT_FALSE(stats["stages"].contains("encode")) << statsText;
  EXPECT_EQ(statsText.find("hunter2"), std::string::npos) << statsText;
  EXPECT_FALSE(pipeline.failure()) << pipeline.failure()->what();
}

// A viewer that joins between two IDRs: asks for a keyframe once, at the third unit after an IDR.
// Thread-safety: deliver() from the encode thread, asked() from any.
class KeyframeAsker final : public UnitSink {
 public:
  void deliver(const EncodedUnitPtr& unit) override {
    if (unit->keyframe) {
      sinceIdr_ = 0;
      ++idrs_;
      return;
    }
    if (idrs_ > 0 && ++sinceIdr_ == 3 && !asked_.exchange(true)) request_();
  }
  void attach(const SinkSetup& setup) override { request_ = setup.requestKeyframe; }
  std::string describe() const override { return "a test viewer that asks for one keyframe"; }
  bool asked() const { return asked_.load(); }

 private:
  std::function<void()> request_;
  int idrs_ = 0, sinceIdr_ = 0;
  std::atomic<bool> asked_{false};
};

// An RTSP camera cannot be asked for a keyframe: the viewer waits for the camera's next IDR, and /stats
// shows that wait (more than nothing, less than the camera's IDR interval) beside the interval itself. The
// request pending from the pipeline's start is no viewer's and is not counted.
TEST(RtspPipeline, AViewersWaitForTheCamerasNextIdrIsShownInStats) {
  TestCamera camera({"--keyint", "15"});  // an IDR every 0.5 s at 30 fps
  PipelineConfig config;
  config.source = parseSourceSpec(camera.url());
  config.stream.port = 0;
  StreamServer server(config.stream);  // the viewers' server: the pipeline binds no port
  config.viewers = server.unnamedStream();
  Pipeline pipeline(config);
  auto asker = std::make_shared<KeyframeAsker>();
  pipeline.addUnitSink(asker);
  pipeline.start();
  KeyframeWaitStatus wait;
  const std::int64_t end = monotonicNs() + 8'000'000'000;
  while (monotonicNs() < end) {
    wait = pipeline.status().keyframeWait;
    // Four intervals: IDRs are timed as they are sent, and a camera's first frames can arrive in a burst
    // (TCP catching up after a slow start: one interval short, the one before it long), which a p50 of two
    // intervals would report.
    if (wait.count >= 1 && wait.idrInterval.samples >= 4) break;
    std::this_thread::sleep_for(20ms);  // polls the condition above, bounded by `end`
  }
  const std::string statsText = pipeline.statsJson();
  pipeline.stop();
  EXPECT_FALSE(pipeline.failure()) << pipeline.failure()->what();
  ASSERT_TRUE(asker->asked()) << "no IDR and three units after it came from the camera";
  ASSERT_EQ(wait.count, 1u) << statsText;
  ASSERT_GE(wait.idrInterval.samples, 4u) << statsText;
  // The request came three units after an IDR, so the wait ends within that IDR's interval to the next.
  EXPECT_GT(wait.maxMs, 0) << statsText;
  EXPECT_LE(wait.maxMs, wait.idrInterval.p99Ms + 1) << statsText;
  EXPECT_GT(wait.idrInterval.p50Ms, 250) << statsText;  // 500 ms, on a busy box give or take
  EXPECT_LT(wait.idrInterval.p50Ms, 1000) << statsText;
  std::fprintf(stderr, "keyframe wait %.1f ms; the camera's IDR interval p50 %.1f ms p99 %.1f ms (%llu)\n", wait.maxMs,
               wait.idrInterval.p50Ms, wait.idrInterval.p99Ms, static_cast<unsigned long long>(wait.idrInterval.samples));
  const auto stats = nlohmann::json::parse(statsText);
  EXPECT_EQ(stats["keyframe_wait"]["count"].get<std::uint64_t>(), 1u) << statsText;
  EXPECT_GT(stats["keyframe_wait"]["p50_ms"].get<double>(), 0) << statsText;
  EXPECT_GT(stats["keyframe_wait"]["idr_interval"]["p50_ms"].get<double>(), 250) << statsText;
}

}  // namespace
}  // namespace zerohop::rtsp
