// The C API's zh_stream_* over zerohop::FrameStream (built with the stream part; stream_unbuilt.cpp
// answers ZH_ERR_UNSUPPORTED without it).
#include <cstring>

#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "zerohop/frame_stream.hpp"

using namespace zerohop;
using zerohop::capi::fail;
using zerohop::capi::guarded;

struct zh_stream {
  explicit zh_stream(FrameStreamConfig c) : stream(std::move(c)), input(stream.input()) {}
  FrameStream stream;
  zh_publisher input;  // borrows stream.input() (a FrameInput)
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
    if (options->struct_size < sizeof(zh_stream_options))
      return fail(fn, ZH_ERR_INVALID_ARGUMENT, "options.struct_size is too small: set it to sizeof(zh_stream_options)");
    if (options->format <= ZH_FORMAT_UNKNOWN || options->format > ZH_FORMAT_H264)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT, "options.format is not a zh_format");
    if (options->memory != ZH_MEMORY_HOST && options->memory != ZH_MEMORY_DEVICE)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT, "options.memory must be ZH_MEMORY_HOST or ZH_MEMORY_DEVICE");
    FrameStreamConfig c;
    c.format = static_cast<PixelFormat>(options->format);
    c.width = options->width;
    c.height = options->height;
    c.fps = options->fps;
    c.memory = static_cast<MemoryKind>(options->memory);
    c.cudaDevice = options->cuda_device;
    if (options->listen_host) c.stream.host = options->listen_host;
    c.stream.port = options->port;
    if (options->bitrate_kbps) c.encoder.bitrateKbps = options->bitrate_kbps;
    c.encoder.encoder = options->encoder ? options->encoder : "auto";
    if (options->whep_token) c.stream.whepToken = options->whep_token;
    if (options->whip_url) c.whipUrl = options->whip_url;
    if (options->whip_token) c.whipToken = options->whip_token;
    if (options->share_name) c.shareName = options->share_name;
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

}  // extern "C"
