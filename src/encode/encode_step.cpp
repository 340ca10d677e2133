#include "encode_step.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/buffer.h>
}

#include <memory>
#include <string>

#include "annexb.hpp"
#include "av_error.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::encode {
namespace {

// The pixels stay the caller's: libavcodec takes a reference instead of a copy when the frame is
// refcounted, and the encoder copies the picture into its own frame before avcodec_send_frame returns
// (x264_encoder_encode, vpx_codec_encode). Nothing is freed when the last reference goes.
void noFree(void*, std::uint8_t*) {}

}  // namespace

void checkHostFrame(const Frame& frame, const EncoderConfig& config, const char* encoderName) {
  if (frame.memory == MemoryKind::kDevice) {
    throw Error(Errc::kInvalidArgument, std::string(encoderName) +
                                            " encodes host frames; this frame is in GPU memory (use nvenc or copy it)");
  }
  if (frame.format != config.inputFormat || frame.width != config.width || frame.height != config.height) {
    throw Error(Errc::kInvalidArgument,
                "encoder was opened for " + std::string(formatName(config.inputFormat)) + " " +
                    std::to_string(config.width) + "x" + std::to_string(config.height) + " but got " +
                    std::string(formatName(frame.format)) + " " + std::to_string(frame.width) + "x" +
                    std::to_string(frame.height) + "; convert or scale the frame, or open a new encoder");
  }
  const std::uint32_t planes = planeCount(frame.format);
  for (std::uint32_t i = 0; i < planes; ++i) {
    const std::uint32_t row = i == 0 || frame.format == PixelFormat::kNV12 ? frame.width : frame.width / 2;
    if (frame.data[i] == nullptr || frame.pitch[i] < row) {
      throw Error(Errc::kInvalidArgument, "frame plane " + std::to_string(i) + " has no memory or a pitch (" +
                                              std::to_string(frame.pitch[i]) + ") shorter than a row");
    }
  }
}

void wrapHostFrame(AVFrame* pic, const Frame& frame, const AVCodecContext* ctx, std::int64_t pts, bool forceKeyframe) {
  pic->format = ctx->pix_fmt;
  pic->width = ctx->width;
  pic->height = ctx->height;
  for (std::uint32_t i = 0; i < planeCount(frame.format); ++i) {
    pic->data[i] = frame.data[i];
    pic->linesize[i] = static_cast<int>(frame.pitch[i]);
  }
  pic->buf[0] = av_buffer_create(frame.data[0], 1, noFree, nullptr, AV_BUFFER_FLAG_READONLY);
  if (pic->buf[0] == nullptr) throw Error(Errc::kDevice, "av_buffer_create: out of memory");
  pic->pts = pts;
  pic->pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
  pic->color_range = ctx->color_range;
  pic->colorspace = ctx->colorspace;
}

EncodedUnitPtr encodeOneFrame(AVCodecContext* ctx, AVFrame* pic, AVPacket* packet, const Frame& frame,
                              const char* encoderName, Codec codec, std::uint32_t width, std::uint32_t height,
                              EncoderStats& stats) {
  const int sent = avcodec_send_frame(ctx, pic);
  av_frame_unref(pic);
  if (sent < 0) throwAv(Errc::kDevice, std::string("avcodec_send_frame(") + encoderName + ")", sent);
  ++stats.framesIn;

  std::shared_ptr<EncodedUnit> unit;
  for (;;) {
    const int got = avcodec_receive_packet(ctx, packet);
    if (got == AVERROR(EAGAIN) || got == AVERROR_EOF) break;
    if (got < 0) throwAv(Errc::kDevice, std::string("avcodec_receive_packet(") + encoderName + ")", got);
    if (unit) {  // a no-delay encoder never holds a frame back: two units for one frame means wrong settings
      av_packet_unref(packet);
      throw Error(Errc::kInternal, std::string(encoderName) +
                                       " returned two access units for one frame: it is buffering frames "
                                       "despite its zero-delay settings");
    }
    unit = std::make_shared<EncodedUnit>();
    unit->bytes.assign(packet->data, packet->data + packet->size);
    unit->keyframe = (packet->flags & AV_PKT_FLAG_KEY) != 0;
    av_packet_unref(packet);
  }
  if (!unit) {
    ++stats.emptyOutputs;
    log::warn("encoder: ", encoderName, " produced no access unit for frame ", frame.sequence, " (",
              stats.emptyOutputs, " so far)");
    return nullptr;
  }
  if (codec == Codec::kH264) unit->keyframe = containsIdr(unit->bytes.data(), unit->bytes.size());
  finishUnit(*unit, frame, codec, width, height, stats);
  return unit;
}

void finishUnit(EncodedUnit& unit, const Frame& frame, Codec codec, std::uint32_t width, std::uint32_t height,
                EncoderStats& stats) {
  unit.codec = codec;
  unit.width = width;
  unit.height = height;
  unit.sequence = frame.sequence;
  unit.wallClockMs = frame.wallClockMs;
  unit.ptsNs = frame.captureNs();
  unit.times = frame.times;
  unit.times.mark(Stage::kEncode, monotonicNs());
  ++stats.unitsOut;
  stats.bytesOut += unit.bytes.size();
  if (unit.keyframe) ++stats.keyframes;
}

}  // namespace zerohop::encode
