// The C API's zh_stream_* over zerohop::FrameStream (built with the stream part; stream_unbuilt.cpp
// answers ZH_ERR_UNSUPPORTED without it).
#include <cstring>

#include "capi/enum_map.hpp"
#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "capi/versioned.hpp"
#include "zerohop/frame_stream.hpp"

using namespace zerohop;
using zerohop::capi::fail;
using zerohop::capi::guarded;

struct zh_stream {
  explicit zh_stream(FrameStreamConfig c)
      : stream(c), input(stream.input()), audioChannels(c.audioChannels) {}
  FrameStream stream;
  zh_publisher input;  // borrows stream.input() (a FrameInput)
  std::uint32_t audioChannels;  // options.audio_channels (0: no sound)
};

namespace zerohop::capi {
namespace {
HandleRegistry<zh_stream>& streams() {
  static HandleRegistry<zh_stream> r;
  return r;
}

zh_status badStream(const char* fn) {
  return fail(fn, ZH_ERR_INVALID_ARGUMENT, "stream is NULL, already closed, or not a zh_stream");
}

zh_status copyOut(const char* fn, const std::string& text, char* buf, std::size_t size, std::size_t* needed) {
  if (needed) *needed = text.size() + 1;
  if (!buf || size < text.size() + 1)
    return fail(fn, ZH_ERR_INVALID_ARGUMENT,
                "buffer of " + std::to_string(size) + " bytes is too small: " + std::to_string(text.size() + 1) +
                    " needed");
  std::memcpy(buf, text.c_str(), text.size() + 1);
  return ZH_OK;
}
}  // namespace
}  // namespace zerohop::capi

extern "C" {

zh_status zh_stream_create(const zh_stream_options* options, zh_stream** stream) {
  constexpr const char* fn = "zh_stream_create";
  return guarded(fn, [&]() -> zh_status {
    if (!stream) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "stream (the out-pointer) is NULL");
    *stream = nullptr;
    if (!options) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "options is NULL (start from ZH_STREAM_OPTIONS_INIT)");
    if (options->struct_size < capi::kStreamOptionsFirstSize)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT,
                  "options.struct_size is below " + std::to_string(capi::kStreamOptionsFirstSize) +
                      ", the struct's first released size: set it to sizeof(zh_stream_options) (or use "
                      "ZH_STREAM_OPTIONS_INIT)");
    // Members past the caller's struct (an older header) keep their defaults.
    const zh_stream_options o = capi::readVersioned(*options, zh_stream_options ZH_STREAM_OPTIONS_INIT, capi::kStreamOptionsReleases);
    const auto format = capi::formatFromC(o.format);
    if (!format)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT, "options.format " + std::to_string(o.format) + " is not a zh_format");
    const auto memory = capi::memoryFromC(o.memory);
    if (!memory || *memory == MemoryKind::kPinned)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT, "options.memory must be ZH_MEMORY_HOST or ZH_MEMORY_DEVICE");
    FrameStreamConfig c;
    c.format = *format;
    c.width = o.width;
    c.height = o.height;
    c.fps = o.fps;
    c.memory = *memory;
    c.cudaDevice = o.cuda_device;
    if (o.listen_host) c.stream.host = o.listen_host;
    c.stream.port = o.port;
    if (o.bitrate_kbps) c.encoder.bitrateKbps = o.bitrate_kbps;
    c.encoder.encoder = o.encoder ? o.encoder : "auto";
    if (o.whep_token) c.stream.whepToken = o.whep_token;
    if (o.whip_url) c.whipUrl = o.whip_url;
    if (o.whip_token) c.whipToken = o.whip_token;
    if (o.share_name) c.shareName = o.share_name;
    if (o.audio_channels > 2)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT,
                  "options.audio_channels " + std::to_string(o.audio_channels) + ": give 0 (no sound), 1 or 2");
    c.audioChannels = o.audio_channels;
    if (o.whip_simulcast && std::strcmp(o.whip_simulcast, "on") != 0 &&
        std::strcmp(o.whip_simulcast, "off") != 0)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT,
                  "options.whip_simulcast \"" + std::string(o.whip_simulcast).substr(0, 20) +
                      "\": give \"on\", \"off\" or NULL (off)");
    c.whipSimulcast = o.whip_simulcast && std::strcmp(o.whip_simulcast, "on") == 0;
    auto* h = new zh_stream(std::move(c));
    capi::streams().add(h);
    capi::publishers().add(&h->input);
    *stream = h;
    return ZH_OK;
  });
}

zh_status zh_stream_close(zh_stream* stream) {
  constexpr const char* fn = "zh_stream_close";
  if (!stream) return ZH_OK;
  if (!capi::streams().take(stream)) return capi::badStream(fn);
  capi::publishers().take(&stream->input);
  return guarded(fn, [&] {
    delete stream;
    return ZH_OK;
  });
}

zh_status zh_stream_input(zh_stream* stream, zh_publisher** input) {
  constexpr const char* fn = "zh_stream_input";
  if (!input) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "input (the out-pointer) is NULL");
  *input = nullptr;
  if (!capi::streams().contains(stream)) return capi::badStream(fn);
  *input = &stream->input;
  return ZH_OK;
}

zh_status zh_stream_push_audio(zh_stream* stream, const int16_t* samples, size_t frames, int64_t capture_ns) {
  constexpr const char* fn = "zh_stream_push_audio";
  if (!capi::streams().contains(stream)) return capi::badStream(fn);
  if (stream->audioChannels == 0)
    return fail(fn, ZH_ERR_INVALID_ARGUMENT,
                "this stream has no sound: create it with options.audio_channels 1 or 2");
  return guarded(fn, [&] {
    stream->stream.pushAudio(samples, frames, capture_ns);
    return ZH_OK;
  });
}

zh_status zh_stream_url(zh_stream* stream, char* buf, size_t size, size_t* needed) {
  constexpr const char* fn = "zh_stream_url";
  if (!capi::streams().contains(stream)) return capi::badStream(fn);
  return guarded(fn, [&] { return capi::copyOut(fn, stream->stream.url(), buf, size, needed); });
}

zh_status zh_stream_stats_json(zh_stream* stream, char* buf, size_t size, size_t* needed) {
  constexpr const char* fn = "zh_stream_stats_json";
  if (!capi::streams().contains(stream)) return capi::badStream(fn);
  return guarded(fn, [&] { return capi::copyOut(fn, stream->stream.statsJson(), buf, size, needed); });
}

zh_status zh_stream_check(zh_stream* stream) {
  constexpr const char* fn = "zh_stream_check";
  if (!capi::streams().contains(stream)) return capi::badStream(fn);
  return guarded(fn, [&] {
    const auto failure = stream->stream.failure();
    return failure ? fail(fn, capi::statusOf(failure->code()), failure->what()) : ZH_OK;
  });
}

}  // extern "C"
