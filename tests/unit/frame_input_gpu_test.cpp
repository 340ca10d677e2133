// FrameInput with device slots (label gpu): a program's GPU frames handed to the pipeline in process,
// ordered by the CUDA events the input records, never by a host wait. Each test skips, saying why,
// without a CUDA device. No pipeline here: the test reads the source as the pipeline's capture thread
// does, then orders its own stream after the frame's event and copies the pixels back to check them.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "zerohop/error.hpp"
#include "zerohop/frame_input.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

class FrameInputGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const GpuInfo gpu = probeGpu();
    if (!gpu.available) GTEST_SKIP() << "no CUDA device: " << gpu.reason;
    device_ = gpu.device;
    ASSERT_EQ(cudaSetDevice(device_), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  FrameInputConfig config() const {
    FrameInputConfig c;
    c.format = PixelFormat::kNV12;
    c.width = 640;
    c.height = 360;
    c.memory = MemoryKind::kDevice;
    c.cudaDevice = device_;
    c.slots = 3;
    return c;
  }
  /// Every byte of plane `p` of a device frame, after the frame's ready event (on our own stream).
  std::vector<std::uint8_t> download(const Frame& f, std::uint32_t p) {
    if (f.gpu.readyEvent) {
      EXPECT_EQ(cudaStreamWaitEvent(stream_, static_cast<cudaEvent_t>(f.gpu.readyEvent), 0), cudaSuccess);
    }
    const std::uint32_t rows = p == 0 ? f.height : f.height / 2;
    std::vector<std::uint8_t> out(std::size_t{f.width} * rows);
    EXPECT_EQ(cudaMemcpy2DAsync(out.data(), f.width, f.data[p], f.pitch[p], f.width, rows, cudaMemcpyDeviceToHost,
                                stream_),
              cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    return out;
  }
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
};

TEST_F(FrameInputGpu, DeviceSlotsWrittenOnTheProgramsStreamReachTheSourceOrderedByTheirEvent) {
  FrameInput input(config());
  auto source = input.openSource({});
  EXPECT_EQ(source->info().memory, MemoryKind::kDevice);
  cudaStream_t writer = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&writer, cudaStreamNonBlocking), cudaSuccess);
  for (std::uint8_t v : {11, 22, 33}) {
    InputSlot slot = input.acquireWrite();
    ASSERT_TRUE(slot);
    Frame& f = slot.frame();
    ASSERT_EQ(f.memory, MemoryKind::kDevice);
    // Written asynchronously on the program's stream: nothing waits for it on the host.
    ASSERT_EQ(cudaMemset2DAsync(f.data[0], f.pitch[0], v, f.width, f.height, writer), cudaSuccess);
    ASSERT_EQ(cudaMemset2DAsync(f.data[1], f.pitch[1], v + 1, f.width, f.height / 2, writer), cudaSuccess);
    Frame meta;
    meta.sequence = v;
    input.commit(std::move(slot), meta, writer);
  }
  for (std::uint8_t v : {11, 22, 33}) {
    auto lease = source->next(2s);
    ASSERT_TRUE(lease);
    const Frame& f = lease->frame();
    EXPECT_EQ(f.sequence, v);
    ASSERT_NE(f.gpu.readyEvent, nullptr) << "a device frame without its ready event";
    for (std::uint8_t b : download(f, 0)) ASSERT_EQ(b, v);
    for (std::uint8_t b : download(f, 1)) ASSERT_EQ(b, v + 1);
  }
  cudaStreamDestroy(writer);
  EXPECT_EQ(input.stats().bytesCopied, 0u) << "in-place commits copy nothing";
}

TEST_F(FrameInputGpu, HostFramesPublishedIntoDeviceSlotsArriveByteForByte) {
  FrameInput input(config());
  auto source = input.openSource({});
  const std::uint32_t w = 640, h = 360;
  std::vector<std::uint8_t> y(std::size_t{w} * h), uv(std::size_t{w} * h / 2);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<std::uint8_t>(i * 7 + (i >> 9));
  for (std::size_t i = 0; i < uv.size(); ++i) uv[i] = static_cast<std::uint8_t>(i * 13 + 5);
  Frame host;
  host.format = PixelFormat::kNV12;
  host.width = w;
  host.height = h;
  host.memory = MemoryKind::kHost;
  host.planeCount = 2;
  host.data[0] = y.data();
  host.pitch[0] = w;
  host.data[1] = uv.data();
  host.pitch[1] = w;
  host.sequence = 7;
  input.publish(host);
  auto lease = source->next(2s);
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->frame().sequence, 7u);
  EXPECT_EQ(download(lease->frame(), 0), y);
  EXPECT_EQ(download(lease->frame(), 1), uv);
  EXPECT_EQ(input.stats().bytesCopied, y.size() + uv.size());
}

TEST_F(FrameInputGpu, ADeviceCommitWithoutStreamOrEventIsRefusedAndTheSlotGivenBack) {
  FrameInputConfig c = config();
  c.slots = 1;
  c.acquireTimeout = 500ms;
  FrameInput input(c);
  auto source = input.openSource({});
  InputSlot slot = input.acquireWrite();
  ASSERT_TRUE(slot);
  EXPECT_THROW(input.commit(std::move(slot), Frame{}), Error);
  // The one slot came back: acquiring again does not time out.
  EXPECT_TRUE(input.acquireWrite());
}

}  // namespace
}  // namespace zerohop
