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
                           std::optional<std::uint32_t> publisherUid, std::optional<int> device,
                           const std::string& deviceAccess)
    : name_(std::move(name)) {
  SubscribeOptions o;
  // One limit for the whole open: waiting for NAME to be served (not yet published, or its
  // publisher died and is coming back), then for its answer; 0 waits for nothing to appear.
  o.waitForPublisher = toMillis(timeoutSeconds, "timeout");
  if (o.waitForPublisher.count() > 0) o.handshakeTimeout = o.waitForPublisher;
  if (directory) o.directory = *directory;
  o.publisherUid = publisherUid;
  if (device) {
    if (*device < 0) throw Error(Errc::kInvalidArgument, "device must be a CUDA device ordinal >= 0 (or None)");
    o.device = *device;
  }
  if (deviceAccess == "copy") {
    o.deviceAccess = SubscribeOptions::DeviceAccess::kCopy;
  } else if (deviceAccess != "auto") {
    throw Error(Errc::kInvalidArgument, "device_access must be \"auto\" or \"copy\", not \"" + deviceAccess + "\"");
  }
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

int PySubscriber::fileno() {
  py::gil_scoped_release nogil;
  std::lock_guard lock(mutex_);
  return open().pollFd();
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
  d["transport"] = i.transport;
  d["in_process"] = i.inProcess;
  if (i.memory == MemoryKind::kDevice) {
    d["ring_device"] = i.ringDevice;
    d["reader_device"] = i.readerDevice;
    d["device_access"] = i.deviceAccess;
    d["device_access_reason"] = i.deviceAccessReason;
  }
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
Subscriber(name, timeout=2.0, directory=None, publisher_uid=None, device=None, device_access="auto")

Connects to the share NAME (e.g. what `zerohop serve --share NAME` publishes) and maps its ring
read-only. timeout: seconds to wait for NAME to be published (also when its publisher died and
left its socket, until a restarted one replaces it) and then for its answer; 0: fail at once when
nobody serves NAME (the answer then gets 2 s). directory: the publisher's socket directory (default
$XDG_RUNTIME_DIR/zerohop or /tmp/zerohop-<uid>). publisher_uid: expected publisher uid (default ours).
Device shares: device is the CUDA device (ordinal) whose kernels read the frames (default: the
ring's own GPU); on another GPU the frames are read in place over peer access where the two GPUs
allow it, else copied once device-to-device into this reader's buffer. device_access="copy" always
makes that copy (e.g. to keep the reader's kernels off the link). info["device_access"] says which:
"same-gpu", "peer" or "copy", and info["device_access_reason"] why.
Raises NotFoundError (nobody published NAME within timeout), UnavailableError (its publisher died
and none came back within timeout; refused), ProtocolError (version mismatch), TimeoutError (no
answer). Thread-safe; usable as a context manager (close() on exit).)doc")
      .def(py::init<std::string, double, std::optional<std::string>, std::optional<std::uint32_t>,
                    std::optional<int>, const std::string&>(),
           py::arg("name"), py::arg("timeout") = 2.0, py::kw_only(), py::arg("directory") = py::none(),
           py::arg("publisher_uid") = py::none(), py::arg("device") = py::none(), py::arg("device_access") = "auto")
      .def("latest", &PySubscriber::latest,
           "The newest published Frame (possibly one already returned), or None before the first publish. "
           "Raises UnavailableError once the publisher went away.")
      .def("next", &PySubscriber::next, py::arg("timeout") = 1.0,
           "The first Frame published after the last one returned, waiting up to `timeout` seconds "
           "(None: no limit); None on timeout. Raises UnavailableError when the publisher goes away.")
      .def("reconnect", &PySubscriber::reconnect,
           "Handshakes again (e.g. with a restarted publisher), without waiting; outstanding Frames stay "
           "readable.")
      .def("fileno", &PySubscriber::fileno,
           "A file descriptor for select/poll/asyncio (loop.add_reader): readable when a frame may be "
           "ready and when the publisher went away. Then call next(0) until it returns None (each call "
           "resets the readiness first; readable may be spurious); a publisher that went away makes it "
           "raise UnavailableError. The first call registers with the publisher; the descriptor "
           "belongs to the Subscriber (the same across reconnect(), closed by close()): do not read or "
           "close it. Raises UnavailableError (publisher gone), TimeoutError (no answer).")
      .def("close", &PySubscriber::close, "Disconnects (idempotent); outstanding Frames stay readable.")
      .def_property_readonly("connected", &PySubscriber::connected,
                             "False once the publisher has been seen gone, or after close().")
      .def_property_readonly("closed", &PySubscriber::closed)
      .def_property_readonly("name", &PySubscriber::name)
      .def_property_readonly("info", &PySubscriber::info,
                             "dict: name, socket_path, format, width, height, encoded, slots, slot_capacity, "
                             "memory, publisher_pid, session_id, transport, in_process; device shares also "
                             "ring_device, reader_device, device_access, device_access_reason.")
      .def_property_readonly("stats", &PySubscriber::stats, "dict: frames, overruns, missed, reconnects.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PySubscriber& s, py::args) { s.close(); })
      .def("__repr__", [](PySubscriber& s) {
        return "<zerohop.Subscriber '" + s.name() + "'" + (s.closed() ? " closed>" : ">");
      });
}

}  // namespace zerohop::python
