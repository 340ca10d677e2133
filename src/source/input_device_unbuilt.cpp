// InputDevice without CUDA (input_device.hpp): device slots are refused, saying why.
#include "input_device.hpp"
#include "zerohop/error.hpp"

namespace zerohop {

std::unique_ptr<InputDevice> InputDevice::open(int, std::uint32_t) {
  throw Error(Errc::kUnsupported,
              "FrameInput: device-memory slots need a zerohop built with CUDA; use MemoryKind::kHost frames");
}

}  // namespace zerohop
