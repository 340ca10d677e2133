#include "unit_share_sink.hpp"

#include "core/codec_format.hpp"

namespace zerohop {

UnitShareSink::UnitShareSink(const std::string& name, Codec codec, std::size_t capacityBytes,
                             std::uint32_t slots)
    : publisher_(name, SlotLayout::encoded(formatOfCodec(codec), capacityBytes, slots)), codec_(codec) {}

std::string UnitShareSink::describe() const {
  return std::string(codec_ == Codec::kOpus ? "Opus" : "H.264") + " share '" + publisher_.name() + "' (" +
         publisher_.socketPath() + ")";
}

}  // namespace zerohop
