#pragma once
// The H.264 share (NAME.h264) as a UnitSink: every access unit is copied into a slot of an encoded
// ring other processes read (zerohop tap, recorders). Its readers cannot ask for keyframes.
// Thread-safety: deliver() from one thread; readers() from any.
#include <memory>

#include "zerohop/share.hpp"
#include "zerohop/sinks.hpp"

namespace zerohop {

class UnitShareSink final : public UnitSink {
 public:
  /// Publishes NAME; slots hold units up to `capacityBytes`. Throws Error (name taken, bad name).
  UnitShareSink(const std::string& name, std::size_t capacityBytes, std::uint32_t slots);
  void deliver(const EncodedUnitPtr& unit) override { publisher_.publish(*unit); }
  void setKeyframeRequester(std::function<void()>) override {}
  std::string describe() const override;
  std::uint32_t readers() const { return publisher_.stats().readersConnected; }
  const Publisher& publisher() const noexcept { return publisher_; }

 private:
  Publisher publisher_;
};

}  // namespace zerohop
