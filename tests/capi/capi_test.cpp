// The C API (zerohop.h) against real shares in this process: round trips through both directions,
// and every misuse a caller can make answered with a status and a message, never a crash.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "capi_fixture.hpp"
#include "core/unique_fd.hpp"
#include "share/unix_socket.hpp"
#include "share/wire.hpp"
#include "zerohop/version.h"
#include "zerohop/zerohop.h"

using namespace std::chrono_literals;

namespace {

using zerohop::capi_test::CApi;

TEST_F(CApi, ReaderReadsWhatAPublisherCommitsInPlace) {
  zh_publisher* pub = nullptr;
  const auto po = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();

  zh_share_info share = ZH_SHARE_INFO_INIT;
  ASSERT_EQ(zh_reader_get_info(reader, &share), ZH_OK) << zh_last_error();
  EXPECT_EQ(share.format, ZH_FORMAT_I420);
  EXPECT_EQ(share.width, 64u);
  EXPECT_EQ(share.memory, ZH_MEMORY_HOST);
  EXPECT_STREQ(share.transport, "host-memfd");
  EXPECT_EQ(share.publisher_pid, ::getpid());
  EXPECT_EQ(share.ring_device, -1);  // host share: no GPU
  EXPECT_EQ(share.reader_device, -1);
  EXPECT_STREQ(share.device_access, "");
  // A caller built before the device fields existed: accepted, and nothing past its struct written.
  struct {
    zh_share_info info;
    unsigned char guard[32];
  } older{};
  std::memset(&older, 0xAB, sizeof older);
  older.info.struct_size = static_cast<std::uint32_t>(offsetof(zh_share_info, ring_device));
  ASSERT_EQ(zh_reader_get_info(reader, &older.info), ZH_OK) << zh_last_error();
  EXPECT_STREQ(older.info.transport, "host-memfd");
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(&older.info)[offsetof(zh_share_info, ring_device)], 0xAB);

  for (std::uint64_t seq = 1; seq <= 5; ++seq) {
    publishFilled(pub, static_cast<std::uint8_t>(10 * seq), seq);
    zh_frame* frame = nullptr;
    ASSERT_EQ(zh_reader_next(reader, 1000, &frame), ZH_OK) << zh_last_error();
    zh_frame_info info = ZH_FRAME_INFO_INIT;
    ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK) << zh_last_error();
    EXPECT_EQ(info.sequence, seq);
    EXPECT_EQ(info.publish_index, seq);
    EXPECT_EQ(info.format, ZH_FORMAT_I420);
    EXPECT_EQ(info.memory, ZH_MEMORY_HOST);
    EXPECT_EQ(info.cuda_device, -1);
    EXPECT_EQ(info.cuda_event, nullptr);
    EXPECT_GT(info.stage_ns[ZH_STAGE_CAPTURE], 0);
    EXPECT_GT(info.wall_clock_ms, 0);
    const auto* y = static_cast<const std::uint8_t*>(info.planes[0]);
    const auto* v = static_cast<const std::uint8_t*>(info.planes[2]);
    EXPECT_EQ(y[0], 10 * seq);
    EXPECT_EQ(y[std::size_t{info.pitches[0]} * 47 + 63], 10 * seq);
    EXPECT_EQ(v[0], 10 * seq + 2);
    EXPECT_EQ(zh_frame_wait_on_stream(frame, nullptr), ZH_OK);  // host frame: nothing to wait for
    EXPECT_EQ(zh_frame_check(frame), ZH_OK);
    EXPECT_EQ(zh_frame_release(frame), ZH_OK);
  }
  zh_reader_stats rs = ZH_READER_STATS_INIT;
  ASSERT_EQ(zh_reader_get_stats(reader, &rs), ZH_OK);
  EXPECT_EQ(rs.frames, 5u);
  zh_publisher_stats ps = ZH_PUBLISHER_STATS_INIT;
  ASSERT_EQ(zh_publisher_get_stats(pub, &ps), ZH_OK);
  EXPECT_EQ(ps.publishes, 5u);
  EXPECT_EQ(ps.bytes_copied, 0u);  // in-place commits copy nothing
  EXPECT_EQ(ps.readers_connected, 1u);
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
}

