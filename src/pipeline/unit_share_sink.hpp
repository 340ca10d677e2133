#pragma once
// An encoded share as a UnitSink: the pictures (NAME.h264: every access unit) or the sound (NAME.opus:
// every Opus packet, stamped with its capture instant on the pictures' clock) copied into slots of an
// encoded ring other processes read (zerohop tap, zerohop record, the C API). Its readers cannot ask for
// keyframes.
// Thread-safety: deliver()/deliverAudio() each from one thread; readers() from any.
#include <memory>

#include "zerohop/share.hpp"
#include "zerohop/sinks.hpp"

namespace zerohop {

class UnitShareSink final : public UnitSink {
 public:
  /// Publishes NAME holding `codec` (kH264: deliver(); kOpus: deliverAudio()); slots hold units up to
  /// `capacityBytes`. Throws Error (name taken, bad name).
  UnitShareSink(const std::string& name, PixelFormat codec, std::size_t capacityBytes, std::uint32_t slots);
  void deliver(const EncodedUnitPtr& unit) override {
    if (!sound_) publisher_.publish(*unit);
  }
  void deliverAudio(const EncodedUnitPtr& unit) override {
    if (sound_) publisher_.publish(*unit);
  }
  void setKeyframeRequester(std::function<void()>) override {}
  std::string describe() const override;
  std::uint32_t readers() const { return publisher_.stats().readersConnected; }
  const Publisher& publisher() const noexcept { return publisher_; }

 private:
  Publisher publisher_;
  bool sound_;
};

}  // namespace zerohop
