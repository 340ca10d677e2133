// The WHEP front's SDP offer parser (what POST /whep runs on every request body): any bytes
// either yield a usable H.264 choice or a zerohop::Error; nothing else escapes, nothing crashes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stream/h264_offer.hpp"
#include "zerohop/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto choice = zerohop::stream::chooseH264(std::string_view(reinterpret_cast<const char*>(data), size));
    if (choice.payloadType < 0 || choice.payloadType > 127) __builtin_trap();  // PT must be a valid RTP PT
  } catch (const zerohop::Error&) {
  }
  return 0;
}