TEST_F(CApi, PublishCopiesAFrameAndLatestReturnsTheNewest) {
  zh_publisher* pub = nullptr;
  zh_publisher_options po = hostImages();
  po.format = ZH_FORMAT_RGBA;
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  std::string pixels(64 * 4 * 48, '\0');
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<char>(i * 7);
  zh_frame_info src = ZH_FRAME_INFO_INIT;
  src.format = ZH_FORMAT_RGBA;
  src.width = 64;
  src.height = 48;
  src.plane_count = 1;
  src.planes[0] = pixels.data();
  src.pitches[0] = 64 * 4;
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    zh_frame_meta meta = ZH_FRAME_META_INIT;
    meta.sequence = seq;
    ASSERT_EQ(zh_publisher_publish(pub, &src, &meta, nullptr), ZH_OK) << zh_last_error();
  }
  zh_frame* frame = nullptr;
  ASSERT_EQ(zh_reader_latest(reader, 1000, &frame), ZH_OK) << zh_last_error();
  zh_frame_info info = ZH_FRAME_INFO_INIT;
  ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK);
  EXPECT_EQ(info.sequence, 3u);
  ASSERT_EQ(info.pitches[0], 64u * 4);
  EXPECT_EQ(std::memcmp(info.planes[0], pixels.data(), pixels.size()), 0);
  zh_publisher_stats ps = ZH_PUBLISHER_STATS_INIT;
  ASSERT_EQ(zh_publisher_get_stats(pub, &ps), ZH_OK);
  EXPECT_EQ(ps.bytes_copied, 3u * pixels.size());
  zh_frame_release(frame);
  zh_reader_close(reader);
  zh_publisher_close(pub);
}

TEST_F(CApi, EncodedUnitsKeepTheirSizeAndKeyframeFlag) {
  zh_publisher* pub = nullptr;
  zh_reader* reader = nullptr;
  zh_share_info share = ZH_SHARE_INFO_INIT;
  ASSERT_NO_FATAL_FAILURE(openEncoded(ZH_FORMAT_H264, 1000, &pub, &reader, &share));
  const auto ro = readerOptions();
  EXPECT_EQ(share.format, ZH_FORMAT_H264);
  EXPECT_EQ(share.encoded, 1);
  EXPECT_EQ(share.width, 0u) << "no unit yet: no picture size to tell";
  const std::uint8_t unit[] = {0, 0, 0, 1, 0x65, 1, 2, 3};
  zh_frame_info src = ZH_FRAME_INFO_INIT;
  src.format = ZH_FORMAT_H264;
  src.width = 640;  // the picture the unit encodes
  src.height = 360;
  src.plane_count = 1;
  src.planes[0] = const_cast<std::uint8_t*>(unit);
  src.bytes_used = sizeof unit;
  zh_frame_meta meta = ZH_FRAME_META_INIT;
  meta.keyframe = 1;
  meta.sequence = 9;
  ASSERT_EQ(zh_publisher_publish(pub, &src, &meta, nullptr), ZH_OK) << zh_last_error();
  zh_frame* frame = nullptr;
  ASSERT_EQ(zh_reader_next(reader, 1000, &frame), ZH_OK) << zh_last_error();
  zh_frame_info info = ZH_FRAME_INFO_INIT;
  ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK);
  EXPECT_EQ(info.format, ZH_FORMAT_H264);
  EXPECT_EQ(info.bytes_used, sizeof unit);
  EXPECT_EQ(info.keyframe, 1);
  EXPECT_EQ(info.sequence, 9u);
  EXPECT_EQ(std::memcmp(info.planes[0], unit, sizeof unit), 0);
  zh_frame_release(frame);
  // The share's picture size is the units' (the ring itself describes none): once the reader has
  // seen one, and at once for a reader that opens after one was published.
  ASSERT_EQ(zh_reader_get_info(reader, &share), ZH_OK) << zh_last_error();
  EXPECT_EQ(share.width, 640u);
  EXPECT_EQ(share.height, 360u);
  zh_reader* later = nullptr;
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &later), ZH_OK) << zh_last_error();
  zh_share_info laterShare = ZH_SHARE_INFO_INIT;
  ASSERT_EQ(zh_reader_get_info(later, &laterShare), ZH_OK) << zh_last_error();
  EXPECT_EQ(laterShare.width, 640u);
  EXPECT_EQ(laterShare.height, 360u);
  zh_reader_close(later);
  // A unit larger than the slots: refused with the sizes named.
  std::string big(2000, 'x');
  src.planes[0] = big.data();
  src.bytes_used = big.size();
  EXPECT_EQ(zh_publisher_publish(pub, &src, nullptr, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("exceeds the slot capacity of 1000"), std::string::npos)
      << zh_last_error();
  zh_reader_close(reader);
  zh_publisher_close(pub);
}

