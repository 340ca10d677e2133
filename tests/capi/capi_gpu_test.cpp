// The C API on device shares (label gpu; skips without a CUDA device): a C API publisher writes each
// slot with a kernel on its own stream and commits with that stream (nothing copied); a reader in
// another process, also through the C API, orders its kernel after the frame's event and finds every
// byte as written.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "beside_program.hpp"
#include "gpu_pattern.hpp"
#include "share_test_support.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/zerohop.h"

namespace {

const std::string kPeer = zerohop::testing::besideProgram(ZEROHOP_CAPI_GPU_PEER);

class CApiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const zerohop::GpuInfo info = zerohop::probeGpu();
    if (!info.available) GTEST_SKIP() << "no CUDA device: " << info.reason;
    char tmpl[] = "/tmp/zh-capi-gpu-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    name_ = "capigpu" + std::to_string(::getpid());
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf " + dir_).c_str());
  }
  std::string dir_, name_;
};

TEST_F(CApiGpu, AnotherProcessReadsDeviceFramesCommittedWithAStreamByteForByte) {
  zh_publisher_options o = ZH_PUBLISHER_OPTIONS_INIT;
  o.format = ZH_FORMAT_NV12;
  o.width = 1280;
  o.height = 720;
  o.memory = ZH_MEMORY_DEVICE;
  o.cuda_device = 0;
  o.slots = 4;
  o.directory = dir_.c_str();
  zh_publisher* pub = nullptr;
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &o, &pub), ZH_OK) << zh_last_error();
  constexpr int kFrames = 60;
  zerohop::share_test::Child reader({kPeer, name_, dir_, std::to_string(kFrames)});
  auto ready = reader.readLine();
  ASSERT_TRUE(ready && *ready == "ready") << (ready ? *ready : "no answer");
  zh_publisher_stats stats = ZH_PUBLISHER_STATS_INIT;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (zh_publisher_get_stats(pub, &stats) == ZH_OK && stats.readers_connected == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(stats.readers_connected, 1u);

  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const auto layout = zerohop::computeLayout(zerohop::PixelFormat::kNV12, 1280, 720, 256);
  int published = 0;
  // Publishes until the reader has read its frames and exited (at most 10 s of frames).
  bool readerDone = false;
  for (std::uint64_t seq = 1; !readerDone && published < 600; ++seq) {
    zh_slot* slot = nullptr;
    ASSERT_EQ(zh_publisher_acquire(pub, &slot), ZH_OK) << zh_last_error();
    zh_frame_info s = ZH_FRAME_INFO_INIT;
    ASSERT_EQ(zh_slot_get_info(slot, &s), ZH_OK);
    ASSERT_EQ(s.memory, ZH_MEMORY_DEVICE);
    ASSERT_EQ(s.cuda_device, 0);
    zerohop::Frame f;
    f.format = zerohop::PixelFormat::kNV12;
    f.width = 1280;
    f.height = 720;
    f.memory = zerohop::MemoryKind::kDevice;
    f.planeCount = 2;
    for (int i = 0; i < 2; ++i) {
      f.data[i] = static_cast<std::uint8_t*>(s.planes[i]);
      f.pitch[i] = s.pitches[i];
    }
    zerohop::share_test::launchFillPattern(f, layout, seq, stream);
    zh_frame_meta meta = ZH_FRAME_META_INIT;
    meta.sequence = seq;
    ASSERT_EQ(zh_publisher_commit(pub, slot, &meta, stream), ZH_OK) << zh_last_error();
    ++published;
    std::this_thread::sleep_for(std::chrono::milliseconds(16));  // ~60 fps, the reader's pace
    if (auto rc = reader.tryWait()) {
      EXPECT_EQ(*rc, 0) << "the reader found a wrong or torn frame, or failed";
      readerDone = true;
    }
  }
  EXPECT_TRUE(readerDone) << "the reader did not finish within 600 frames";
  int frames = 0;
  while (auto line = reader.readLine(std::chrono::seconds(5))) {
    if (line->rfind("frame ", 0) == 0) {
      ++frames;
      EXPECT_NE(line->find("mismatches 0 intact 1"), std::string::npos) << *line;
    }
    if (line->rfind("error", 0) == 0) ADD_FAILURE() << *line;
  }
  EXPECT_EQ(frames, kFrames);
  ASSERT_EQ(zh_publisher_get_stats(pub, &stats), ZH_OK);
  EXPECT_EQ(stats.bytes_copied, 0u);  // committed in place: the C API copied nothing
  EXPECT_GE(stats.publishes, static_cast<std::uint64_t>(kFrames));
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK) << zh_last_error();
}

}  // namespace
