#include "subscriber.hpp"

#include <algorithm>
#include <cmath>

#include "frame.hpp"
#include "zerohop/error.hpp"

namespace py = pybind11;
using namespace std::chrono_literals;

namespace zerohop::python {
namespace {

constexpr std::chrono::milliseconds kSignalCheckSlice{100};

std::chrono::milliseconds toMillis(double seconds, const char* what) {
  if (!std::isfinite(seconds) || seconds < 0) {
    throw Error(Errc::kInvalidArgument, std::string(what) + " must be a finite number of seconds >= 0");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

}  // namespace

PySubscriber::PySubscriber(std::string name, double timeoutSeconds, std::optional<std::string> directory,
                           std::optional<std::uint32_t> publisherUid)
    : name_(std::move(name)) {
  SubscribeOptions o;
  o.handshakeTimeout = toMillis(timeoutSeconds, "timeout");
  if (directory) o.directory = *directory;
  o.publisherUid = publisherUid;
  py::gil_scoped_release nogil;
  subscriber_ = std::make_unique<Subscriber>(name_, std::move(o));
}

Subscriber& PySubscriber::open() {
  if (!subscriber_) throw Error(Errc::kInvalidArgument, "subscriber '" + name_ + "' is closed");
  return *subscriber_;
}

py::object PySubscriber::wrap(std::optional<SharedFrame> frame) {
  if (!frame) return py::none();
  return py::cast(PyFrame(std::move(*frame), name_));
}

py::object PySubscriber::latest() {
  std::optional<SharedFrame> f;
  {
    py::gil_scoped_release nogil;
    std::lock_guard lock(mutex_);
    f = open().latest();
  }
  return wrap(std::move(f));
}

py::object PySubscriber::next(std::optional<double> timeoutSeconds) {
  const bool forever = !timeoutSeconds.has_value();
  const auto timeout = forever ? 0ms : toMillis(*timeoutSeconds, "timeout");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const auto slice = forever ? kSignalCheckSlice : std::clamp(left, 0ms, kSignalCheckSlice);
    std::optional<SharedFrame> f;
    {
      py::gil_scoped_release nogil;
      std::lock_guard lock(mutex_);
      f = open().next(slice);
    }
    if (f) return wrap(std::move(f));
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // e.g. KeyboardInterrupt
    if (!forever && std::chrono::steady_clock::now() >= deadline) return py::none();
  }
}

void PySubscriber::reconnect() {
  py::gil_scoped_release nogil;
  std::lock_guard lock(mutex_);
  open().reconnect();
}

void PySubscriber::close() {
  std::unique_ptr<Subscriber> gone;
  py::gil_scoped_release nogil;
  std::lock_guard lock(mutex_);
  gone = std::move(subscriber_);  // destroyed after the lock is dropped; outstanding Frames stay readable
}

bool PySubscriber::connected() {
  py::gil_scoped_release nogil;
  std::lock_guard lock(mutex_);
  return subscriber_ && subscriber_->connected();
}

bool PySubscriber::closed() {
  py::gil_scoped_release nogil;
  std::lock_guard lock(mutex_);
  return !subscriber_;
}

py::dict PySubscriber::info() {
  ShareInfo i;
  {
    py::gil_scoped_release nogil;
    std::lock_guard lock(mutex_);
    i = open().info();
  }
  py::dict d;
  d["name"] = i.name;
  d["socket_path"] = i.socketPath;
  d["format"] = std::string(formatName(i.layout.format));
  d["width"] = i.layout.width;
  d["height"] = i.layout.height;
  d["encoded"] = i.encoded;
  d["slots"] = i.slots;
  d["slot_capacity"] = i.slotCapacity;
  d["memory"] = memoryKindName(i.memory);
  d["publisher_pid"] = i.publisherPid;
  d["session_id"] = i.sessionId;
  return d;
}

py::dict PySubscriber::stats() {
  SubscriberStats s;
  {
    py::gil_scoped_release nogil;
    std::lock_guard lock(mutex_);
    s = open().stats();
  }
  py::dict d;
  d["frames"] = s.frames;
  d["overruns"] = s.overruns;
  d["missed"] = s.missed;
  d["reconnects"] = s.reconnects;
  return d;
}

void registerSubscriber(py::module_& m) {
  py::class_<PySubscriber>(m, "Subscriber", R"doc(
Subscriber(name, timeout=2.0, directory=None, publisher_uid=None)

Connects to the share NAME (e.g. what `zerohop serve --share NAME` publishes) and maps its ring
read-only. timeout: handshake limit in seconds. directory: the publisher's socket directory (default
$XDG_RUNTIME_DIR/zerohop or /tmp/zerohop-<uid>). publisher_uid: expected publisher uid (default ours).
Raises NotFoundError (nobody publishes NAME), UnavailableError (refused), ProtocolError (version
mismatch), TimeoutError (no answer). Thread-safe; usable as a context manager (close() on exit).)doc")
      .def(py::init<std::string, double, std::optional<std::string>, std::optional<std::uint32_t>>(),
           py::arg("name"), py::arg("timeout") = 2.0, py::kw_only(), py::arg("directory") = py::none(),
           py::arg("publisher_uid") = py::none())
      .def("latest", &PySubscriber::latest,
           "The newest published Frame (possibly one already returned), or None before the first publish. "
           "Raises UnavailableError once the publisher went away.")
      .def("next", &PySubscriber::next, py::arg("timeout") = 1.0,
           "The first Frame published after the last one returned, waiting up to `timeout` seconds "
           "(None: no limit); None on timeout. Raises UnavailableError when the publisher goes away.")
      .def("reconnect", &PySubscriber::reconnect,
           "Handshakes again (e.g. with a restarted publisher); outstanding Frames stay readable.")
      .def("close", &PySubscriber::close, "Disconnects (idempotent); outstanding Frames stay readable.")
      .def_property_readonly("connected", &PySubscriber::connected,
                             "False once the publisher has been seen gone, or after close().")
      .def_property_readonly("closed", &PySubscriber::closed)
      .def_property_readonly("name", &PySubscriber::name)
      .def_property_readonly("info", &PySubscriber::info,
                             "dict: name, socket_path, format, width, height, encoded, slots, slot_capacity, "
                             "memory, publisher_pid, session_id.")
      .def_property_readonly("stats", &PySubscriber::stats, "dict: frames, overruns, missed, reconnects.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PySubscriber& s, py::args) { s.close(); })
      .def("__repr__", [](PySubscriber& s) {
        return "<zerohop.Subscriber '" + s.name() + "'" + (s.closed() ? " closed>" : ">");
      });
}

}  // namespace zerohop::python
