#pragma once
// Test helper: libavcodec's own H.264 decoder (the reference the encoder is checked against; or its
// native VP8 decoder, for the VP8 encoder) and a minimal SPS reader. Low-delay mode: one access unit
// in, one picture out.
// Thread-safety: thread-bound test helper.

#include <stdexcept>
#include <string>
#include <vector>

#include "encode/annexb.hpp"
#include "encode/av_error.hpp"
#include "encode/av_handles.hpp"
#include "zerohop/encoded_unit.hpp"

namespace zerohop::testing {

class H264TestDecoder {
 public:
  explicit H264TestDecoder(AVCodecID id = AV_CODEC_ID_H264) {
    const AVCodec* codec = avcodec_find_decoder(id);
    if (!codec) throw std::runtime_error(std::string("no ") + avcodec_get_name(id) + " decoder in libavcodec");
    ctx_.reset(avcodec_alloc_context3(codec));
    ctx_->flags |= AV_CODEC_FLAG_LOW_DELAY;
    ctx_->thread_count = 1;
    if (avcodec_open2(ctx_.get(), codec, nullptr) < 0)
      throw std::runtime_error(std::string("avcodec_open2(") + avcodec_get_name(id) + ")");
    packet_.reset(av_packet_alloc());
  }

  /// Decodes one access unit; returns the pictures it produced (exactly one expected).
  std::vector<encode::AvFramePtr> decode(const EncodedUnit& unit) {
    packet_->data = const_cast<std::uint8_t*>(unit.bytes.data());
    packet_->size = static_cast<int>(unit.bytes.size());
    const int sent = avcodec_send_packet(ctx_.get(), packet_.get());
    if (sent < 0) throw std::runtime_error("avcodec_send_packet: " + encode::avErrorText(sent));
    std::vector<encode::AvFramePtr> out;
    for (;;) {
      encode::AvFramePtr f(av_frame_alloc());
      const int got = avcodec_receive_frame(ctx_.get(), f.get());
      if (got == AVERROR(EAGAIN) || got == AVERROR_EOF) break;
      if (got < 0) throw std::runtime_error("avcodec_receive_frame: " + encode::avErrorText(got));
      out.push_back(std::move(f));
    }
    return out;
  }

 private:
  encode::CodecContextPtr ctx_;
  encode::AvPacketPtr packet_;
};

/// The first bytes of a sequence parameter set (H.264 7.3.2.1.1).
struct SpsHead {
  int profileIdc = -1;
  int constraintFlags = -1;  ///< constraint_set0..5 flags as the byte's top bits
  int levelIdc = -1;
};

/// Reads the first SPS in an access unit; profileIdc -1 if there is none.
inline SpsHead firstSps(const std::vector<std::uint8_t>& au) {
  for (std::size_t i = 0; i + 6 < au.size(); ++i) {
    if (au[i] == 0 && au[i + 1] == 0 && au[i + 2] == 1 && (au[i + 3] & 0x1F) == 7) {
      return {au[i + 4], au[i + 5], au[i + 6]};
    }
  }
  return {};
}

/// Wraps a decoded yuv420p AVFrame as a host I420 Frame (borrowing its planes).
inline Frame asFrame(const AVFrame& f) {
  Frame out;
  out.format = PixelFormat::kI420;
  out.width = static_cast<std::uint32_t>(f.width);
  out.height = static_cast<std::uint32_t>(f.height);
  out.planeCount = 3;
  for (int i = 0; i < 3; ++i) {
    out.data[i] = f.data[i];
    out.pitch[i] = static_cast<std::uint32_t>(f.linesize[i]);
  }
  return out;
}

}  // namespace zerohop::testing
