#pragma once
// The pieces both test WHEP viewers share (zerohop-whep-receive, zerohop-av-sync-receive): a libavcodec
// video decoder, webrtcbin offer/answer without trickle, the first bus error, URL splitting, JSON
// escaping and percentiles. GStreamer and libavcodec only, none of zerohop's stream code, so the viewers
// stay independent of what they test.
// Thread-safety: VideoDecoder is thread-bound; the functions are reentrant.

#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>

#include "webrtcbin_sdp.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
}

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace zerohop::whep_viewer {

using namespace std::chrono_literals;
using webrtcbin_sdp::applyAnswer;
using webrtcbin_sdp::localOffer;

inline std::string jsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    out += c;
  }
  return out;
}

struct GstDeleter {
  void operator()(gpointer p) const noexcept { gst_object_unref(p); }
};
using ElementPtr = std::unique_ptr<GstElement, GstDeleter>;

// libavcodec's H.264 (or VP8) decoder in low-delay mode: one access unit in, one picture out.
class VideoDecoder {
 public:
  explicit VideoDecoder(AVCodecID id) {
    const AVCodec* codec = avcodec_find_decoder(id);
    if (!codec)
      throw std::runtime_error(std::string("avcodec_find_decoder(") + avcodec_get_name(id) +
                               "): not in this libavcodec");
    ctx_ = avcodec_alloc_context3(codec);
    if (!ctx_) throw std::runtime_error("avcodec_alloc_context3 failed");
    ctx_->flags |= AV_CODEC_FLAG_LOW_DELAY;
    ctx_->thread_count = 1;
    if (const int rc = avcodec_open2(ctx_, codec, nullptr); rc < 0)
      throw std::runtime_error(std::string("avcodec_open2(") + avcodec_get_name(id) + "): " + errorText(rc));
    packet_ = av_packet_alloc();
    picture_ = av_frame_alloc();
    if (!packet_ || !picture_) throw std::runtime_error("av_packet_alloc/av_frame_alloc failed");
  }
  ~VideoDecoder() {
    av_frame_free(&picture_);
    av_packet_free(&packet_);
    avcodec_free_context(&ctx_);
  }
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  /// Decodes one access unit; calls `onPicture(const AVFrame&)` for each picture it yields. Returns the
  /// libavcodec error text of a packet it rejected, or "".
  /// `pts` travels to the picture (AVFrame::pts) unchanged.
  template <typename F>
  std::string decode(const std::uint8_t* data, std::size_t size, F&& onPicture,
                     std::int64_t pts = AV_NOPTS_VALUE) {
    packet_->data = const_cast<std::uint8_t*>(data);
    packet_->size = static_cast<int>(size);
    packet_->pts = pts;
    if (const int rc = avcodec_send_packet(ctx_, packet_); rc < 0)
      return "avcodec_send_packet: " + errorText(rc);
    for (;;) {
      const int rc = avcodec_receive_frame(ctx_, picture_);
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return {};
      if (rc < 0) return "avcodec_receive_frame: " + errorText(rc);
      onPicture(*picture_);
      av_frame_unref(picture_);
    }
  }

 private:
  static std::string errorText(int rc) {
    char buf[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(rc, buf, sizeof buf);
    return buf;
  }
  AVCodecContext* ctx_ = nullptr;
  AVPacket* packet_ = nullptr;
  AVFrame* picture_ = nullptr;
};

struct HttpUrl {
  std::string host;
  int port = 80;
  std::string path = "/";
};

inline HttpUrl splitUrl(const std::string& url) {
  HttpUrl u;
  const std::string rest = url.substr(std::strlen("http://"));
  const auto slash = rest.find('/');
  const std::string hostPort = rest.substr(0, slash);
  if (slash != std::string::npos) u.path = rest.substr(slash);
  const auto colon = hostPort.rfind(':');
  u.host = hostPort.substr(0, colon);
  if (colon != std::string::npos) u.port = std::atoi(hostPort.substr(colon + 1).c_str());
  return u;
}

inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// The first bus error, as "ELEMENT: message", or "".
inline std::string busError(GstElement* pipeline) {
  GstBus* bus = gst_element_get_bus(pipeline);
  std::string what;
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    if (what.empty()) {
      GError* err = nullptr;
      gst_message_parse_error(m, &err, nullptr);
      what = std::string(GST_OBJECT_NAME(GST_MESSAGE_SRC(m))) + ": " + (err ? err->message : "?");
      g_clear_error(&err);
    }
    gst_message_unref(m);
  }
  gst_object_unref(bus);
  return what;
}

}  // namespace zerohop::whep_viewer