// A sound share (what serve --share NAME --audio publishes as NAME.opus): a C reader is told it holds
// Opus, and each packet keeps its bytes and capture time.
TEST_F(CApi, ASoundShareSaysItHoldsOpusPackets) {
  zh_publisher* pub = nullptr;
  zh_reader* reader = nullptr;
  zh_share_info share = ZH_SHARE_INFO_INIT;
  ASSERT_NO_FATAL_FAILURE(openEncoded(ZH_FORMAT_OPUS, 1500, &pub, &reader, &share));
  EXPECT_EQ(share.format, ZH_FORMAT_OPUS);
  EXPECT_EQ(share.encoded, 1);
  EXPECT_STREQ(zh_format_name(share.format), "opus");
  const std::uint8_t packet[] = {0xf8, 0xff, 0xfe};  // 20 ms of CELT
  zh_frame_info src = ZH_FRAME_INFO_INIT;
  src.format = ZH_FORMAT_OPUS;
  src.plane_count = 1;
  src.planes[0] = const_cast<std::uint8_t*>(packet);
  src.bytes_used = sizeof packet;
  zh_frame_meta meta = ZH_FRAME_META_INIT;
  meta.keyframe = 1;
  meta.stage_ns[ZH_STAGE_CAPTURE] = 123'456'789;
  ASSERT_EQ(zh_publisher_publish(pub, &src, &meta, nullptr), ZH_OK) << zh_last_error();
  zh_frame* frame = nullptr;
  ASSERT_EQ(zh_reader_next(reader, 1000, &frame), ZH_OK) << zh_last_error();
  zh_frame_info info = ZH_FRAME_INFO_INIT;
  ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK);
  EXPECT_EQ(info.format, ZH_FORMAT_OPUS);
  EXPECT_EQ(info.bytes_used, sizeof packet);
  EXPECT_EQ(info.stage_ns[ZH_STAGE_CAPTURE], 123'456'789);
  EXPECT_EQ(std::memcmp(info.planes[0], packet, sizeof packet), 0);
  zh_frame_release(frame);
  zh_reader_close(reader);
  zh_publisher_close(pub);
}

TEST_F(CApi, OpenWaitsForAPublisherThatStartsLater) {
  std::thread later([&] {
    std::this_thread::sleep_for(150ms);  // the publisher's late start is what is tested
    zh_publisher* pub = nullptr;
    const auto po = hostImages();
    ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
    publishFilled(pub, 1, 1);
    std::this_thread::sleep_for(500ms);
    zh_publisher_close(pub);
  });
  zh_reader* reader = nullptr;
  const auto ro = readerOptions(5000);
  EXPECT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  zh_reader_close(reader);
  later.join();
}

