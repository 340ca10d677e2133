#pragma once
// One value per recently used key, at most `capacity` of them: a key seen before gets its own value
// back; a new key gets a fresh value while there is room, and once full takes over the value of the
// least recently used key. Values are never destroyed before the RecentSlots, so a pointer handed out
// for one key stays valid after another key took that value over. Pure logic (no CUDA): the GPU
// producers keep their ready events in one (gpu/ready_events.hpp); the tests keep plain numbers.
// Thread-safety: thread-bound.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace zerohop::gpu_detail {

template <class Key, class Value>
class RecentSlots {
 public:
  struct Slot {
    Value& value;
    bool takenOver;  ///< this value belonged to another key until this call
  };

  explicit RecentSlots(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {
    entries_.reserve(capacity_);
  }

  /// The value for `key`, marked most recently used; `make()` creates one while there is room.
  template <class Make>
  Slot find(const Key& key, Make&& make) {
    ++clock_;
    for (Entry& e : entries_) {
      if (e.key == key) {
        e.lastUse = clock_;
        return {e.value, false};
      }
    }
    if (entries_.size() < capacity_) {
      entries_.push_back(Entry{key, make(), clock_});
      return {entries_.back().value, false};
    }
    Entry& oldest = *std::min_element(entries_.begin(), entries_.end(),
                                      [](const Entry& a, const Entry& b) { return a.lastUse < b.lastUse; });
    oldest.key = key;
    oldest.lastUse = clock_;
    return {oldest.value, true};
  }

  std::size_t size() const noexcept { return entries_.size(); }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  struct Entry {
    Key key;
    Value value;
    std::uint64_t lastUse;
  };
  const std::size_t capacity_;
  std::vector<Entry> entries_;  // reserved up front: values never move
  std::uint64_t clock_ = 0;
};

}  // namespace zerohop::gpu_detail
