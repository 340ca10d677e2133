#pragma once
// A bounded hand-off queue between two pipeline threads. Overflow policy: drop the OLDEST item
// (live video never blocks the camera; the newest frame is the one worth encoding).
// Thread-safety: thread-safe, any number of producers and consumers.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace zerohop {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  /// Pushes `item`; if full, the oldest item is destroyed (its lease released) and counted as dropped.
  /// Returns false (and drops `item`) once the queue is closed.
  bool push(T item) {
    bool accepted = false;
    pushEvicting(std::move(item), &accepted);  // what it evicted is destroyed here, outside the lock
    return accepted;
  }

  /// As push(), but hands back the oldest item it evicted (counted as dropped) for the caller to look
  /// at before it is destroyed; nullopt when nothing was evicted. `accepted` (optional) says whether
  /// `item` was queued (false once closed).
  std::optional<T> pushEvicting(T item, bool* accepted = nullptr) {
    return pushSeeingEvicted(
        std::move(item), [](const T&) {}, accepted);
  }

  /// As pushEvicting(), and `see` looks at the evicted item while the queue is still locked, before
  /// `item` is queued: a consumer cannot take an item queued after the evicted one before `see` has
  /// run (a passed-through camera's unit that later ones refer to: the next must be held back).
  /// `see` must not touch the queue.
  template <typename See>
  std::optional<T> pushSeeingEvicted(T item, See&& see, bool* accepted = nullptr) {
    std::optional<T> evicted;
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        if (accepted) *accepted = false;
        return std::nullopt;
      }
      if (items_.size() == capacity_) {
        evicted.emplace(std::move(items_.front()));
        items_.pop_front();
        ++dropped_;
        see(*evicted);
      }
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
    if (accepted) *accepted = true;
    return evicted;
  }

  /// Waits up to `timeout` for an item; nullopt on timeout or when closed and empty.
  std::optional<T> pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  /// Wakes every waiter; later pushes are refused. Items still queued are destroyed.
  void close() {
    std::deque<T> drained;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      drained.swap(items_);
    }
    cv_.notify_all();
  }

  std::uint64_t dropped() const {
    std::lock_guard lock(mutex_);
    return dropped_;
  }

  /// True once close() was called.
  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<T> items_;
  bool closed_ = false;
  std::uint64_t dropped_ = 0;
};

}  // namespace zerohop