// The header's promise: open waits up to its timeout whether the share never existed or its
// publisher was killed (its socket file left behind) and is coming back.
TEST_F(CApi, OpenWaitsThroughAKilledPublishersSocketUntilItIsBack) {
  ChildPublisher first = forkPublisher();
  ASSERT_GT(first.pid, 0);
  ASSERT_TRUE(waitReady(first)) << "the first publisher did not start";
  killChild(first);
  const std::string socketPath = dir_ + "/" + name_ + ".sock";
  ASSERT_EQ(::access(socketPath.c_str(), F_OK), 0) << "SIGKILL should leave the socket file behind";

  // No wait asked: at once, saying what happened and how to wait.
  zh_reader* reader = nullptr;
  auto ro = readerOptions(0);
  EXPECT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_ERR_UNAVAILABLE);
  std::string msg = zh_last_error();
  EXPECT_NE(msg.find("stale socket " + socketPath), std::string::npos) << msg;
  EXPECT_NE(msg.find("timeout"), std::string::npos) << msg;
  // A wait and nobody comes back: the whole wait, then the same answer.
  ro = readerOptions(300);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_ERR_UNAVAILABLE);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms) << "gave up before its timeout";
  EXPECT_EQ(reader, nullptr);

  // The publisher restarts 300 ms into a 20 s wait: the open attaches to it.
  ChildPublisher second = forkPublisher(300ms);
  ASSERT_GT(second.pid, 0);
  ro = readerOptions(20000);
  t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 15s);
  zh_share_info share = ZH_SHARE_INFO_INIT;
  ASSERT_EQ(zh_reader_get_info(reader, &share), ZH_OK) << zh_last_error();
  EXPECT_EQ(share.publisher_pid, second.pid);
  zh_frame* frame = nullptr;
  ASSERT_EQ(zh_reader_next(reader, 5000, &frame), ZH_OK) << zh_last_error();
  zh_frame_info info = ZH_FRAME_INFO_INIT;
  ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK) << zh_last_error();
  EXPECT_EQ(static_cast<const std::uint8_t*>(info.planes[0])[0], info.sequence & 0xFF);
  EXPECT_EQ(zh_frame_release(frame), ZH_OK);

  // Killed again: the reader says how to come back, and reconnect does once the next one is up.
  killChild(second);
  EXPECT_EQ(zh_reader_next(reader, 5000, &frame), ZH_ERR_UNAVAILABLE);
  msg = zh_last_error();
  EXPECT_NE(msg.find("went away: reconnect"), std::string::npos) << msg;
  ChildPublisher third = forkPublisher();
  ASSERT_TRUE(waitReady(third));
  ASSERT_EQ(zh_reader_reconnect(reader), ZH_OK) << zh_last_error();
  ASSERT_EQ(zh_reader_get_info(reader, &share), ZH_OK) << zh_last_error();
  EXPECT_EQ(share.publisher_pid, third.pid);
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
  killChild(third);
}

