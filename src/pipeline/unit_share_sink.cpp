#include "unit_share_sink.hpp"

namespace zerohop {

UnitShareSink::UnitShareSink(const std::string& name, std::size_t capacityBytes, std::uint32_t slots)
    : publisher_(name, SlotLayout::encoded(PixelFormat::kH264, capacityBytes, slots)) {}

std::string UnitShareSink::describe() const {
  return "H.264 share '" + publisher_.name() + "' (" + publisher_.socketPath() + ")";
}

}  // namespace zerohop
