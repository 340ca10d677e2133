// RTP packets lost between an RTSP camera and zerohop break every P-frame after them up to the camera's
// next IDR, which cannot be asked for. The passthrough sends none of those: each P-frame a viewer gets
// refers to the unit sent just before it (its frame_num is one more), and /stats counts the units held
// back. The test camera (rtsp_camera.py --drop-every) loses every 37th RTP packet of its picture.
#define GST_USE_UNSTABLE_API  // the H.264 parser's API, stable in practice since 1.4
#include <gst/codecparsers/gsth264parser.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rtsp_test_camera.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/pipeline.hpp"
#include "zerohop/sinks.hpp"

namespace zerohop::rtsp {
namespace {

using namespace std::chrono_literals;

// Every unit the pipeline sends, kept. Thread-safety: deliver() from the encode thread, units() from any.
class UnitRecorder final : public UnitSink {
 public:
  void deliver(const EncodedUnitPtr& unit) override {
    std::lock_guard lock(mutex_);
    units_.push_back(unit);
  }
  std::string describe() const override { return "a test recorder of units"; }
  std::vector<EncodedUnitPtr> units() const {
    std::lock_guard lock(mutex_);
    return units_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<EncodedUnitPtr> units_;
};

// frame_num of each access unit's first slice, from the SPS/PPS seen so far (GStreamer's H.264 parser).
class FrameNumbers {
 public:
  FrameNumbers() : parser_(gst_h264_nal_parser_new()) {}
  ~FrameNumbers() { gst_h264_nal_parser_free(parser_); }
  FrameNumbers(const FrameNumbers&) = delete;
  FrameNumbers& operator=(const FrameNumbers&) = delete;

  struct Slice {
    bool idr = false;
    unsigned frameNum = 0;
    unsigned maxFrameNum = 0;
  };
  std::optional<Slice> firstSlice(const EncodedUnit& unit) {
    GstH264NalUnit nalu;
    guint offset = 0;
    const auto* data = unit.bytes.data();
    const auto size = static_cast<gsize>(unit.bytes.size());
    for (;;) {
      const GstH264ParserResult r = gst_h264_parser_identify_nalu(parser_, data, offset, size, &nalu);
      if (r != GST_H264_PARSER_OK && r != GST_H264_PARSER_NO_NAL_END) return std::nullopt;
      if (nalu.type == GST_H264_NAL_SPS) {
        GstH264SPS sps;
        if (gst_h264_parser_parse_sps(parser_, &nalu, &sps) == GST_H264_PARSER_OK) {
          maxFrameNum_ = 1u << (sps.log2_max_frame_num_minus4 + 4);
          gst_h264_sps_clear(&sps);
        }
      } else if (nalu.type == GST_H264_NAL_PPS) {
        GstH264PPS pps;
        if (gst_h264_parser_parse_pps(parser_, &nalu, &pps) == GST_H264_PARSER_OK) gst_h264_pps_clear(&pps);
      } else if (nalu.type == GST_H264_NAL_SLICE || nalu.type == GST_H264_NAL_SLICE_IDR) {
        GstH264SliceHdr slice;
        if (gst_h264_parser_parse_slice_hdr(parser_, &nalu, &slice, FALSE, FALSE) != GST_H264_PARSER_OK)
          return std::nullopt;
        return Slice{nalu.type == GST_H264_NAL_SLICE_IDR, slice.frame_num, maxFrameNum_};
      }
      if (r == GST_H264_PARSER_NO_NAL_END) return std::nullopt;
      offset = nalu.offset + nalu.size;
    }
  }

 private:
  GstH264NalParser* parser_;
  unsigned maxFrameNum_ = 16;
};

TEST(RtspPipeline, LostPacketsHoldThePassthroughBackUntilTheCamerasNextIdr) {
  gst_init(nullptr, nullptr);
  TestCamera camera({"--keyint", "15", "--drop-every", "37"});  // an IDR every 0.5 s; a loss every few frames
  PipelineConfig config;
  config.source = parseSourceSpec(camera.url());
  config.stream.port = 0;
  StreamServer server(config.stream);  // the viewers' server: the pipeline binds no port
  config.viewers = server.unnamedStream();
  Pipeline pipeline(config);
  auto recorder = std::make_shared<UnitRecorder>();
  pipeline.addUnitSink(recorder);
  pipeline.start();
  PipelineStatus status;
  const std::int64_t end = monotonicNs() + 10'000'000'000;
  while (monotonicNs() < end) {
    status = pipeline.status();
    if (status.latency.frames >= 60 && status.heldBackUntilIdr > 0) break;
    std::this_thread::sleep_for(50ms);  // polls the condition above, bounded by `end`
  }
  const std::string statsText = pipeline.statsJson();
  pipeline.stop();
  EXPECT_FALSE(pipeline.failure()) << pipeline.failure()->what();
  EXPECT_GT(status.source.drops, 0u) << "the camera lost no packet: " << statsText;
  EXPECT_GT(status.heldBackUntilIdr, 0u) << statsText;
  EXPECT_NE(statsText.find("\"held_back_until_idr\""), std::string::npos) << statsText;

  FrameNumbers numbers;
  std::optional<unsigned> previous;
  int idrs = 0, pFrames = 0, unparsed = 0;
  for (const EncodedUnitPtr& unit : recorder->units()) {
    const auto slice = numbers.firstSlice(*unit);
    if (!slice) {
      ++unparsed;  // a unit whose only slice was lost whole is not sent (it is no IDR)
      continue;
    }
    if (slice->idr) {
      ++idrs;
    } else {
      ++pFrames;
      ASSERT_TRUE(previous.has_value()) << "a P-frame before any IDR";
      EXPECT_EQ(slice->frameNum, (*previous + 1) % slice->maxFrameNum)
          << "unit " << unit->sequence << " refers to a unit that was not sent";
    }
    previous = slice->frameNum;
  }
  EXPECT_GE(idrs, 3) << statsText;
  EXPECT_GE(pFrames, 20) << statsText;
  EXPECT_EQ(unparsed, 0);
  std::fprintf(stderr, "%d IDRs and %d P-frames sent; %llu units held back after %llu losses\n", idrs,
               pFrames, static_cast<unsigned long long>(status.heldBackUntilIdr),
               static_cast<unsigned long long>(status.source.drops));
}

}  // namespace
}  // namespace zerohop::rtsp
