// The C API's zh_stream: frames written through its input handle (zh_publisher_acquire/commit, the
// calls a share's publisher takes) reach the stream's encoder in this process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "zerohop/zerohop.h"

using namespace std::chrono_literals;

namespace {

// 320x240 I420 from host memory at 30 fps, x264, on a free port: the small stream the tests create.
zh_stream_options smallHostStream() {
  zh_stream_options o = ZH_STREAM_OPTIONS_INIT;
  o.format = ZH_FORMAT_I420;
  o.width = 320;
  o.height = 240;
  o.fps = 30;
  o.memory = ZH_MEMORY_HOST;
  o.port = 0;
  o.encoder = "x264";
  return o;
}

nlohmann::json statsOf(zh_stream* stream) {
  std::vector<char> buf(1 << 16);
  std::size_t needed = 0;
  if (zh_stream_stats_json(stream, buf.data(), buf.size(), &needed) != ZH_OK) return {};
  return nlohmann::json::parse(buf.data());
}

TEST(CApiStream, APortInUseIsReportedInTheLibrarysTermsWithoutCliFlags) {
  // A port taken by a socket of ours (bound to port 0: the kernel picks a free one).
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  zh_stream_options o = ZH_STREAM_OPTIONS_INIT;
  o.format = ZH_FORMAT_I420;
  o.width = 320;
  o.height = 240;
  o.fps = 30;
  o.port = ntohs(a.sin_port);
  o.encoder = "x264";
  zh_stream* stream = nullptr;
  const zh_status created = zh_stream_create(&o, &stream);
  const std::string message = zh_last_error();
  ::close(fd);
  if (created == ZH_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the stream part: " << message;
  ASSERT_EQ(created, ZH_ERR_UNAVAILABLE) << message;
  EXPECT_EQ(stream, nullptr);
  EXPECT_NE(message.find("already in use"), std::string::npos) << message;
  EXPECT_NE(message.find("another port"), std::string::npos) << "the fix, in zh_stream_options' terms: " << message;
  EXPECT_EQ(message.find("--"), std::string::npos) << "a library caller is told a CLI flag: " << message;
}

// Settings zh_stream_create refuses are told in zh_stream_options' terms (what to change there), never
// as the zerohop CLI's flags (--whip-token, --encoder, ...), which a C caller has no use for.
TEST(CApiStream, BadSettingsAreReportedInTheLibrarysTermsWithoutCliFlags) {
  struct Case {
    const char* what;
    const char* whipUrl;
    const char* encoder;
    zh_status expected;
    const char* says;  // the cause or the fix, in the library's words
  } cases[] = {
      {"a WHIP URL with user info", "http://user:secret@127.0.0.1:9/whip", "x264", ZH_ERR_INVALID_ARGUMENT,
       "as the WHIP token"},
      {"an encoder that does not exist", nullptr, "fast", ZH_ERR_INVALID_ARGUMENT, "auto, x264 or nvenc; got 'fast'"},
      {"NVENC for frames in host memory", nullptr, "nvenc", ZH_ERR_UNAVAILABLE, "use the x264 encoder"},
  };
  for (const Case& c : cases) {
    zh_stream_options o = ZH_STREAM_OPTIONS_INIT;
    o.format = ZH_FORMAT_I420;
    o.width = 320;
    o.height = 240;
    o.fps = 30;
    o.port = 0;  // a free port: the refusal is about the setting, not the address
    o.encoder = c.encoder;
    o.whip_url = c.whipUrl;
    zh_stream* stream = nullptr;
    const zh_status created = zh_stream_create(&o, &stream);
    const std::string message = zh_last_error();
    if (created == ZH_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the stream part: " << message;
    EXPECT_EQ(created, c.expected) << c.what << ": " << message;
    EXPECT_EQ(stream, nullptr) << c.what;
    zh_stream_close(stream);
    EXPECT_NE(message.find(c.says), std::string::npos) << c.what << ": " << message;
    EXPECT_EQ(message.find("--"), std::string::npos) << c.what << ": a C caller is told a CLI flag: " << message;
    EXPECT_EQ(message.find("secret"), std::string::npos) << c.what << ": the password is quoted: " << message;
  }
}

TEST(CApiStream, FramesCommittedThroughTheInputHandleAreEncodedInProcess) {
  zh_stream_options o = smallHostStream();
  zh_stream* stream = nullptr;
  const zh_status created = zh_stream_create(&o, &stream);
  if (created == ZH_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the stream part: " << zh_last_error();
  ASSERT_EQ(created, ZH_OK) << zh_last_error();
  zh_publisher* input = nullptr;
  ASSERT_EQ(zh_stream_input(stream, &input), ZH_OK) << zh_last_error();
  EXPECT_EQ(zh_publisher_close(input), ZH_ERR_INVALID_ARGUMENT);  // the stream's: zh_stream_close ends it

  // Paced at the stream's rate until its encoder has sent frames (bounded: 20 s on a busy machine).
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  std::uint64_t n = 0;
  nlohmann::json stats;
  while (std::chrono::steady_clock::now() < deadline) {
    zh_slot* slot = nullptr;
    ASSERT_EQ(zh_publisher_acquire(input, &slot), ZH_OK) << zh_last_error();
    zh_frame_info info = ZH_FRAME_INFO_INIT;
    ASSERT_EQ(zh_slot_get_info(slot, &info), ZH_OK) << zh_last_error();
    ASSERT_EQ(info.plane_count, 3u);
    ASSERT_EQ(info.width, 320u);
    for (std::uint32_t p = 0; p < info.plane_count; ++p)
      std::memset(info.planes[p], static_cast<int>(n + p), std::size_t{info.pitches[p]} * (p == 0 ? 240 : 120));
    zh_frame_meta meta = ZH_FRAME_META_INIT;
    meta.sequence = ++n;
    ASSERT_EQ(zh_publisher_commit(input, slot, &meta, nullptr), ZH_OK) << zh_last_error();
    std::this_thread::sleep_for(33ms);  // the frame interval (pacing, not synchronisation)
    if (n % 10 == 0) {
      stats = statsOf(stream);
      if (stats.value("frames", 0) >= 5) break;
    }
  }
  EXPECT_GE(stats.value("frames", 0), 5) << "after " << n << " frames: " << stats.dump();
  EXPECT_NE(stats.value("source", std::string()).find("in process"), std::string::npos) << stats.dump();
  zh_publisher_stats ps = ZH_PUBLISHER_STATS_INIT;
  ASSERT_EQ(zh_publisher_get_stats(input, &ps), ZH_OK) << zh_last_error();
  EXPECT_EQ(ps.publishes, n);
  EXPECT_EQ(ps.readers_connected, 1u);
  EXPECT_EQ(zh_stream_check(stream), ZH_OK) << "a stream that encodes has no failure: " << zh_last_error();
  EXPECT_EQ(zh_stream_close(stream), ZH_OK) << zh_last_error();
  EXPECT_EQ(zh_stream_check(stream), ZH_ERR_INVALID_ARGUMENT) << "a closed stream is no stream";
  EXPECT_EQ(zh_stream_check(nullptr), ZH_ERR_INVALID_ARGUMENT);
}

// options.whip_simulcast is "on", "off" or NULL: anything else is refused at create, quoting it.
TEST(CApiStream, WhipSimulcastIsOnOrOff) {
  zh_stream_options o = smallHostStream();
  o.whip_simulcast = "yes";
  zh_stream* stream = nullptr;
  const zh_status refused = zh_stream_create(&o, &stream);
  if (refused == ZH_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the stream part: " << zh_last_error();
  EXPECT_EQ(refused, ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("options.whip_simulcast \"yes\""), std::string::npos)
      << zh_last_error();
  EXPECT_EQ(stream, nullptr);
  o.whip_simulcast = "off";
  ASSERT_EQ(zh_stream_create(&o, &stream), ZH_OK) << zh_last_error();
  EXPECT_EQ(zh_stream_close(stream), ZH_OK);
}

// Sound through the C API: zh_stream_push_audio takes 48 kHz PCM on a stream created with
// audio_channels, and refuses it (saying how) on one without; more than 2 channels is refused at create.
TEST(CApiStream, SoundIsPushedOnlyToAStreamCreatedWithIt) {
  zh_stream_options o = smallHostStream();
  o.audio_channels = 3;
  zh_stream* stream = nullptr;
  const zh_status refused = zh_stream_create(&o, &stream);
  if (refused == ZH_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the stream part: " << zh_last_error();
  EXPECT_EQ(refused, ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("audio_channels 3"), std::string::npos) << zh_last_error();
  EXPECT_EQ(stream, nullptr);

  const std::int16_t block[960] = {};
  o.audio_channels = 0;
  ASSERT_EQ(zh_stream_create(&o, &stream), ZH_OK) << zh_last_error();
  EXPECT_EQ(zh_stream_push_audio(stream, block, 480, 0), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("options.audio_channels 1 or 2"), std::string::npos)
      << "in the C API's terms: " << zh_last_error();
  EXPECT_EQ(zh_stream_close(stream), ZH_OK);

  o.audio_channels = 2;
  ASSERT_EQ(zh_stream_create(&o, &stream), ZH_OK) << zh_last_error();
  EXPECT_EQ(zh_stream_push_audio(stream, block, 480, 0), ZH_OK) << zh_last_error();
  EXPECT_EQ(zh_stream_push_audio(stream, nullptr, 480, 0), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_stream_push_audio(nullptr, block, 480, 0), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_stream_close(stream), ZH_OK);
}

}  // namespace
