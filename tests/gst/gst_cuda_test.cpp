// gstzerohop with CUDA memory (label gpu). zerohopsrc on a device share: another process publishes
// pattern frames written by a kernel into a device ring (tests/share's zerohop_share_gpu_peer),
// zerohopsrc hands them out as video/x-raw(memory:CUDAMemory), nvcodec's cudadownload (and cudaconvert)
// bring them to the host, and every byte of every intact frame is checked against the publisher's
// pattern for its sequence. zerohopsink with CUDA memory in: cudaupload's buffers published into a
// device share, read and checked by a kernel in that peer process.
// Skips, saying why, without a CUDA device or without the nvcodec elements (they register only
// where GStreamer's CUDA library can load libcuda.so.1).
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#define GST_USE_UNSTABLE_API  // GStreamer's CUDA library: public since 1.22, marked unstable
#include <gst/cuda/gstcudanvrtc.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "beside_program.hpp"
#include "child_process.hpp"
#include "share_test_support.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using share_test::patternByte;
using share_test::testLayout;
using testing::ChildProcess;

// Build-tree paths, or (a copy carried to the GPU machine: scripts/gpu-gst-check.sh) the environment's.
using zerohop::testing::fromEnvOrBesideProgram;

// Skips without a CUDA device or without the elements a test needs; initialises GStreamer once.
class GstCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const GpuInfo gpu = probeGpu();
    if (!gpu.available) GTEST_SKIP() << "no CUDA device: " << gpu.reason;
    static const bool once = [] {
      setenv("GST_REGISTRY",
             fromEnvOrBesideProgram("ZEROHOP_TEST_GST_REGISTRY", ZEROHOP_GST_REGISTRY).c_str(), 1);
      setenv("GST_PLUGIN_PATH",
             fromEnvOrBesideProgram("ZEROHOP_TEST_GST_PLUGIN_DIR", ZEROHOP_GST_PLUGIN_DIR).c_str(), 1);
      gst_init(nullptr, nullptr);
      return true;
    }();
    (void)once;
    for (const char* e : {"cudadownload", "cudaupload", "zerohopsrc"}) {
      GstElementFactory* f = gst_element_factory_find(e);
      if (!f) {
        GTEST_SKIP() << "no GStreamer element " << e
                     << (std::string(e) == "zerohopsrc" ? "" : " (gstreamer1.0-plugins-bad's nvcodec plugin, which "
                                                               "registers its elements only where libcuda.so.1 loads)");
      }
      gst_object_unref(f);
    }
    share_ = "gstcuda" + std::to_string(getpid());
  }
  std::string share_;
};

class ZerohopSrcCuda : public GstCuda {
 protected:
  void SetUp() override {
    GstCuda::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // The publisher in a process of its own (a reader in the publisher's process takes another path).
    peer_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{fromEnvOrBesideProgram("ZEROHOP_SHARE_GPU_PEER", ZEROHOP_SHARE_GPU_PEER),
                                 "publish", share_, "", "8"});
    ASSERT_TRUE(peer_->waitForStdoutLine("ready", 20s)) << "the device publisher did not start";
  }

  // Runs `description` (ending in appsink name=out, host memory out) and returns up to `count`
  // samples it delivered within the bounded wait; fails the test on a pipeline error.
  std::vector<GstSample*> run(const std::string& description, int count, guint64* copies, guint64* bytes) {
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launch(description.c_str(), &err);
    EXPECT_EQ(err, nullptr) << (err ? err->message : "");
    if (err) g_error_free(err);
    std::vector<GstSample*> samples;
    if (!pipeline) return samples;
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
    EXPECT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    for (int i = 0; i < count; ++i) {
      GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
      if (!s) break;
      samples.push_back(s);
    }
    GstBus* bus = gst_element_get_bus(pipeline);
    if (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
      GError* e = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(m, &e, &debug);
      ADD_FAILURE() << "pipeline error: " << e->message << " (" << (debug ? debug : "") << ")";
      g_error_free(e);
      g_free(debug);
      gst_message_unref(m);
    }
    gst_object_unref(bus);
    GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
    GstPad* pad = gst_element_get_static_pad(src, "src");
    if (GstCaps* caps = gst_pad_get_current_caps(pad)) {
      EXPECT_TRUE(gst_caps_features_contains(gst_caps_get_features(caps, 0), "memory:CUDAMemory"))
          << "zerohopsrc negotiated " << gst_caps_to_string(caps);
      gst_caps_unref(caps);
    } else {
      ADD_FAILURE() << "zerohopsrc negotiated no caps";
    }
    gst_object_unref(pad);
    g_object_get(src, "copies", copies, "bytes-copied", bytes, nullptr);
    gst_object_unref(src);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(sink);
    gst_object_unref(pipeline);
    return samples;
  }

  std::unique_ptr<ChildProcess> peer_;
};

