#pragma once
// The C API's handle structs and the registry that tells a live handle of the right type from a
// NULL, closed or foreign pointer without dereferencing it (so a wrong handle is an error, not a crash).
// Thread-safety: HandleRegistry is thread-safe; each handle is as thread-safe as the object it wraps.
#include <memory>
#include <mutex>
#include <unordered_set>

#include "zerohop/frame_input.hpp"
#include "zerohop/share.hpp"
#include "zerohop/zerohop.h"

struct zh_reader {
  explicit zh_reader(zerohop::Subscriber s) : subscriber(std::move(s)) {}
  zerohop::Subscriber subscriber;
};

struct zh_frame {
  explicit zh_frame(zerohop::SharedFrame f) : frame(std::move(f)) {}
  zerohop::SharedFrame frame;
};

/// A share's publisher (zh_publisher_create), or a zh_stream's in-process input (zh_stream_input):
/// the same C functions write into either.
struct zh_publisher {
  /// Owns its publisher (zh_publisher_create).
  explicit zh_publisher(std::unique_ptr<zerohop::Publisher> p) : owned(std::move(p)), publisher(owned.get()) {}
  /// Borrows the input of a stream another handle owns (zh_stream_input): closing it is the owner's job.
  explicit zh_publisher(zerohop::FrameInput& borrowed) : input(&borrowed) {}
  std::unique_ptr<zerohop::Publisher> owned;
  zerohop::Publisher* publisher = nullptr;  // exactly one of publisher and input is set
  zerohop::FrameInput* input = nullptr;
};

struct zh_slot {
  zh_slot(zerohop::WriteSlot s, zh_publisher* p) : slot(std::move(s)), owner(p) {}
  zh_slot(zerohop::InputSlot s, zh_publisher* p) : inputSlot(std::move(s)), owner(p) {}
  zerohop::Frame& frame() noexcept { return inputSlot ? inputSlot.frame() : slot.frame(); }
  zerohop::WriteSlot slot;       // from a share's publisher
  zerohop::InputSlot inputSlot;  // from a stream's input
  const zh_publisher* owner;  // which publisher handed it out (compared, never dereferenced)
};

struct zh_ready_semaphore {
  explicit zh_ready_semaphore(zerohop::ReadySemaphore s) : semaphore(std::move(s)) {}
  zerohop::ReadySemaphore semaphore;
};

namespace zerohop::capi {

/// Live handles of one type. add() after construction, take() before destruction.
template <class T>
class HandleRegistry {
 public:
  void add(const T* h) {
    std::lock_guard lock(mutex_);
    live_.insert(h);
  }
  bool contains(const T* h) const {
    std::lock_guard lock(mutex_);
    return live_.count(h) != 0;
  }
  /// Removes `h`; false if it was not live (closed twice, or never ours).
  bool take(const T* h) {
    std::lock_guard lock(mutex_);
    return live_.erase(h) != 0;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<const T*> live_;
};

HandleRegistry<zh_reader>& readers();
HandleRegistry<zh_frame>& frames();
HandleRegistry<zh_publisher>& publishers();
HandleRegistry<zh_slot>& slots();
HandleRegistry<zh_ready_semaphore>& readySemaphores();

}  // namespace zerohop::capi
