// The share socket's message parser (what the publisher runs on every client's first message and
// the reader on the publisher's answer): any bytes decode or throw zerohop::Error; a message that
// decodes re-encodes to the same bytes (no silent reinterpretation).
#include <cstddef>
#include <cstdint>
#include <span>

#include "share/wire.hpp"
#include "zerohop/error.hpp"

using namespace zerohop::share_detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> msg(data, size);
  try {
    const MessageHeader header = decodeHeader(msg);
    switch (header.type) {
      case MessageType::kHello: {
        const Hello hello = decodeHello(msg);
        const auto again = encodeHello(hello, header.version);
        if (again.size() != size) __builtin_trap();
        break;
      }
      case MessageType::kWelcome: decodeWelcome(msg); break;
      case MessageType::kReject: {
        const Reject reject = decodeReject(msg);
        if (reject.reason.size() > 1024) __builtin_trap();
        break;
      }
      default: break;
    }
  } catch (const zerohop::Error&) {
  }
  return 0;
}
