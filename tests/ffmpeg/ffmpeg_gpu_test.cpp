// zerohop <-> FFmpeg on the GPU: a device share's frame wrapped as an AV_PIX_FMT_CUDA AVFrame
// (the slot's own device pointers, in this process and from another one) read back by
// av_hwframe_transfer_data; a CUDA AVFrame published into a device share reads back byte for byte.
// Needs libavutil only (the filter-graph case is ffmpeg_filter_gpu_test.cpp), so its run-time
// closure is small enough to carry to a GPU machine without FFmpeg. Label gpu: skips without a device.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
}

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "beside_program.hpp"
#include "child_process.hpp"
#include "gpu_frames.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/ffmpeg.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using namespace ffmpeg_test;

// The peer binary: $ZEROHOP_SHARE_GPU_PEER where set (a bundle run on the GPU machine), else the build's.
std::string peerBinary() {
  return zerohop::testing::fromEnvOrBesideProgram("ZEROHOP_SHARE_GPU_PEER", ZEROHOP_SHARE_GPU_PEER);
}

TEST_F(FfmpegGpu, DeviceFrameIsACudaAVFrameOverTheSlot) {
  const auto layout = computeLayout(PixelFormat::kNV12, kW, kH, 256);
  Publisher pub(name_, SlotLayout::deviceImages(layout, 4, device_));
  Subscriber sub(name_);
  Frame src;
  auto bytes = halvesNv12(layout, src);
  pub.publish(src);  // host -> the device slot
  auto shared = sub.next(2000ms);
  ASSERT_TRUE(shared);
  ASSERT_EQ(shared->frame().memory, MemoryKind::kDevice);
  std::uint8_t* devY = shared->frame().data[0];
  AVFramePtr cuda = wrapAsAVFrame(std::move(*shared));
  ASSERT_EQ(cuda->format, AV_PIX_FMT_CUDA);
  ASSERT_TRUE(cuda->hw_frames_ctx);
  EXPECT_EQ(reinterpret_cast<AVHWFramesContext*>(cuda->hw_frames_ctx->data)->sw_format, AV_PIX_FMT_NV12);
  EXPECT_EQ(cuda->data[0], devY);  // the slot itself, not a copy
  EXPECT_EQ(pub.stats().leasedSlots, 1u);

  AVFramePtr host(av_frame_alloc());
  ASSERT_EQ(av_hwframe_transfer_data(host.get(), cuda.get(), 0), 0);
  expectSameNv12(*host, src, layout);
  EXPECT_TRUE(wrappedFrameIntact(*cuda));
  cuda.reset();
  EXPECT_EQ(pub.stats().leasedSlots, 0u);
}

TEST_F(FfmpegGpu, CudaAVFramePublishedReadsBackByteExact) {
  const auto layout = computeLayout(PixelFormat::kNV12, kW, kH, 256);
  Publisher pub(name_, SlotLayout::deviceImages(layout, 3, device_));
  Subscriber sub(name_);

  AVBufferRef* deviceRef = cudaDeviceContext(device_);
  ASSERT_NE(deviceRef, nullptr);
  AVBufferRef* framesRef = av_hwframe_ctx_alloc(deviceRef);
  auto* fc = reinterpret_cast<AVHWFramesContext*>(framesRef->data);
  fc->format = AV_PIX_FMT_CUDA;
  fc->sw_format = AV_PIX_FMT_NV12;
  fc->width = kW;
  fc->height = kH;
  fc->initial_pool_size = 2;
  ASSERT_EQ(av_hwframe_ctx_init(framesRef), 0);
  AVFramePtr cuda(av_frame_alloc());
  ASSERT_EQ(av_hwframe_get_buffer(framesRef, cuda.get(), 0), 0);

  Frame src;
  auto bytes = halvesNv12(layout, src);
  AVFramePtr host(av_frame_alloc());
  host->format = AV_PIX_FMT_NV12;
  host->width = kW;
  host->height = kH;
  ASSERT_EQ(av_frame_get_buffer(host.get(), 0), 0);
  for (std::uint32_t p = 0; p < 2; ++p) {
    for (std::uint32_t r = 0; r < layout.planes[p].rows; ++r) {
      std::memcpy(host->data[p] + std::size_t{r} * host->linesize[p],
                  src.data[p] + std::size_t{r} * src.pitch[p], layout.planes[p].widthBytes);
    }
  }
  ASSERT_EQ(av_hwframe_transfer_data(cuda.get(), host.get(), 0), 0);  // upload on the device context's stream
  publishAVFrame(pub, *cuda);  // device -> device slot, on that same stream

  auto shared = sub.next(2000ms);
  ASSERT_TRUE(shared);
  AVFramePtr back = wrapAsAVFrame(std::move(*shared));
  AVFramePtr check(av_frame_alloc());
  ASSERT_EQ(av_hwframe_transfer_data(check.get(), back.get(), 0), 0);
  expectSameNv12(*check, src, layout);
  back.reset();
  cuda.reset();
  av_buffer_unref(&framesRef);
  av_buffer_unref(&deviceRef);
}

// The real case: the frames come from another process (VMM fd or legacy IPC import), so the
// AVFrame's data[] are this process's mapping of the publisher's memory on the primary context.
TEST_F(FfmpegGpu, FramesFromAnotherProcessAreCudaAVFrames) {
  char tmpl[] = "/tmp/zerohop-ffmpeg-gpu-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    testing::ChildProcess peer({peerBinary(), "publish", name_, dir, "4"});
    ASSERT_TRUE(peer.waitForStdoutLine("ready", 20s)) << peer.stderrText();
    SubscribeOptions so;
    so.directory = dir;
    Subscriber sub(name_, so);
    EXPECT_FALSE(sub.info().inProcess);
    EXPECT_EQ(sub.info().memory, MemoryKind::kDevice);
    const ImageLayout l = share_test::testLayout();
    for (int i = 0; i < 5; ++i) {
      auto f = sub.next(2000ms);
      ASSERT_TRUE(f);
      const std::uint64_t seq = f->frame().sequence;
      AVFramePtr cuda = wrapAsAVFrame(std::move(*f));
      ASSERT_EQ(cuda->format, AV_PIX_FMT_CUDA);
      AVFramePtr host(av_frame_alloc());
      ASSERT_EQ(av_hwframe_transfer_data(host.get(), cuda.get(), 0), 0);
      ASSERT_TRUE(wrappedFrameIntact(*cuda)) << "the publisher overwrote a leased slot";
      for (std::uint32_t p = 0; p < l.planeCount; ++p) {
        for (std::uint32_t r = 0; r < l.planes[p].rows; ++r) {
          for (std::uint32_t x = 0; x < l.planes[p].widthBytes; ++x) {
            ASSERT_EQ(host->data[p][std::size_t{r} * host->linesize[p] + x],
                      share_test::patternByte(seq, p, std::size_t{r} * l.planes[p].widthBytes + x))
                << "seq " << seq << " plane " << p << " row " << r << " byte " << x;
          }
        }
      }
    }
  }  // every frame released, then the reader, then the publisher (SIGKILL)
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zerohop
