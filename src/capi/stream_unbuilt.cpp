// zh_stream_* in a library built without the stream part (no FFmpeg/GStreamer): ZH_ERR_UNSUPPORTED.
#include "capi/status.hpp"

namespace {
zh_status unbuilt(const char* fn) {
  return zerohop::capi::fail(fn, ZH_ERR_UNSUPPORTED,
                             "this zerohop was built without the stream part (encoders, WebRTC): rebuild with "
                             "ZEROHOP_WITH_MEDIA=ON");
}
}  // namespace

extern "C" {
zh_status zh_stream_create(const zh_stream_options*, zh_stream** stream) {
  if (stream) *stream = nullptr;
  return unbuilt("zh_stream_create");
}
zh_status zh_stream_close(zh_stream* stream) { return stream ? unbuilt("zh_stream_close") : ZH_OK; }
zh_status zh_stream_input(zh_stream*, zh_publisher** input) {
  if (input) *input = nullptr;
  return unbuilt("zh_stream_input");
}
zh_status zh_stream_push_audio(zh_stream*, const int16_t*, size_t, int64_t) { return unbuilt("zh_stream_push_audio"); }
zh_status zh_stream_url(zh_stream*, char*, size_t, size_t*) { return unbuilt("zh_stream_url"); }
zh_status zh_stream_stats_json(zh_stream*, char*, size_t, size_t*) { return unbuilt("zh_stream_stats_json"); }
zh_status zh_stream_check(zh_stream*) { return unbuilt("zh_stream_check"); }
}  // extern "C"
