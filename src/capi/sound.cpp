// The C API's zh_sound_decoder_* over zerohop::SoundDecoder (built with the stream part;
// stream_unbuilt.cpp answers ZH_ERR_UNSUPPORTED without it).

#include <cstdint>

#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "zerohop/sound_decoder.hpp"

using zerohop::capi::fail;
using zerohop::capi::guarded;

struct zh_sound_decoder {
  explicit zh_sound_decoder(std::uint32_t channels) : decoder(channels) {}
  zerohop::SoundDecoder decoder;
};

namespace {
zerohop::capi::HandleRegistry<zh_sound_decoder>& decoders() {
  static zerohop::capi::HandleRegistry<zh_sound_decoder> r;
  return r;
}
zh_status badDecoder(const char* fn) {
  return fail(fn, ZH_ERR_INVALID_ARGUMENT, "decoder is NULL, already closed, or not a zh_sound_decoder");
}
}  // namespace

extern "C" {

zh_status zh_sound_decoder_create(uint32_t channels, zh_sound_decoder** decoder) {
  constexpr const char* fn = "zh_sound_decoder_create";
  if (!decoder) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "decoder (the out-pointer) is NULL");
  *decoder = nullptr;
  return guarded(fn, [&] {
    auto* d = new zh_sound_decoder(channels);
    decoders().add(d);
    *decoder = d;
    return ZH_OK;
  });
}

zh_status zh_sound_decoder_close(zh_sound_decoder* decoder) {
  if (!decoder) return ZH_OK;
  if (!decoders().take(decoder)) return badDecoder("zh_sound_decoder_close");
  delete decoder;
  return ZH_OK;
}

zh_status zh_sound_decode(zh_sound_decoder* decoder, const void* packet, size_t bytes, int16_t* pcm,
                          size_t max_frames, size_t* frames) {
  constexpr const char* fn = "zh_sound_decode";
  if (!frames) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frames (the out-pointer) is NULL");
  *frames = 0;
  if (!decoders().contains(decoder)) return badDecoder(fn);
  return guarded(fn, [&] {
    *frames = decoder->decoder.decode(static_cast<const std::uint8_t*>(packet), bytes, pcm, max_frames);
    return ZH_OK;
  });
}

}  // extern "C"