TEST_F(CApi, ListSharesNamesTheLiveOnes) {
  char buf[256];
  std::size_t needed = 0;
  ASSERT_EQ(zh_list_shares(dir_.c_str(), buf, sizeof buf, &needed), ZH_OK) << zh_last_error();
  EXPECT_STREQ(buf, "");
  zh_publisher* pub = nullptr;
  const auto po = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  ASSERT_EQ(zh_list_shares(dir_.c_str(), buf, sizeof buf, &needed), ZH_OK) << zh_last_error();
  EXPECT_EQ(std::string(buf), name_ + "\n");
  EXPECT_EQ(needed, name_.size() + 2);
  EXPECT_EQ(zh_list_shares(dir_.c_str(), buf, 3, &needed), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(needed, name_.size() + 2) << "the size needed, for a second call";
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
  ASSERT_EQ(zh_list_shares(dir_.c_str(), buf, sizeof buf, nullptr), ZH_OK) << zh_last_error();
  EXPECT_STREQ(buf, "") << "a closed share is gone";
}

// The library's log lines reach a C callback, at the level asked for.
TEST_F(CApi, LogLinesGoToTheCallback) {
  struct Lines {
    std::mutex mutex;  // the publisher's server thread logs too
    std::vector<std::pair<zh_log_level, std::string>> got;
    bool has(zh_log_level level, const std::string& text) {
      std::lock_guard lock(mutex);
      for (const auto& [l, m] : got)
        if (l == level && m.find(text) != std::string::npos) return true;
      return false;
    }
  } lines;
  const zh_log_callback collect = [](zh_log_level level, const char* message, void* user) {
    auto* l = static_cast<Lines*>(user);
    std::lock_guard lock(l->mutex);
    l->got.emplace_back(level, message);
  };
  ASSERT_EQ(zh_set_log_callback(collect, &lines, ZH_LOG_DEBUG), ZH_OK) << zh_last_error();
  zh_publisher* pub = nullptr;
  const auto po = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  EXPECT_TRUE(lines.has(ZH_LOG_DEBUG, "share '" + name_ + "': subscribed as reader"));
  zh_reader_close(reader);
  // At ZH_LOG_INFO the debug line is not passed on.
  ASSERT_EQ(zh_set_log_callback(collect, &lines, ZH_LOG_INFO), ZH_OK) << zh_last_error();
  {
    std::lock_guard lock(lines.mutex);
    lines.got.clear();
  }
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  EXPECT_FALSE(lines.has(ZH_LOG_DEBUG, "subscribed as reader"));
  zh_reader_close(reader);
  EXPECT_EQ(zh_set_log_callback(collect, &lines, static_cast<zh_log_level>(17)), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("17 is not a zh_log_level"), std::string::npos) << zh_last_error();
  EXPECT_EQ(zh_set_log_callback(nullptr, nullptr, ZH_LOG_INFO), ZH_OK);  // back to stderr
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
}

TEST_F(CApi, AShareNobodyPublishesIsNotFoundWithWhatToDo) {
  zh_reader* reader = reinterpret_cast<zh_reader*>(0x1);
  const auto ro = readerOptions(50);
  EXPECT_EQ(zh_reader_open_with("nobody-here", &ro, &reader), ZH_ERR_NOT_FOUND);
  EXPECT_EQ(reader, nullptr);  // the out-pointer is cleared on failure
  const std::string msg = zh_last_error();
  EXPECT_NE(msg.find("zh_reader_open"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nobody-here"), std::string::npos) << msg;
  EXPECT_NE(msg.find("start the publisher first"), std::string::npos) << msg;
}

TEST_F(CApi, TimeoutsAndAGonePublisherAreStatuses) {
  zh_publisher* pub = nullptr;
  const auto po = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK);
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  zh_frame* frame = nullptr;
  EXPECT_EQ(zh_reader_next(reader, 20, &frame), ZH_ERR_TIMEOUT);
  EXPECT_EQ(frame, nullptr);
  EXPECT_EQ(zh_reader_latest(reader, 20, &frame), ZH_ERR_TIMEOUT);
  publishFilled(pub, 5, 1);
  ASSERT_EQ(zh_reader_next(reader, 1000, &frame), ZH_OK);
  ASSERT_EQ(zh_publisher_close(pub), ZH_OK);
  // The frame outlives its publisher: its pixels stay mapped until released.
  zh_frame_info info = ZH_FRAME_INFO_INIT;
  ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK);
  EXPECT_EQ(static_cast<const std::uint8_t*>(info.planes[0])[0], 5);
  EXPECT_EQ(zh_frame_release(frame), ZH_OK);
  zh_frame* none = nullptr;
  EXPECT_EQ(zh_reader_next(reader, 2000, &none), ZH_ERR_UNAVAILABLE);
  EXPECT_NE(std::string(zh_last_error()).find("went away"), std::string::npos) << zh_last_error();
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
}

TEST_F(CApi, APolledReaderGetsEveryFrameAt30FpsAndSeesThePublisherDie) {
  ChildPublisher child = forkPublisher(std::chrono::milliseconds(0), std::chrono::milliseconds(33));
  ASSERT_TRUE(waitReady(child));
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  int fd = -1;
  ASSERT_EQ(zh_reader_get_fd(reader, &fd), ZH_OK) << zh_last_error();
  ASSERT_GE(fd, 0);
  int again = -1;
  EXPECT_EQ(zh_reader_get_fd(reader, &again), ZH_OK);
  EXPECT_EQ(again, fd);
  // 20 consecutive frames (about 0.7 s), each read only when poll() says so: no thread blocks in next.
  std::uint64_t last = 0;
  int got = 0;
  while (got < 20) {
    pollfd p{fd, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1) << "no wake-up within 5 s after " << got << " frames";
    zh_frame* frame = nullptr;
    zh_status st;
    while ((st = zh_reader_next(reader, 0, &frame)) == ZH_OK) {
      zh_frame_info info = ZH_FRAME_INFO_INIT;
      ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK);
      if (last != 0) {
        EXPECT_EQ(info.sequence, last + 1) << "a frame skipped or repeated";
      }
      last = info.sequence;
      ++got;
      EXPECT_EQ(zh_frame_release(frame), ZH_OK);
    }
    ASSERT_EQ(st, ZH_ERR_TIMEOUT) << zh_last_error();
  }
  zh_reader_stats stats = ZH_READER_STATS_INIT;
  ASSERT_EQ(zh_reader_get_stats(reader, &stats), ZH_OK);
  EXPECT_EQ(stats.missed, 0u);

  killChild(child);
  // The dead publisher wakes the poller, and the read says what happened instead of hanging.
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1) << "the descriptor did not turn readable when the publisher died";
  zh_frame* none = nullptr;
  EXPECT_EQ(zh_reader_next(reader, 0, &none), ZH_ERR_UNAVAILABLE);
  EXPECT_NE(std::string(zh_last_error()).find("went away"), std::string::npos) << zh_last_error();
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
  int closed = 0;
  EXPECT_EQ(zh_reader_get_fd(reader, &closed), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(closed, -1);
}

