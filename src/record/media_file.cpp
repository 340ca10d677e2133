#include "media_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/mem.h>
}

#include "encode/av_error.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::record {
namespace {

constexpr AVRational kMicroseconds{1, 1000000};

std::string lowerExtension(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

// ISO 8601 UTC with microseconds, as FFmpeg's creation_time metadata expects.
std::string isoTime(std::int64_t wallClockMs) {
  const std::time_t secs = static_cast<std::time_t>(wallClockMs / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%06dZ", static_cast<int>(wallClockMs % 1000) * 1000);
  return buf;
}

// The Opus identification header (RFC 7845, 5.1) both muxers store as the codec configuration (MP4's
// dOps, Matroska's CodecPrivate). Pre-skip 0: the packets' times already say when their first decoded
// sample was captured (the encoder's lookahead is taken out where they are stamped).
std::vector<std::uint8_t> opusHead(std::uint32_t channels) {
  std::vector<std::uint8_t> h = {'O', 'p', 'u', 's', 'H', 'e', 'a', 'd'};
  h.push_back(1);                                   // version
  h.push_back(static_cast<std::uint8_t>(channels));  // output channels
  h.insert(h.end(), {0, 0});                        // pre-skip (LE16)
  h.insert(h.end(), {0x80, 0xbb, 0x00, 0x00});      // input rate 48000 (LE32)
  h.insert(h.end(), {0, 0});                        // output gain
  h.push_back(0);                                   // channel mapping family 0: mono or stereo
  return h;
}

void setExtradata(AVCodecParameters* par, const std::vector<std::uint8_t>& bytes, const char* what) {
  par->extradata = static_cast<std::uint8_t*>(av_mallocz(bytes.size() + AV_INPUT_BUFFER_PADDING_SIZE));
  if (!par->extradata) throw Error(Errc::kDevice, std::string("av_mallocz failed for ") + what);
  std::memcpy(par->extradata, bytes.data(), bytes.size());
  par->extradata_size = static_cast<int>(bytes.size());
}

struct DictOwner {
  AVDictionary* dict = nullptr;
  ~DictOwner() { av_dict_free(&dict); }
};

}  // namespace

Container containerForPath(const std::string& path) {
  const std::string ext = lowerExtension(path);
  if (ext == "mp4" || ext == "m4v" || ext == "mov") return Container::kMp4;
  if (ext == "mkv") return Container::kMatroska;
  throw Error(Errc::kInvalidArgument, "cannot tell the container of '" + path +
                                          "': name the file .mp4 (fragmented MP4) or .mkv (Matroska)");
}

MediaFile::MediaFile(const MediaFileParams& p) : path_(p.path) {
  const char* muxer = p.container == Container::kMp4 ? "mp4" : "matroska";
  int err = avformat_alloc_output_context2(&ctx_, nullptr, muxer, p.path.c_str());
  if (err < 0 || !ctx_) encode::throwAv(Errc::kDevice, "avformat_alloc_output_context2", err);
  try {
    stream_ = avformat_new_stream(ctx_, nullptr);
    if (!stream_) throw Error(Errc::kDevice, "avformat_new_stream failed");
    AVCodecParameters* par = stream_->codecpar;
    par->codec_type = AVMEDIA_TYPE_VIDEO;
    par->codec_id = AV_CODEC_ID_H264;
    par->width = static_cast<int>(p.width);
    par->height = static_cast<int>(p.height);
    par->format = AV_PIX_FMT_YUV420P;
    // The muxers turn Annex B SPS/PPS into avcC (MP4) or CodecPrivate (Matroska) themselves.
    if (!p.parameterSets.empty()) setExtradata(par, p.parameterSets, "the H.264 parameter sets");
    stream_->time_base = kMicroseconds;
    if (p.audioChannels > 0) {
      if (p.audioChannels > 2) throw Error(Errc::kInvalidArgument, "an Opus track has 1 or 2 channels");
      audio_ = avformat_new_stream(ctx_, nullptr);
      if (!audio_) throw Error(Errc::kDevice, "avformat_new_stream failed (sound)");
      AVCodecParameters* a = audio_->codecpar;
      a->codec_type = AVMEDIA_TYPE_AUDIO;
      a->codec_id = AV_CODEC_ID_OPUS;
      a->sample_rate = 48000;
      av_channel_layout_default(&a->ch_layout, static_cast<int>(p.audioChannels));
      a->frame_size = 960;
      setExtradata(a, opusHead(p.audioChannels), "the Opus header");
      audio_->time_base = AVRational{1, 48000};
    }
    if (p.creationWallClockMs > 0)
      av_dict_set(&ctx_->metadata, "creation_time", isoTime(p.creationWallClockMs).c_str(), 0);
    // Every packet goes to the file as it is written (a recorder killed a moment later loses nothing
    // the muxer had already closed into a fragment or cluster).
    ctx_->flags |= AVFMT_FLAG_FLUSH_PACKETS;

    err = avio_open(&ctx_->pb, p.path.c_str(), AVIO_FLAG_WRITE);
    if (err < 0) encode::throwAv(Errc::kIo, "avio_open('" + p.path + "')", err);

    DictOwner opts;
    if (p.container == Container::kMp4) {
      // A fragment per keyframe, and at least one a second with a long GOP; the moov carries no
      // samples, so everything up to the last complete fragment plays after a kill.
      av_dict_set(&opts.dict, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
      av_dict_set(&opts.dict, "frag_duration", "1000000", 0);
    } else {
      av_dict_set(&opts.dict, "cluster_time_limit", "1000", 0);
    }
    err = avformat_write_header(ctx_, &opts.dict);
    if (err < 0) encode::throwAv(Errc::kDevice, "avformat_write_header('" + p.path + "')", err);
    headerWritten_ = true;
  } catch (...) {
    if (ctx_->pb) avio_closep(&ctx_->pb);
    avformat_free_context(ctx_);
    ctx_ = nullptr;
    throw;
  }
}

MediaFile::~MediaFile() {
  try {
    close();
  } catch (const std::exception& e) {
    log::warn("closing '", path_, "': ", e.what());
  }
}

void MediaFile::write(const std::uint8_t* data, std::size_t size, std::int64_t ptsUs, std::int64_t durationUs,
                      bool keyframe) {
  writePacket(stream_, data, size, ptsUs, durationUs, keyframe);
}

void MediaFile::writeAudio(const std::uint8_t* data, std::size_t size, std::int64_t ptsUs, std::int64_t durationUs) {
  if (!audio_) throw Error(Errc::kInvalidArgument, "'" + path_ + "' was opened without a sound track");
  writePacket(audio_, data, size, ptsUs, durationUs, true);  // every Opus packet decodes on its own
}

void MediaFile::writePacket(AVStream* stream, const std::uint8_t* data, std::size_t size, std::int64_t ptsUs,
                            std::int64_t durationUs, bool keyframe) {
  if (!ctx_) throw Error(Errc::kInvalidArgument, "'" + path_ + "' is already closed");
  AVPacket* pkt = av_packet_alloc();
  if (!pkt) throw Error(Errc::kDevice, "av_packet_alloc failed");
  // Not reference-counted: av_write_frame does not keep it, av_interleaved_write_frame copies it.
  pkt->data = const_cast<std::uint8_t*>(data);
  pkt->size = static_cast<int>(size);
  pkt->stream_index = stream->index;
  pkt->pts = av_rescale_q(ptsUs, kMicroseconds, stream->time_base);
  pkt->dts = pkt->pts;  // zerohop's encoders and cameras send no B-frames: decode order = display order
  pkt->duration = av_rescale_q(durationUs, kMicroseconds, stream->time_base);
  if (keyframe) pkt->flags |= AV_PKT_FLAG_KEY;
  // One track: straight to the file. Two: libavformat orders them by time across the tracks.
  const int err = audio_ ? av_interleaved_write_frame(ctx_, pkt) : av_write_frame(ctx_, pkt);
  av_packet_free(&pkt);
  if (err < 0) encode::throwAv(Errc::kIo, "writing a packet to '" + path_ + "'", err);
}

void MediaFile::close() {
  if (!ctx_) return;
  AVFormatContext* ctx = ctx_;
  ctx_ = nullptr;
  int err = 0;
  if (headerWritten_) err = av_write_trailer(ctx);
  const int closeErr = ctx->pb ? avio_closep(&ctx->pb) : 0;
  avformat_free_context(ctx);
  if (err < 0) encode::throwAv(Errc::kIo, "av_write_trailer('" + path_ + "')", err);
  if (closeErr < 0) encode::throwAv(Errc::kIo, "avio_closep('" + path_ + "')", closeErr);
}

}  // namespace zerohop::record
