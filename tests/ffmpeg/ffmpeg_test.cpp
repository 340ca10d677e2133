// zerohop <-> FFmpeg on the host: a shared frame wrapped as an AVFrame (no copy) encodes through
// libavcodec's libx264; an AVFrame published into a share reads back byte for byte; the lease
// lives exactly as long as the last AVBufferRef.
#include <gtest/gtest.h>
#include <unistd.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
}

#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "zerohop/error.hpp"
#include "zerohop/ffmpeg.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kW = 640, kH = 360;

std::string uniqueName(const char* what) {
  return std::string("ffm-") + what + "-" + std::to_string(getpid());
}

// One host frame of `layout` with a pattern that changes with `i`.
std::vector<std::uint8_t> patternFrame(const ImageLayout& layout, int i, Frame& f) {
  std::vector<std::uint8_t> buf(layout.totalBytes);
  for (std::size_t b = 0; b < buf.size(); ++b) buf[b] = static_cast<std::uint8_t>(b * 7 + i * 13);
  bindLayout(f, layout, buf.data(), MemoryKind::kHost);
  f.format = layout.format;
  f.width = layout.width;
  f.height = layout.height;
  f.sequence = static_cast<std::uint64_t>(i);
  return buf;
}

struct CodecContextDeleter {
  void operator()(AVCodecContext* c) const noexcept { avcodec_free_context(&c); }
};

TEST(FfmpegFormats, RoundTrip) {
  for (auto f : {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12, PixelFormat::kI420,
                 PixelFormat::kRGB24, PixelFormat::kBGRx, PixelFormat::kRGBA}) {
    EXPECT_EQ(fromAVPixelFormat(toAVPixelFormat(f)), f) << formatName(f);
  }
  EXPECT_EQ(toAVPixelFormat(PixelFormat::kH264), AV_PIX_FMT_NONE);
  EXPECT_EQ(fromAVPixelFormat(AV_PIX_FMT_P010LE), PixelFormat::kUnknown);
}

TEST(FfmpegWrap, HostFrameFromAShareEncodesWithLibx264) {
  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (!codec) GTEST_SKIP() << "this libavcodec has no libx264";
  const auto layout = computeLayout(PixelFormat::kI420, kW, kH, 64);
  Publisher pub(uniqueName("x264"), SlotLayout::images(layout, 4));
  Subscriber sub(pub.name());

  std::unique_ptr<AVCodecContext, CodecContextDeleter> enc(avcodec_alloc_context3(codec));
  enc->width = kW;
  enc->height = kH;
  enc->pix_fmt = AV_PIX_FMT_YUV420P;
  enc->time_base = AVRational{1, 30};
  enc->gop_size = 10;
  enc->max_b_frames = 0;
  AVDictionary* opts = nullptr;
  av_dict_set(&opts, "preset", "ultrafast", 0);
  av_dict_set(&opts, "tune", "zerolatency", 0);
  ASSERT_EQ(avcodec_open2(enc.get(), codec, &opts), 0);
  av_dict_free(&opts);

  AVPacket* pkt = av_packet_alloc();
  int packets = 0, keyPackets = 0;
  bool firstKey = false;
  for (int i = 0; i < 20; ++i) {
    Frame f;
    auto bytes = patternFrame(layout, i, f);
    pub.publish(f);
    auto shared = sub.next(1000ms);
    ASSERT_TRUE(shared);
    const std::uint8_t* y = shared->frame().data[0];
    const std::uint8_t* v = shared->frame().data[2];
    AVFramePtr av = wrapAsAVFrame(std::move(*shared));
    ASSERT_TRUE(av);
    // Zero copy: the AVFrame's planes are the ring's.
    EXPECT_EQ(av->data[0], y);
    EXPECT_EQ(av->data[2], v);
    EXPECT_EQ(av->format, AV_PIX_FMT_YUV420P);
    EXPECT_EQ(av->linesize[0], static_cast<int>(layout.planes[0].pitch));
    EXPECT_EQ(std::memcmp(av->data[1], bytes.data() + layout.planes[1].offset, layout.planes[1].widthBytes),
              0);
    EXPECT_TRUE(wrappedFrameIntact(*av));
    av->pts = i;  // the encoder's time base
    ASSERT_EQ(avcodec_send_frame(enc.get(), av.get()), 0);
    while (avcodec_receive_packet(enc.get(), pkt) == 0) {
      if (packets == 0) firstKey = (pkt->flags & AV_PKT_FLAG_KEY) != 0;
      ++packets;
      keyPackets += (pkt->flags & AV_PKT_FLAG_KEY) != 0;
      EXPECT_GT(pkt->size, 0);
      av_packet_unref(pkt);
    }
  }
  ASSERT_EQ(avcodec_send_frame(enc.get(), nullptr), 0);
  while (avcodec_receive_packet(enc.get(), pkt) == 0) {
    ++packets;
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
  EXPECT_EQ(packets, 20);
  EXPECT_TRUE(firstKey);
  EXPECT_GE(keyPackets, 2);  // gop 10
  enc.reset();               // libx264 held no frame past its packets: every lease is back
  EXPECT_EQ(pub.stats().leasedSlots, 0u);
}

TEST(FfmpegWrap, LeaseIsReleasedWhenTheLastRefGoes) {
  const auto layout = computeLayout(PixelFormat::kNV12, kW, kH, 64);
  Publisher pub(uniqueName("lease"), SlotLayout::images(layout, 4));
  Subscriber sub(pub.name());
  Frame f;
  auto bytes = patternFrame(layout, 1, f);
  pub.publish(f);
  auto shared = sub.next(1000ms);
  ASSERT_TRUE(shared);
  AVFramePtr av = wrapAsAVFrame(std::move(*shared));
  EXPECT_FALSE(*shared);  // the lease moved into the AVFrame
  EXPECT_EQ(pub.stats().leasedSlots, 1u);
  AVFramePtr clone(av_frame_clone(av.get()));
  ASSERT_TRUE(clone);
  EXPECT_EQ(clone->data[1], av->data[1]);  // a new reference, not a copy
  av.reset();
  EXPECT_EQ(pub.stats().leasedSlots, 1u) << "released while a clone still referenced it";
  EXPECT_TRUE(wrappedFrameIntact(*clone));
  // Read-only: making it writable copies out of the ring instead of writing into it.
  ASSERT_EQ(av_frame_make_writable(clone.get()), 0);
  EXPECT_EQ(pub.stats().leasedSlots, 0u);
  EXPECT_EQ(std::memcmp(clone->data[0], bytes.data(), layout.planes[0].widthBytes), 0);
  EXPECT_FALSE(wrappedFrameIntact(*clone));  // no longer a zerohop frame
}

TEST(FfmpegWrap, OverwrittenFrameIsReportedNotIntact) {
  const auto layout = computeLayout(PixelFormat::kRGBA, 64, 32);
  ShareOptions options;
  options.leaseTimeout = 1ms;  // leases stop protecting slots at once
  Publisher pub(uniqueName("overrun"), SlotLayout::images(layout, 2), options);
  Subscriber sub(pub.name());
  Frame f;
  auto bytes = patternFrame(layout, 0, f);
  pub.publish(f);
  auto shared = sub.next(1000ms);
  ASSERT_TRUE(shared);
  AVFramePtr av = wrapAsAVFrame(std::move(*shared));
  EXPECT_EQ(av->format, AV_PIX_FMT_RGBA);
  EXPECT_TRUE(wrappedFrameIntact(*av));
  std::this_thread::sleep_for(20ms);  // the lease times out (the condition under test is time itself)
  for (int i = 1; i < 4; ++i) pub.publish(f);
  EXPECT_FALSE(wrappedFrameIntact(*av));
}

TEST(FfmpegWrap, EncodedUnitsAreRefused) {
  Publisher pub(uniqueName("enc"), SlotLayout::encoded(PixelFormat::kH264, 4096, 4));
  Subscriber sub(pub.name());
  EncodedUnit u;
  u.bytes = {0, 0, 0, 1, 0x65, 1, 2, 3};
  u.keyframe = true;
  pub.publish(u);
  auto shared = sub.next(1000ms);
  ASSERT_TRUE(shared);
  try {
    wrapAsAVFrame(std::move(*shared));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported) << e.what();
  }
  EXPECT_THROW(wrapAsAVFrame(SharedFrame{}), Error);
}

