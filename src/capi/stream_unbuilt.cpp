// zh_stream_* and zh_sound_* in a library built without the stream part (no FFmpeg/GStreamer/libopus):
// ZH_ERR_UNSUPPORTED.
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
zh_status zh_sound_decoder_create(uint32_t, zh_sound_decoder** decoder) {
  if (decoder) *decoder = nullptr;
  return unbuilt("zh_sound_decoder_create");
}
zh_status zh_sound_decoder_close(zh_sound_decoder* decoder) {
  return decoder ? unbuilt("zh_sound_decoder_close") : ZH_OK;
}
zh_status zh_sound_decode(zh_sound_decoder*, const void*, size_t, int16_t*, size_t, size_t* frames) {
  if (frames) *frames = 0;
  return unbuilt("zh_sound_decode");
}
}  // extern "C"
