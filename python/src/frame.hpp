#pragma once
// zerohop.Frame: a lease on one published frame (a SharedFrame) plus a copy of its metadata.
//
// Lifetime: the lease is shared by the Frame, its Planes and every array exported from them (DLPack
// capsule or buffer); release() / leaving `with` drops the Frame's share only. The slot is given
// back when the last holder is gone, so an array kept past `with` still reads mapped, spared memory
// (for ShareOptions::leaseTimeout; valid() says whether it still holds this frame). After release
// the Frame's metadata stays readable; asking it for pixels raises zerohop.InvalidArgumentError.
// Thread-safety: used from Python under the GIL; the lease itself may be dropped on any thread.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "plane.hpp"
#include "zerohop/share.hpp"

namespace zerohop::python {

class PyFrame {
 public:
  PyFrame(SharedFrame frame, std::string shareName);

  const Frame& meta() const noexcept { return meta_; }
  std::uint64_t publishIndex() const noexcept { return publishIndex_; }
  std::int64_t publishNs() const noexcept { return publishNs_; }
  const std::string& shareName() const noexcept { return shareName_; }
  bool released() const noexcept { return !lease_; }

  /// Plane i (0 = luma, or the packed image, or the encoded bytes); raises after release().
  PyPlane plane(std::size_t i) const;
  std::vector<PyPlane> planes() const;
  /// False after release() or once the publisher overwrote the slot.
  bool valid() const noexcept { return lease_ && lease_->valid(); }
  void release() noexcept { lease_.reset(); }

 private:
  const std::shared_ptr<const SharedFrame>& lease() const;

  std::shared_ptr<const SharedFrame> lease_;  // null once released
  Frame meta_;                                // read under the seqlock at lease time
  std::uint64_t publishIndex_ = 0;
  std::int64_t publishNs_ = 0;
  std::string shareName_;
};

/// Registers zerohop.Frame.
void registerFrame(pybind11::module_& m);

}  // namespace zerohop::python
