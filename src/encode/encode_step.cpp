#include "encode_step.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
}

#include <memory>
#include <string>

#include "annexb.hpp"
#include "av_error.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::encode {

EncodedUnitPtr encodeOneFrame(AVCodecContext* ctx, AVFrame* pic, AVPacket* packet, const Frame& frame,
                              const char* encoderName, std::uint32_t width, std::uint32_t height,
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
    av_packet_unref(packet);
  }
  if (!unit) {
    ++stats.emptyOutputs;
    log::warn("encoder: ", encoderName, " produced no access unit for frame ", frame.sequence, " (",
              stats.emptyOutputs, " so far)");
    return nullptr;
  }
  unit->codec = PixelFormat::kH264;
  unit->width = width;
  unit->height = height;
  unit->keyframe = containsIdr(unit->bytes.data(), unit->bytes.size());
  unit->sequence = frame.sequence;
  unit->wallClockMs = frame.wallClockMs;
  unit->ptsNs = frame.captureNs();
  unit->times = frame.times;
  unit->times.mark(Stage::kEncode, monotonicNs());
  ++stats.unitsOut;
  stats.bytesOut += unit->bytes.size();
  if (unit->keyframe) ++stats.keyframes;
  return unit;
}

}  // namespace zerohop::encode
