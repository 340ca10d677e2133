#include "file_av_sync.hpp"

#include <cmath>
#include <cstdlib>
#include <memory>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include "core/av_marker_picture.hpp"
#include "zerohop/frame.hpp"

namespace zerohop::testing {
namespace {

constexpr float kClickLevel = 0.5f;          // of full scale
constexpr double kRefractorySeconds = 0.3;   // one click (2 ms) is one event; clicks are 1 s apart
constexpr double kPairWindowSeconds = 0.4;

struct InputCloser {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct CodecCloser {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
using Decoder = std::unique_ptr<AVCodecContext, CodecCloser>;

Decoder openDecoder(const AVStream* st) {
  const AVCodec* codec = avcodec_find_decoder(st->codecpar->codec_id);
  if (!codec) return nullptr;
  Decoder d(avcodec_alloc_context3(codec));
  if (!d || avcodec_parameters_to_context(d.get(), st->codecpar) < 0 || avcodec_open2(d.get(), codec, nullptr) < 0)
    return nullptr;
  d->pkt_timebase = st->time_base;
  return d;
}

}  // namespace

FileAvSync measureFileAvSync(const std::string& path) {
  FileAvSync r;
  AVFormatContext* raw = nullptr;
  if (avformat_open_input(&raw, path.c_str(), nullptr, nullptr) < 0) {
    r.error = "cannot open " + path;
    return r;
  }
  std::unique_ptr<AVFormatContext, InputCloser> in(raw);
  if (avformat_find_stream_info(in.get(), nullptr) < 0) {
    r.error = "no stream info in " + path;
    return r;
  }
  const int vi = av_find_best_stream(in.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  const int ai = av_find_best_stream(in.get(), AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0);
  if (vi < 0 || ai < 0) {
    r.error = path + (vi < 0 ? " has no picture track" : " has no sound track");
    return r;
  }
  const AVStream* vs = in->streams[vi];
  const AVStream* as = in->streams[ai];
  Decoder video = openDecoder(vs), audio = openDecoder(as);
  if (!video || !audio) {
    r.error = "no decoder for a track of " + path;
    return r;
  }
  std::vector<double> markers, clicks;
  bool shown = false;
  double lastClick = -1e9;
  std::unique_ptr<AVFrame, FrameFree> frame(av_frame_alloc());
  std::unique_ptr<AVPacket, PacketFree> pkt(av_packet_alloc());

  auto drain = [&](AVCodecContext* dec, const AVStream* st) {
    while (avcodec_receive_frame(dec, frame.get()) == 0) {
      const double t = static_cast<double>(frame->best_effort_timestamp) * av_q2d(st->time_base);
      if (st == vs && frame->format == AV_PIX_FMT_YUV420P) {
        Frame f;
        f.format = PixelFormat::kI420;
        f.width = static_cast<std::uint32_t>(frame->width);
        f.height = static_cast<std::uint32_t>(frame->height);
        f.planeCount = 3;
        for (int p = 0; p < 3; ++p) {
          f.data[p] = frame->data[p];
          f.pitch[p] = static_cast<std::uint32_t>(frame->linesize[p]);
        }
        const auto on = readAvMarker(f);
        if (on && *on && !shown) markers.push_back(t);
        shown = on && *on;
        r.videoSeconds = t + 1.0 / 30;
      } else if (st == as && frame->format == AV_SAMPLE_FMT_FLTP) {
        const auto* s = reinterpret_cast<const float*>(frame->data[0]);
        for (int i = 0; i < frame->nb_samples; ++i) {
          const double at = t + static_cast<double>(i) / frame->sample_rate;
          if (std::fabs(s[i]) < kClickLevel || at - lastClick < kRefractorySeconds) continue;
          lastClick = at;
          clicks.push_back(at);
        }
        r.audioSeconds += static_cast<double>(frame->nb_samples) / frame->sample_rate;
      }
      av_frame_unref(frame.get());
    }
  };
  while (av_read_frame(in.get(), pkt.get()) >= 0) {
    AVCodecContext* dec = pkt->stream_index == vi ? video.get() : pkt->stream_index == ai ? audio.get() : nullptr;
    if (dec && avcodec_send_packet(dec, pkt.get()) == 0) drain(dec, in->streams[pkt->stream_index]);
    av_packet_unref(pkt.get());
  }
  avcodec_send_packet(video.get(), nullptr);
  drain(video.get(), vs);
  avcodec_send_packet(audio.get(), nullptr);
  drain(audio.get(), as);

  r.markers = markers.size();
  r.clicks = clicks.size();
  for (double m : markers) {
    double best = kPairWindowSeconds;
    for (double c : clicks)
      if (std::fabs(c - m) < std::fabs(best)) best = c - m;
    if (std::fabs(best) < kPairWindowSeconds) r.offsetsMs.push_back(best * 1000);
  }
  return r;
}

}  // namespace zerohop::testing
