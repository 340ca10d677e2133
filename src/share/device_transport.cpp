#include "share/device_transport.hpp"

#include <atomic>

namespace zerohop::share_detail {
namespace {
// Constant-initialised (zero) before any static constructor runs, so registration order is safe.
std::atomic<DeviceTransport*> gTransport{nullptr};
}  // namespace

DeviceTransport* deviceTransport() noexcept {
  return gTransport.load(std::memory_order_acquire);
}

void registerDeviceTransport(DeviceTransport* transport) noexcept {
  gTransport.store(transport, std::memory_order_release);
}

}  // namespace zerohop::share_detail
