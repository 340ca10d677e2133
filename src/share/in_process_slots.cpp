#include "share/in_process_slots.hpp"

#include <map>
#include <mutex>

namespace zerohop::share_detail {
namespace {

/// The publisher's own slots seen from a reader of the same process.
class InProcessImport final : public DeviceImport {
 public:
  InProcessImport(std::shared_ptr<DeviceSlots> slots, std::uint64_t stride)
      : slots_(std::move(slots)), stride_(stride) {}
  int device() const noexcept override { return slots_->device(); }
  std::uint8_t* base() const noexcept override { return slots_->base(); }
  std::uint64_t slotStride() const noexcept override { return stride_; }
  void* slotEvent(std::uint32_t slot) const noexcept override { return slots_->slotEvent(slot); }
  bool grantAccess(int device, std::string& why) override { return slots_->grantAccess(device, why); }

 private:
  std::shared_ptr<DeviceSlots> slots_;
  std::uint64_t stride_;
};

std::mutex gMutex;
std::map<std::uint64_t, std::weak_ptr<DeviceSlots>>& registry() {
  static auto* r = new std::map<std::uint64_t, std::weak_ptr<DeviceSlots>>();  // never destroyed
  return *r;
}

}  // namespace

void listInProcess(std::uint64_t sessionId, const std::shared_ptr<DeviceSlots>& slots) {
  std::lock_guard lock(gMutex);
  registry()[sessionId] = slots;
}

void unlistInProcess(std::uint64_t sessionId) noexcept {
  std::lock_guard lock(gMutex);
  registry().erase(sessionId);
}

std::unique_ptr<DeviceImport> importInProcess(std::uint64_t sessionId, std::uint64_t slotStride) {
  std::shared_ptr<DeviceSlots> slots;
  {
    std::lock_guard lock(gMutex);
    const auto it = registry().find(sessionId);
    if (it != registry().end()) slots = it->second.lock();
  }
  if (!slots) return nullptr;
  return std::make_unique<InProcessImport>(std::move(slots), slotStride);
}

}  // namespace zerohop::share_detail