// The first byte that differs from the publisher's pattern (`at(plane, row, x)` reads the host
// picture in the ring's own plane/byte coordinates), or "" when every byte matches.
template <typename At>
std::string firstMismatch(std::uint64_t seq, const At& at) {
  const ImageLayout l = testLayout();
  for (std::uint32_t p = 0; p < l.planeCount; ++p) {
    for (std::uint32_t r = 0; r < l.planes[p].rows; ++r) {
      for (std::uint32_t x = 0; x < l.planes[p].widthBytes; ++x) {
        const auto want = patternByte(seq, p, std::size_t{r} * l.planes[p].widthBytes + x);
        const auto got = at(p, r, x);
        if (got != want) {
          return "seq " + std::to_string(seq) + " plane " + std::to_string(p) + " row " + std::to_string(r) +
                 " byte " + std::to_string(x) + ": got " + std::to_string(got) + " want " + std::to_string(want);
        }
      }
    }
  }
  return "";
}

// Maps each sample (host memory), checks every one the source did not flag CORRUPTED (rewritten
// while it was copied: not checkable) with `mismatch` ("" = every byte right), and frees them all.
// Returns how many were checked.
int checkIntact(std::vector<GstSample*>& samples,
                const std::function<std::string(std::uint64_t sequence, const GstVideoFrame& vf)>& mismatch) {
  int intact = 0;
  for (GstSample* s : samples) {
    GstBuffer* buf = gst_sample_get_buffer(s);
    GstVideoInfo info;
    GstVideoFrame vf;
    if (!gst_video_info_from_caps(&info, gst_sample_get_caps(s)) || !gst_video_frame_map(&vf, &info, buf, GST_MAP_READ)) {
      ADD_FAILURE() << "a sample that does not map as video";
    } else {
      if (!GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_CORRUPTED)) {
        ++intact;
        EXPECT_EQ(mismatch(GST_BUFFER_OFFSET(buf), vf), "");
      }
      gst_video_frame_unmap(&vf);
    }
    gst_sample_unref(s);
  }
  samples.clear();
  return intact;
}

std::uint8_t byteAt(const GstVideoFrame& vf, guint plane, std::uint32_t row, std::uint32_t x) {
  return static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&vf, plane))
      [std::size_t{row} * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, plane) + x];
}

constexpr int kFrames = 30;

TEST_F(ZerohopSrcCuda, CudaMemoryThroughCudadownloadIsThePublishersFrameByteForByte) {
  guint64 copies = 0, bytes = 0;
  auto samples = run("zerohopsrc name=src share=" + share_ +
                         " ! cudadownload ! video/x-raw,format=NV12 ! appsink name=out sync=false max-buffers=64",
                     kFrames, &copies, &bytes);
  ASSERT_EQ(samples.size(), static_cast<std::size_t>(kFrames));
  const int intact = checkIntact(samples, [](std::uint64_t seq, const GstVideoFrame& vf) {
    if (GST_VIDEO_FRAME_WIDTH(&vf) != 96) return std::string("width ") + std::to_string(GST_VIDEO_FRAME_WIDTH(&vf));
    return firstMismatch(seq, [&](std::uint32_t p, std::uint32_t r, std::uint32_t x) { return byteAt(vf, p, r, x); });
  });
  EXPECT_GE(intact, kFrames * 2 / 3) << "most frames are copied before the publisher (1 ms apart) rewrites them";
  // One device-to-device copy per frame (GStreamer 1.22 cannot wrap the slot), and only the payload.
  const ImageLayout l = testLayout();
  const guint64 payload = std::uint64_t{l.planes[0].widthBytes} * l.planes[0].rows +
                          std::uint64_t{l.planes[1].widthBytes} * l.planes[1].rows;
  EXPECT_GE(copies, static_cast<guint64>(kFrames));
  EXPECT_EQ(bytes, copies * payload);
}

