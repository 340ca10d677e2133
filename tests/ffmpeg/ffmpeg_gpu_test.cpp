// zerohop <-> FFmpeg on the GPU: a device share's frame wrapped as an AV_PIX_FMT_CUDA AVFrame
// (the slot's own device pointers) read back by av_hwframe_transfer_data and run through FFmpeg's
// scale_cuda filter graph; a CUDA AVFrame published into a device share reads back byte for byte.
// Label gpu: every test skips without a CUDA device.
#include <gtest/gtest.h>
#include <unistd.h>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
#ifdef ZEROHOP_TEST_HAVE_AVFILTER
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#endif
}

#include <signal.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "child_process.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/ffmpeg.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kW = 640, kH = 360;

// NV12: luma 50 on the left half, 200 on the right; chroma rows a gradient.
std::vector<std::uint8_t> halvesNv12(const ImageLayout& l, Frame& f) {
  std::vector<std::uint8_t> buf(l.totalBytes, 0);
  for (std::uint32_t r = 0; r < l.planes[0].rows; ++r) {
    for (std::uint32_t x = 0; x < kW; ++x)
      buf[l.planes[0].offset + std::size_t{r} * l.planes[0].pitch + x] = x < kW / 2 ? 50 : 200;
  }
  for (std::uint32_t r = 0; r < l.planes[1].rows; ++r) {
    for (std::uint32_t x = 0; x < kW; ++x) {
      buf[l.planes[1].offset + std::size_t{r} * l.planes[1].pitch + x] =
          static_cast<std::uint8_t>(64 + (x + r) % 128);
    }
  }
  bindLayout(f, l, buf.data(), MemoryKind::kHost);
  f.format = PixelFormat::kNV12;
  f.width = kW;
  f.height = kH;
  return buf;
}

void expectSameNv12(const AVFrame& host, const Frame& ref, const ImageLayout& l) {
  ASSERT_EQ(host.format, AV_PIX_FMT_NV12);
  for (std::uint32_t p = 0; p < 2; ++p) {
    for (std::uint32_t r = 0; r < l.planes[p].rows; ++r) {
      ASSERT_EQ(std::memcmp(host.data[p] + std::size_t{r} * host.linesize[p],
                            ref.data[p] + std::size_t{r} * ref.pitch[p], l.planes[p].widthBytes),
                0)
          << "plane " << p << " row " << r;
    }
  }
}

class FfmpegGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const GpuInfo info = probeGpu();
    if (!info.available) GTEST_SKIP() << "no CUDA device: " << info.reason;
    device_ = info.device;
    name_ = std::string("ffm-gpu-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
            std::to_string(getpid());
  }
  int device_ = 0;
  std::string name_;
};

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
    testing::ChildProcess peer({ZEROHOP_SHARE_GPU_PEER, "publish", name_, dir, "4"});
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

#ifdef ZEROHOP_TEST_HAVE_AVFILTER
TEST_F(FfmpegGpu, DeviceFrameThroughScaleCuda) {
  if (!avfilter_get_by_name("scale_cuda")) GTEST_SKIP() << "this libavfilter has no scale_cuda";
  const auto layout = computeLayout(PixelFormat::kNV12, kW, kH, 256);
  Publisher pub(name_, SlotLayout::deviceImages(layout, 4, device_));
  Subscriber sub(name_);
  Frame src;
  auto bytes = halvesNv12(layout, src);
  pub.publish(src);
  auto shared = sub.next(2000ms);
  ASSERT_TRUE(shared);
  AVFramePtr cuda = wrapAsAVFrame(std::move(*shared));

  AVFilterGraph* graph = avfilter_graph_alloc();
  AVFilterContext* in = nullptr;
  AVFilterContext* out = nullptr;
  const std::string args = "video_size=" + std::to_string(kW) + "x" + std::to_string(kH) +
                           ":pix_fmt=cuda"  // AV_PIX_FMT_CUDA
                           ":time_base=1/1000000000:pixel_aspect=1/1";
  ASSERT_GE(
      avfilter_graph_create_filter(&in, avfilter_get_by_name("buffer"), "in", args.c_str(), nullptr, graph),
      0);
  AVBufferSrcParameters* par = av_buffersrc_parameters_alloc();
  par->format = AV_PIX_FMT_CUDA;
  par->hw_frames_ctx = cuda->hw_frames_ctx;  // borrowed: av_buffersrc_parameters_set takes its own ref
  ASSERT_GE(av_buffersrc_parameters_set(in, par), 0);
  av_free(par);
  ASSERT_GE(
      avfilter_graph_create_filter(&out, avfilter_get_by_name("buffersink"), "out", nullptr, nullptr, graph),
      0);
  AVFilterInOut* outputs = avfilter_inout_alloc();
  AVFilterInOut* inputs = avfilter_inout_alloc();
  outputs->name = av_strdup("in");
  outputs->filter_ctx = in;
  inputs->name = av_strdup("out");
  inputs->filter_ctx = out;
  ASSERT_GE(avfilter_graph_parse_ptr(graph, "scale_cuda=320:180", &inputs, &outputs, nullptr), 0);
  avfilter_inout_free(&inputs);
  avfilter_inout_free(&outputs);
  ASSERT_GE(avfilter_graph_config(graph, nullptr), 0);

  ASSERT_GE(av_buffersrc_add_frame_flags(in, cuda.get(), 0), 0);  // takes the reference
  ASSERT_GE(av_buffersrc_add_frame_flags(in, nullptr, 0), 0);     // EOF: flush
  AVFramePtr scaled(av_frame_alloc());
  ASSERT_GE(av_buffersink_get_frame(out, scaled.get()), 0);
  EXPECT_EQ(scaled->format, AV_PIX_FMT_CUDA);
  EXPECT_EQ(scaled->width, 320);
  EXPECT_EQ(scaled->height, 180);
  AVFramePtr host(av_frame_alloc());
  ASSERT_EQ(av_hwframe_transfer_data(host.get(), scaled.get(), 0), 0);
  ASSERT_EQ(host->format, AV_PIX_FMT_NV12);
  // The halves survive the scaling: left 50, right 200 (away from the edge).
  for (int r : {10, 90, 170}) {
    EXPECT_NEAR(host->data[0][r * host->linesize[0] + 40], 50, 2) << r;
    EXPECT_NEAR(host->data[0][r * host->linesize[0] + 280], 200, 2) << r;
  }
  avfilter_graph_free(&graph);  // the graph held the last reference to the wrapped input
  scaled.reset();
  EXPECT_EQ(pub.stats().leasedSlots, 0u);
}
#endif

}  // namespace
}  // namespace zerohop