TEST_F(CApi, NullAndForeignHandlesAreErrorsNotCrashes) {
  zh_frame* frame = nullptr;
  zh_slot* slot = nullptr;
  zh_frame_info info = ZH_FRAME_INFO_INIT;
  zh_reader_stats rs = ZH_READER_STATS_INIT;
  EXPECT_EQ(zh_reader_next(nullptr, 0, &frame), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("zh_reader_next: reader is NULL"), std::string::npos)
      << zh_last_error();
  EXPECT_EQ(zh_reader_latest(nullptr, 0, &frame), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_reader_reconnect(nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_reader_get_stats(nullptr, &rs), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_frame_get_info(nullptr, &info), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_frame_check(nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_frame_wait_on_stream(nullptr, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_publisher_acquire(nullptr, &slot), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_publisher_commit(nullptr, nullptr, nullptr, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_publisher_publish(nullptr, &info, nullptr, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_slot_get_info(nullptr, &info), ZH_ERR_INVALID_ARGUMENT);
  // Ending NULL is a no-op, as free(NULL) is.
  EXPECT_EQ(zh_reader_close(nullptr), ZH_OK);
  EXPECT_EQ(zh_frame_release(nullptr), ZH_OK);
  EXPECT_EQ(zh_publisher_close(nullptr), ZH_OK);
  EXPECT_EQ(zh_slot_abandon(nullptr), ZH_OK);
  // Pointers that are not live handles of the right type: never dereferenced.
  int notAHandle = 0;
  EXPECT_EQ(zh_reader_close(reinterpret_cast<zh_reader*>(&notAHandle)), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_frame_release(reinterpret_cast<zh_frame*>(0xdeadbeef)), ZH_ERR_INVALID_ARGUMENT);

  zh_publisher* pub = nullptr;
  const auto po = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK);
  // A publisher passed where a reader is expected.
  EXPECT_EQ(zh_reader_next(reinterpret_cast<zh_reader*>(pub), 0, &frame), ZH_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(zh_publisher_acquire(pub, &slot), ZH_OK);
  EXPECT_EQ(zh_frame_release(reinterpret_cast<zh_frame*>(slot)), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_slot_abandon(slot), ZH_OK);
  EXPECT_EQ(zh_slot_abandon(slot), ZH_ERR_INVALID_ARGUMENT);  // twice
  // NULL out-pointers and NULL info structs.
  EXPECT_EQ(zh_publisher_acquire(pub, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_publisher_get_stats(pub, nullptr), ZH_ERR_INVALID_ARGUMENT);
  zh_publisher_stats tiny{};
  tiny.struct_size = 4;  // an older or careless caller's struct: refused, not overrun
  EXPECT_EQ(zh_publisher_get_stats(pub, &tiny), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("struct_size"), std::string::npos);
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
  EXPECT_EQ(zh_publisher_close(pub), ZH_ERR_INVALID_ARGUMENT);  // twice
}

TEST_F(CApi, ASlotCommittedToAnotherPublisherIsRefusedAndStaysUsable) {
  zh_publisher *a = nullptr, *b = nullptr;
  const auto po = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &a), ZH_OK);
  ASSERT_EQ(zh_publisher_create((name_ + "b").c_str(), &po, &b), ZH_OK);
  zh_slot* slot = nullptr;
  ASSERT_EQ(zh_publisher_acquire(a, &slot), ZH_OK);
  EXPECT_EQ(zh_publisher_commit(b, slot, nullptr, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_publisher_commit(a, slot, nullptr, nullptr), ZH_OK) << zh_last_error();
  zh_publisher_stats ps = ZH_PUBLISHER_STATS_INIT;
  ASSERT_EQ(zh_publisher_get_stats(a, &ps), ZH_OK);
  EXPECT_EQ(ps.publishes, 1u);
  // A slot still out when its publisher closes can only be abandoned.
  ASSERT_EQ(zh_publisher_acquire(b, &slot), ZH_OK);
  EXPECT_EQ(zh_publisher_close(b), ZH_OK);
  EXPECT_EQ(zh_publisher_commit(b, slot, nullptr, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_slot_abandon(slot), ZH_OK);
  EXPECT_EQ(zh_publisher_close(a), ZH_OK);
}

TEST_F(CApi, LayoutsTheRingRefusesAreInvalidArguments) {
  zh_publisher* pub = reinterpret_cast<zh_publisher*>(0x1);
  auto po = hostImages();
  po.width = 63;  // 4:2:0 needs an even width
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pub, nullptr);
  EXPECT_NE(std::string(zh_last_error()).find("zh_publisher_create"), std::string::npos);
  po = hostImages();
  po.format = static_cast<zh_format>(42);
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("not a zh_format"), std::string::npos) << zh_last_error();
  po = hostImages();
  po.format = ZH_FORMAT_H264;  // no unit_capacity
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("unit_capacity"), std::string::npos) << zh_last_error();
  po = hostImages();
  po.memory = ZH_MEMORY_PINNED;
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_publisher_create("bad/name", &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_publisher_create(name_.c_str(), nullptr, &pub), ZH_ERR_INVALID_ARGUMENT);
  po = hostImages();
  po.struct_size = 8;
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  // One name, one publisher.
  po = hostImages();
  zh_publisher* first = nullptr;
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &first), ZH_OK);
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_UNAVAILABLE);
  zh_publisher_close(first);
}

