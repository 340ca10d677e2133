// The WHEP front's SDP offer parsers (what POST /whep runs on every request body): any bytes either
// yield a usable H.264 (or VP8) choice or a zerohop::Error, an Opus choice or none, and a choice of sound
// alone, none or a zerohop::Error; nothing else escapes, nothing crashes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stream/audio_offer.hpp"
#include "stream/video_offer.hpp"
#include "zerohop/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // What POST /whep runs beside it when the stream has sound; it never throws.
  if (const auto audio = zerohop::stream::chooseAudio(std::string_view(reinterpret_cast<const char*>(data), size))) {
    if (audio->payloadType < 0 || audio->payloadType > 127) __builtin_trap();
    for (const auto& e : audio->extensions)
      if (e.id < 1 || e.id > 255 || e.id == 15) __builtin_trap();
    if (audio->extensions.size() > 1) __builtin_trap();  // abs-capture-time only, once
  }
  try {
    // What POST /whep runs when the stream can also send VP8 (a pipeline on the CPU or GPU path).
    const auto choice = zerohop::stream::chooseVideo(std::string_view(reinterpret_cast<const char*>(data), size),
                                                     zerohop::stream::SendableCodecs{true, {}});
    if (choice.payloadType < 0 || choice.payloadType > 127) __builtin_trap();  // PT must be a valid RTP PT
    // Header extensions we answer with: valid RFC 8285 ids, each id and each URI at most once.
    for (std::size_t i = 0; i < choice.extensions.size(); ++i) {
      const auto& e = choice.extensions[i];
      if (e.id < 1 || e.id > 255 || e.id == 15) __builtin_trap();
      for (std::size_t j = 0; j < i; ++j)
        if (choice.extensions[j].id == e.id || choice.extensions[j].uri == e.uri) __builtin_trap();
    }
  } catch (const zerohop::Error&) {
  }
  try {
    // What POST /whep runs first when the stream has sound: an offer of sound alone.
    if (const auto only =
            zerohop::stream::chooseAudioOnly(std::string_view(reinterpret_cast<const char*>(data), size))) {
      if (only->hasVideo() || !only->audio || only->audio->payloadType < 0 || only->audio->payloadType > 127)
        __builtin_trap();
    }
  } catch (const zerohop::Error&) {
  }
  return 0;
}
