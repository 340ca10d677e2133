// The C API tests' fixture: a temporary share directory and name, publishers and readers of small host
// images, and a publisher in a child process (the reader's reconnect and death cases).
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "zerohop/zerohop.h"

namespace zerohop::capi_test {

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zh-capi-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    name_ = "capi" + std::to_string(::getpid());
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  zh_publisher_options hostImages(std::uint32_t slots = 4) const {
    zh_publisher_options o = ZH_PUBLISHER_OPTIONS_INIT;
    o.format = ZH_FORMAT_I420;
    o.width = 64;
    o.height = 48;
    o.slots = slots;
    o.directory = dir_.c_str();
    return o;
  }
  zh_reader_options readerOptions(std::int32_t openTimeoutMs = 0) const {
    zh_reader_options o = ZH_READER_OPTIONS_INIT;
    o.directory = dir_.c_str();
    o.open_timeout_ms = openTimeoutMs;
    return o;
  }
  // An encoded share of `format` (units of up to `capacity` bytes), a reader of it, and what it says.
  void openEncoded(zh_format format, std::size_t capacity, zh_publisher** pub, zh_reader** reader,
                   zh_share_info* share) {
    zh_publisher_options po = ZH_PUBLISHER_OPTIONS_INIT;
    po.format = format;
    po.unit_capacity = capacity;
    po.directory = dir_.c_str();
    ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, pub), ZH_OK) << zh_last_error();
    const auto ro = readerOptions();
    ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, reader), ZH_OK) << zh_last_error();
    ASSERT_EQ(zh_reader_get_info(*reader, share), ZH_OK) << zh_last_error();
  }
  // Acquires a slot, fills every plane row with `value`, commits with `sequence`.
  void publishFilled(zh_publisher* pub, std::uint8_t value, std::uint64_t sequence) {
    zh_slot* slot = nullptr;
    ASSERT_EQ(zh_publisher_acquire(pub, &slot), ZH_OK) << zh_last_error();
    zh_frame_info info = ZH_FRAME_INFO_INIT;
    ASSERT_EQ(zh_slot_get_info(slot, &info), ZH_OK) << zh_last_error();
    ASSERT_EQ(info.plane_count, 3u);
    for (std::uint32_t p = 0; p < info.plane_count; ++p) {
      const std::uint32_t rows = p == 0 ? info.height : info.height / 2;
      std::memset(info.planes[p], value + p, std::size_t{info.pitches[p]} * rows);
    }
    zh_frame_meta meta = ZH_FRAME_META_INIT;
    meta.sequence = sequence;
    ASSERT_EQ(zh_publisher_commit(pub, slot, &meta, nullptr), ZH_OK) << zh_last_error();
  }

  // A publisher in a child process: after `delay`, creates the share (I420 64x48), says so on the
  // returned pipe (one byte) and publishes a frame every `period` until it is killed. The child uses the
  // C API only and never returns into the test.
  struct ChildPublisher {
    pid_t pid = -1;
    int ready = -1;  // read end: one byte once the share is up
  };
  ChildPublisher forkPublisher(std::chrono::milliseconds delay = std::chrono::milliseconds(0),
                               std::chrono::milliseconds period = std::chrono::milliseconds(5)) const {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const zh_publisher_options po = hostImages();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
      std::this_thread::sleep_for(delay);  // the publisher's late (re)start is what is tested
      zh_publisher* pub = nullptr;
      if (zh_publisher_create(name_.c_str(), &po, &pub) != ZH_OK) ::_exit(2);
      const char up = 'r';
      if (::write(fds[1], &up, 1) != 1) ::_exit(3);
      for (std::uint64_t seq = 1;; ++seq) {
        zh_slot* slot = nullptr;
        zh_frame_info info = ZH_FRAME_INFO_INIT;
        if (zh_publisher_acquire(pub, &slot) != ZH_OK || zh_slot_get_info(slot, &info) != ZH_OK) ::_exit(4);
        std::memset(info.planes[0], static_cast<int>(seq & 0xFF), info.pitches[0]);
        zh_frame_meta meta = ZH_FRAME_META_INIT;
        meta.sequence = seq;
        if (zh_publisher_commit(pub, slot, &meta, nullptr) != ZH_OK) ::_exit(5);
        std::this_thread::sleep_for(period);  // the publisher's frame rate
      }
    }
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      return {};
    }
    return {pid, fds[0]};
  }
  // True once `child` says its share is up (bounded: a hang guard).
  static bool waitReady(const ChildPublisher& child) {
    pollfd p{child.ready, POLLIN, 0};
    char c = 0;
    return ::poll(&p, 1, 20000) == 1 && ::read(child.ready, &c, 1) == 1;
  }
  static void killChild(ChildPublisher& child) {
    if (child.pid > 0) {
      ::kill(child.pid, SIGKILL);
      ::waitpid(child.pid, nullptr, 0);
    }
    if (child.ready >= 0) ::close(child.ready);
    child = {};
  }

  std::string dir_;
  std::string name_;
};

}  // namespace zerohop::capi_test