TEST(FfmpegPublish, AVFrameReadsBackByteExact) {
  for (const AVPixelFormat fmt : {AV_PIX_FMT_NV12, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUYV422, AV_PIX_FMT_RGBA}) {
    SCOPED_TRACE(av_get_pix_fmt_name(fmt));
    const PixelFormat zf = fromAVPixelFormat(fmt);
    const auto layout = computeLayout(zf, kW, kH, 256);  // the ring's pitch differs from FFmpeg's
    Publisher pub(uniqueName("pub"), SlotLayout::images(layout, 3));
    Subscriber sub(pub.name());
    AVFramePtr av(av_frame_alloc());
    av->format = fmt;
    av->width = kW;
    av->height = kH;
    av->color_range = AVCOL_RANGE_JPEG;
    ASSERT_EQ(av_frame_get_buffer(av.get(), 0), 0);
    std::mt19937 rng(42);
    for (std::uint32_t p = 0; p < layout.planeCount; ++p) {
      for (std::uint32_t r = 0; r < layout.planes[p].rows; ++r) {
        for (std::uint32_t b = 0; b < layout.planes[p].widthBytes; ++b) {
          av->data[p][std::size_t{r} * av->linesize[p] + b] = static_cast<std::uint8_t>(rng());
        }
      }
    }
    publishAVFrame(pub, *av, 123456789);
    auto shared = sub.next(1000ms);
    ASSERT_TRUE(shared);
    const Frame& got = shared->frame();
    EXPECT_EQ(got.format, zf);
    EXPECT_EQ(got.captureNs(), 123456789);
    EXPECT_EQ(got.color.range, ColorRange::kFull);
    for (std::uint32_t p = 0; p < layout.planeCount; ++p) {
      for (std::uint32_t r = 0; r < layout.planes[p].rows; ++r) {
        ASSERT_EQ(std::memcmp(got.data[p] + std::size_t{r} * got.pitch[p],
                              av->data[p] + std::size_t{r} * av->linesize[p], layout.planes[p].widthBytes),
                  0)
            << "plane " << p << " row " << r;
      }
    }
    EXPECT_TRUE(shared->valid());
  }
}

TEST(FfmpegPublish, MismatchesAreRefused) {
  const auto layout = computeLayout(PixelFormat::kNV12, kW, kH);
  Publisher pub(uniqueName("bad"), SlotLayout::images(layout, 2));
  AVFramePtr av(av_frame_alloc());
  av->format = AV_PIX_FMT_NV12;
  av->width = 320;
  av->height = 180;
  ASSERT_EQ(av_frame_get_buffer(av.get(), 0), 0);
  EXPECT_THROW(publishAVFrame(pub, *av), Error);  // wrong size
  AVFramePtr p010(av_frame_alloc());
  p010->format = AV_PIX_FMT_P010LE;
  p010->width = kW;
  p010->height = kH;
  ASSERT_EQ(av_frame_get_buffer(p010.get(), 0), 0);
  try {
    publishAVFrame(pub, *p010);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("p010"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pub.stats().publishes, 0u);
}

}  // namespace
}  // namespace zerohop
