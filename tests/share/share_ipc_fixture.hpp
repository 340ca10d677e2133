#pragma once
// The fixture of the share's cross-process tests (share_ipc_test.cpp: frames, reading and publishing;
// share_ipc_access_test.cpp: names, handshakes and who may subscribe): its own directory and name per
// test, a test layout, and a raw client for handshakes. In a named namespace, so the two files' tests are
// one GoogleTest suite of one fixture class.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "beside_program.hpp"
#include "core/unique_fd.hpp"
#include "share/ring_layout.hpp"
#include "share/unix_socket.hpp"
#include "share/wire.hpp"
#include "share_test_support.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop::share_test {

using namespace std::chrono_literals;

inline const std::string kPeer = zerohop::testing::besideProgram(ZEROHOP_SHARE_PEER);

class ShareIpc : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zerohop-share-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    storage_.resize(layout_.totalBytes);
    bindLayout(frame_, layout_, storage_.data(), MemoryKind::kHost);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ShareOptions shareOptions() const {
    ShareOptions o;
    o.directory = dir_;
    return o;
  }
  SubscribeOptions subscribeOptions() const {
    SubscribeOptions o;
    o.directory = dir_;
    return o;
  }
  void publishSeq(Publisher& pub, std::uint64_t seq) {
    frame_.sequence = seq;
    frame_.times.mark(Stage::kCapture, static_cast<std::int64_t>(seq) * 10);
    fillPattern(frame_, layout_);
    pub.publish(frame_);
  }
  std::vector<std::string> peer(std::initializer_list<std::string> args) const {
    std::vector<std::string> v{kPeer};
    v.insert(v.end(), args);
    return v;
  }
  std::string socketPath() const { return dir_ + "/" + name_ + ".sock"; }

  /// A raw client: connects, sends `bytes` (optionally with a descriptor), returns the publisher's answer.
  std::optional<share_detail::ReceivedMessage> rawExchange(const std::vector<std::uint8_t>& bytes,
                                                           int fd = -1) {
    auto sock = share_detail::connectSeqpacket(socketPath());
    if (!bytes.empty()) {
      if (fd >= 0) {
        const int fds[1] = {fd};
        share_detail::sendMessage(sock.get(), bytes, fds);
      } else {
        share_detail::sendMessage(sock.get(), bytes);
      }
    }
    return share_detail::receiveMessage(sock.get(), 10s);
  }

  /// Waits (bounded) until the publisher has seen `n` readers.
  bool waitForReaders(Publisher& pub, std::uint32_t n, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (pub.stats().readersConnected != n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }

  std::string dir_, name_;
  ImageLayout layout_ = testLayout();
  std::vector<std::uint8_t> storage_;
  Frame frame_;
};

}  // namespace zerohop::share_test
