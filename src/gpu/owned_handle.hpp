#pragma once
// Internal: a move-only owner of one C library handle and the call that destroys it (nvJPEG handles,
// NVDEC parsers and decoders). Destroying it passes the destroy call's status to `Report`, which logs
// a failure and never throws; a moved-from owner holds nothing.
// Thread-safety: thread-bound while used; distinct owners are independent.

#include <utility>

namespace zerohop {

template <typename Handle, typename Status, void (*Report)(Status, const char*) noexcept>
class OwnedHandle {
 public:
  using Destroy = Status (*)(Handle);
  OwnedHandle() = default;
  OwnedHandle(Handle handle, Destroy destroy, const char* destroyName) noexcept
      : handle_(handle), destroy_(destroy), destroyName_(destroyName) {}
  ~OwnedHandle() { reset(); }
  OwnedHandle(OwnedHandle&& o) noexcept { *this = std::move(o); }
  OwnedHandle& operator=(OwnedHandle&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, nullptr);
      destroy_ = o.destroy_;
      destroyName_ = o.destroyName_;
    }
    return *this;
  }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;

  Handle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  void reset() noexcept {
    if (handle_) Report(destroy_(std::exchange(handle_, nullptr)), destroyName_);
  }

 private:
  Handle handle_ = nullptr;
  Destroy destroy_ = nullptr;
  const char* destroyName_ = "";
};

}  // namespace zerohop
