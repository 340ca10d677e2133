#include "unit_share_sink.hpp"

namespace zerohop {

UnitShareSink::UnitShareSink(const std::string& name, PixelFormat codec, std::size_t capacityBytes,
                             std::uint32_t slots)
    : publisher_(name, SlotLayout::encoded(codec, capacityBytes, slots)), sound_(codec == PixelFormat::kOpus) {}

std::string UnitShareSink::describe() const {
  return std::string(sound_ ? "Opus" : "H.264") + " share '" + publisher_.name() + "' (" + publisher_.socketPath() +
         ")";
}

}  // namespace zerohop
