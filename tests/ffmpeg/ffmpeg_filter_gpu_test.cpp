// zerohop <-> FFmpeg on the GPU through a filter graph: a device share's frame, wrapped as a CUDA
// AVFrame, scaled by FFmpeg's scale_cuda (Debian's FFmpeg has it) and read back; the lease goes
// with the graph. Built when libavfilter's development files are found. Label gpu.
#include <gtest/gtest.h>

extern "C" {
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/mem.h>
}

#include <string>

#include "gpu_frames.hpp"
#include "zerohop/ffmpeg.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using namespace ffmpeg_test;

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

}  // namespace
}  // namespace zerohop
