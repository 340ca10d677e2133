#pragma once
// The C API's handle structs and the registry that tells a live handle of the right type from a
// NULL, closed or foreign pointer without dereferencing it (so a wrong handle is an error, not a crash).
// Thread-safety: HandleRegistry is thread-safe; each handle is as thread-safe as the object it wraps.
#include <memory>
#include <mutex>
#include <unordered_set>

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

struct zh_publisher {
  /// Owns its publisher (zh_publisher_create).
  explicit zh_publisher(std::unique_ptr<zerohop::Publisher> p) : owned(std::move(p)), publisher(*owned) {}
  /// Borrows a publisher another handle owns (zh_stream_input): closing it is the owner's job.
  explicit zh_publisher(zerohop::Publisher& borrowed) : publisher(borrowed) {}
  std::unique_ptr<zerohop::Publisher> owned;
  zerohop::Publisher& publisher;
};

struct zh_slot {
  zh_slot(zerohop::WriteSlot s, zh_publisher* p) : slot(std::move(s)), owner(p) {}
  zerohop::WriteSlot slot;
  const zh_publisher* owner;  // which publisher handed it out (compared, never dereferenced)
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

}  // namespace zerohop::capi