// cudaconvert (NV12 -> I420 in CUDA memory, no scaling: every sample moves unchanged) then
// cudadownload: the planes are the publisher's, de-interleaved.
TEST_F(ZerohopSrcCuda, CudaconvertToI420KeepsEverySample) {
  // cudaconvert compiles its kernels at run time with NVRTC, through GStreamer's CUDA library.
  if (!gst_cuda_nvrtc_load_library()) {
    GTEST_SKIP() << "NVRTC: GStreamer's CUDA library found no libnvrtc.so, which cudaconvert compiles its kernels "
                    "with (put the CUDA toolkit's lib64 on LD_LIBRARY_PATH, or set GST_CUDA_NVRTC_LIBNAME)";
  }
  gchar* ptx = gst_cuda_nvrtc_compile("extern \"C\" __global__ void zerohop_probe() {}");
  if (!ptx) {
    GTEST_SKIP() << "NVRTC: this libnvrtc does not compile for GStreamer 1.22 (it asks for compute_52; CUDA 13's "
                    "NVRTC targets compute_75 and newer), so cudaconvert cannot run here; set "
                    "GST_CUDA_NVRTC_LIBNAME to zerohop's libzerohop-nvrtc-compat.so (docs/gstreamer.md)";
  }
  g_free(ptx);
  // nvcodec registers cudaconvert only where NVRTC works (above); with NVRTC working its absence is a fault.
  GstElementFactory* f = gst_element_factory_find("cudaconvert");
  ASSERT_NE(f, nullptr) << "NVRTC compiles, yet nvcodec registered no cudaconvert element";
  gst_object_unref(f);
  guint64 copies = 0, bytes = 0;
  auto samples = run("zerohopsrc name=src share=" + share_ +
                         " ! cudaconvert ! video/x-raw(memory:CUDAMemory),format=I420 ! cudadownload ! "
                         "video/x-raw,format=I420 ! appsink name=out sync=false max-buffers=64",
                     kFrames, &copies, &bytes);
  ASSERT_EQ(samples.size(), static_cast<std::size_t>(kFrames));
  const int intact = checkIntact(samples, [](std::uint64_t seq, const GstVideoFrame& vf) {
    // NV12 plane 1 byte 2c is U(c) (I420 plane 1), byte 2c+1 is V(c) (I420 plane 2).
    return firstMismatch(seq, [&](std::uint32_t p, std::uint32_t r, std::uint32_t x) {
      return p == 0 ? byteAt(vf, 0, r, x) : byteAt(vf, 1 + (x & 1), r, x / 2);
    });
  });
  EXPECT_GE(intact, kFrames * 2 / 3);
}

// CUDA memory in: pattern frames (host, appsrc) -> cudaupload -> zerohopsink, published into a device
// share that another process (tests/share's peer) reads, checking every byte with a kernel.
using ZerohopSinkCuda = GstCuda;

TEST_F(ZerohopSinkCuda, CudaMemoryFromCudauploadIsADeviceShareReadByteForByteInAnotherProcess) {
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      ("appsrc name=in is-live=true format=time caps=video/x-raw,format=NV12,width=96,height=48,framerate=0/1 ! "
       "cudaupload ! video/x-raw(memory:CUDAMemory) ! zerohopsink name=sink share=" +
       share_)
          .c_str(),
      &err);
  ASSERT_EQ(err, nullptr) << err->message;
  GstElement* in = gst_bin_get_by_name(GST_BIN(pipeline), "in");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);

  // Frame i carries the pattern of sequence i: the sink numbers the frames it publishes from 0.
  const ImageLayout l = testLayout();
  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, 96, 48);
  std::atomic<bool> stop{false};
  std::thread pusher([&] {
    for (std::uint64_t seq = 0; !stop && seq < 20000; ++seq) {
      GstBuffer* buf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
      GstMapInfo map;
      gst_buffer_map(buf, &map, GST_MAP_WRITE);
      for (std::uint32_t p = 0; p < l.planeCount; ++p) {
        for (std::uint32_t r = 0; r < l.planes[p].rows; ++r) {
          for (std::uint32_t x = 0; x < l.planes[p].widthBytes; ++x) {
            map.data[GST_VIDEO_INFO_PLANE_OFFSET(&info, p) + std::size_t{r} * GST_VIDEO_INFO_PLANE_STRIDE(&info, p) +
                     x] = patternByte(seq, p, std::size_t{r} * l.planes[p].widthBytes + x);
          }
        }
      }
      gst_buffer_unmap(buf, &map);
      if (gst_app_src_push_buffer(GST_APP_SRC(in), buf) != GST_FLOW_OK) break;
      std::this_thread::sleep_for(2ms);
    }
  });
  guint64 published = 0;
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       published == 0 && std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms)) {
    g_object_get(sink, "published", &published, nullptr);
  }
  EXPECT_GT(published, 0u) << "zerohopsink published nothing within 10 s";
  if (published > 0) {
    ChildProcess reader({fromEnvOrBesideProgram("ZEROHOP_SHARE_GPU_PEER", ZEROHOP_SHARE_GPU_PEER), "read",
                         share_, "", std::to_string(kFrames)});
    const auto line = reader.waitForStdoutLine("verified=", 30s);
    ASSERT_TRUE(line) << "the reader in another process verified nothing";
    EXPECT_NE(line->find("ok verified=" + std::to_string(kFrames)), std::string::npos) << *line;
  }
  stop = true;
  pusher.join();
  guint64 downloads = 1, bytes = 0;
  g_object_get(sink, "published", &published, "downloads", &downloads, "bytes-copied", &bytes, nullptr);
  EXPECT_EQ(downloads, 0u) << "cudaupload took the sink's CUDA context: nothing went through host memory";
  const guint64 payload = std::uint64_t{l.planes[0].widthBytes} * l.planes[0].rows +
                          std::uint64_t{l.planes[1].widthBytes} * l.planes[1].rows;
  EXPECT_EQ(bytes, published * payload) << "one device-to-device copy of the payload per frame";
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(in);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}

}  // namespace
}  // namespace zerohop