TEST_F(CApi, APublisherOfAnotherProtocolVersionIsAProtocolError) {
  // A fake publisher from the future answers the Hello with a version-7 Welcome.
  const std::string socketPath = dir_ + "/" + name_ + ".sock";
  auto listener = zerohop::share_detail::listenSeqpacket(socketPath, std::nullopt);
  std::thread fake([&] {
    pollfd p{listener.get(), POLLIN, 0};
    if (::poll(&p, 1, 20000) != 1) return;
    zerohop::UniqueFd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client) return;
    try {
      zerohop::share_detail::receiveMessage(client.get(), 20s);
      auto w = zerohop::share_detail::encodeWelcome(zerohop::share_detail::Welcome{});
      w[4] = 7;  // header version
      zerohop::share_detail::sendMessage(client.get(), w);
      zerohop::share_detail::receiveMessage(client.get(), 20s);  // until the reader hangs up
    } catch (const zerohop::Error&) {
    }
  });
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  EXPECT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_ERR_PROTOCOL);
  EXPECT_NE(std::string(zh_last_error()).find("v7"), std::string::npos) << zh_last_error();
  EXPECT_EQ(reader, nullptr);
  fake.join();
}

TEST(CApiNames, StatusAndFormatNames) {
  EXPECT_STREQ(zh_status_name(ZH_ERR_OVERWRITTEN), "ZH_ERR_OVERWRITTEN");
  EXPECT_STREQ(zh_status_name(static_cast<zh_status>(-99)), "ZH_ERR_UNKNOWN_STATUS");
  EXPECT_STREQ(zh_format_name(ZH_FORMAT_NV12), "nv12");
  EXPECT_STREQ(zh_format_name(static_cast<zh_format>(77)), "unknown");
  EXPECT_STREQ(zh_version(), ZEROHOP_VERSION_STRING);
}

}  // namespace
