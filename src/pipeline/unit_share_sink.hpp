#pragma once
// An encoded share as a UnitSink: the pictures (NAME.h264: every access unit) or the sound (NAME.opus:
// every Opus packet, stamped with its capture instant on the pictures' clock) copied into slots of an
// encoded ring other processes read (zerohop tap, zerohop record, the C API). Its readers cannot ask for
// keyframes.
// Thread-safety: deliver() from one thread; readers() from any.
#include <memory>

#include "zerohop/share.hpp"
#include "zerohop/sinks.hpp"

namespace zerohop {

class UnitShareSink final : public UnitSink {
 public:
  /// Publishes NAME holding `codec`'s units (Codec::kH264: the main encode's; kOpus: the sound's); slots
  /// hold units up to `capacityBytes`. Throws Error (name taken, bad name).
  UnitShareSink(const std::string& name, Codec codec, std::size_t capacityBytes, std::uint32_t slots);
  void deliver(const EncodedUnitPtr& unit) override {
    if (unit->codec == codec_) publisher_.publish(*unit);
  }
  bool wants(TrackKey track) const override { return track == TrackKey{codec_, 0}; }
  std::string describe() const override;
  std::uint32_t readers() const { return publisher_.stats().readersConnected; }
  const Publisher& publisher() const noexcept { return publisher_; }

 private:
  Publisher publisher_;
  Codec codec_;
};

}  // namespace zerohop
