// The h264_nvenc settings for the lowest latency, checked where they end up: on an h264_nvenc
// AVCodecContext of this machine's libavcodec (allocated, never opened: no GPU, no NVENC session),
// read back through the context's fields and av_opt_get_int on its private options. So a renamed or
// missing option, or a VBV not sized from the frame rate, fails here on any machine.
#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
}

#include <cstdint>
#include <limits>
#include <string>

#include "encode/av_handles.hpp"
#include "encode/nvenc_settings.hpp"
#include "zerohop/error.hpp"

namespace zerohop::encode {
namespace {

EncoderConfig config720p60() {
  EncoderConfig c;
  c.encoder = "nvenc";
  c.width = 1280;
  c.height = 720;
  c.fps = 60;
  c.bitrateKbps = 3000;
  c.keyframeIntervalFrames = 120;
  c.preset = "superfast";
  c.inputFormat = PixelFormat::kNV12;
  c.inputMemory = MemoryKind::kDevice;
  return c;
}

// An h264_nvenc context with `s` applied, or null when this libavcodec has no h264_nvenc.
CodecContextPtr appliedContext(const NvencSettings& s) {
  const AVCodec* codec = avcodec_find_encoder_by_name("h264_nvenc");
  if (codec == nullptr) return nullptr;
  CodecContextPtr ctx(avcodec_alloc_context3(codec));
  if (!ctx) throw Error(Errc::kDevice, "avcodec_alloc_context3(h264_nvenc): out of memory");
  applyNvencSettings(ctx.get(), s);
  return ctx;
}

std::int64_t option(AVCodecContext* c, const char* name) {
  std::int64_t v = -12345;
  EXPECT_GE(av_opt_get_int(c->priv_data, name, 0, &v), 0) << name;
  return v;
}

// The value h264_nvenc's option `unit` gives the named constant (e.g. tune "ull", preset "p1").
std::int64_t constant(AVCodecContext* c, const char* unit, const char* name) {
  const AVOption* o = av_opt_find(c->priv_data, name, unit, 0, 0);
  EXPECT_NE(o, nullptr) << unit << " " << name;
  return o ? o->default_val.i64 : -1;
}

TEST(NvencSettings, LowestLatencyOptionsLandOnTheH264NvencContext) {
  const NvencSettings s = nvencSettings(config720p60(), 32);
  auto ctx = appliedContext(s);
  if (!ctx) GTEST_SKIP() << "this libavcodec has no h264_nvenc encoder (built without nv-codec-headers)";
  AVCodecContext* c = ctx.get();
  EXPECT_EQ(option(c, "preset"), constant(c, "preset", "p1")) << "superfast maps to p1";
  EXPECT_EQ(option(c, "tune"), constant(c, "tune", "ull")) << "ultra-low-latency tuning";
  EXPECT_EQ(option(c, "rc"), constant(c, "rc", "cbr"));
  EXPECT_EQ(option(c, "profile"), constant(c, "profile", "baseline"));
  EXPECT_EQ(option(c, "level"), constant(c, "level", "3.2"));
  EXPECT_EQ(option(c, "zerolatency"), 1) << "zero reorder delay";
  EXPECT_EQ(option(c, "delay"), 0) << "the packet must leave in the frame's own encode call";
  EXPECT_EQ(option(c, "rc-lookahead"), 0) << "no lookahead";
  EXPECT_EQ(option(c, "b_ref_mode"), constant(c, "b_ref_mode", "disabled"));
  EXPECT_EQ(option(c, "forced-idr"), 1);
  EXPECT_EQ(option(c, "intra-refresh"), 0) << "off unless asked for";
  EXPECT_EQ(c->max_b_frames, 0);
  EXPECT_EQ(c->gop_size, 120);
  EXPECT_EQ(c->bit_rate, 3'000'000);
  EXPECT_EQ(c->rc_max_rate, 3'000'000) << "CBR";
  EXPECT_EQ(c->rc_buffer_size, 50'000) << "VBV = one frame at 60 fps: 3 Mbit/s / 60";
}

TEST(NvencSettings, VbvIsOneFrameAtEveryRateAndFollowsTheBitrate) {
  for (double fps : {30.0, 50.0, 60.0, 120.0}) {
    EncoderConfig config = config720p60();
    config.fps = fps;
    const NvencSettings s = nvencSettings(config, 40);
    EXPECT_EQ(s.rcBufferSize, static_cast<int>(3'000'000 / fps + 0.5)) << fps << " fps";
    auto ctx = appliedContext(s);
    if (!ctx) GTEST_SKIP() << "this libavcodec has no h264_nvenc encoder";
    applyNvencBitrate(ctx.get(), 6000, fps);  // setBitrate while running
    EXPECT_EQ(ctx->bit_rate, 6'000'000);
    EXPECT_EQ(ctx->rc_max_rate, 6'000'000);
    EXPECT_EQ(ctx->rc_buffer_size, static_cast<int>(6'000'000 / fps + 0.5)) << fps << " fps";
  }
}

TEST(NvencSettings, IntraRefreshIsAnOptionOverTheKeyframeInterval) {
  EncoderConfig config = config720p60();
  config.intraRefresh = true;
  config.keyframeIntervalFrames = 60;
  const NvencSettings s = nvencSettings(config, 32);
  auto ctx = appliedContext(s);
  if (!ctx) GTEST_SKIP() << "this libavcodec has no h264_nvenc encoder";
  EXPECT_EQ(option(ctx.get(), "intra-refresh"), 1);
  EXPECT_EQ(ctx->gop_size, 60) << "h264_nvenc takes gop_size as the refresh period";

  config.keyframeIntervalFrames = 0;
  try {
    (void)nvencSettings(config, 32);
    FAIL() << "intra refresh without a period must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("set the keyframe interval"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << "a library message names no CLI flag: " << e.what();
  }
}

TEST(NvencSettings, KeyframesOnRequestOnlyIsAnEndlessGopNotAllIntra) {
  EncoderConfig config = config720p60();
  config.keyframeIntervalFrames = 0;
  EXPECT_EQ(nvencSettings(config, 32).gopSize, std::numeric_limits<int>::max());
  config.preset = "p4";
  EXPECT_STREQ(nvencSettings(config, 32).preset, "p4");
  config.preset = "nope";
  EXPECT_THROW((void)nvencSettings(config, 32), Error);
}

}  // namespace
}  // namespace zerohop::encode
