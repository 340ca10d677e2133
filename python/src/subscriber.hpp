#pragma once
// zerohop.Subscriber: a zerohop::Subscriber behind a mutex, so Python threads may share one (the C++
// Subscriber is thread-bound). Every call into it releases the GIL first; next() waits in slices of
// at most 100 ms and checks for signals between them, so Ctrl-C interrupts a long wait.
// Ownership: owns the Subscriber; Frames it returns share their own leases and may outlive it.
// Thread-safety: thread-safe (calls are serialised).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "zerohop/share.hpp"

namespace zerohop::python {

class PySubscriber {
 public:
  PySubscriber(std::string name, double timeoutSeconds, std::optional<std::string> directory,
               std::optional<std::uint32_t> publisherUid, std::optional<int> device, const std::string& deviceAccess);

  pybind11::object latest();
  /// None on timeout; `timeoutSeconds` None waits until a frame comes or the publisher goes away.
  pybind11::object next(std::optional<double> timeoutSeconds);
  void reconnect();
  /// Subscriber::pollFd(), for select/poll/asyncio's add_reader.
  int fileno();
  void close();
  bool connected();
  bool closed();
  pybind11::dict info();
  pybind11::dict stats();
  const std::string& name() const noexcept { return name_; }

 private:
  Subscriber& open();  // the subscriber, or InvalidArgumentError once closed; call with mutex_ held
  pybind11::object wrap(std::optional<SharedFrame> frame);

  std::string name_;
  std::mutex mutex_;                        // serialises every use of subscriber_
  std::unique_ptr<Subscriber> subscriber_;  // null once closed
};

/// Registers zerohop.Subscriber.
void registerSubscriber(pybind11::module_& m);

}  // namespace zerohop::python
