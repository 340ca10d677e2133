#include "frame.hpp"

#include <string>

#include "dlpack_export.hpp"
#include "zerohop/error.hpp"

namespace py = pybind11;

namespace zerohop::python {

PyFrame::PyFrame(SharedFrame frame, std::string shareName)
    : meta_(frame.frame()),
      publishIndex_(frame.publishIndex()),
      publishNs_(frame.publishNs()),
      shareName_(std::move(shareName)) {
  lease_ = std::make_shared<const SharedFrame>(std::move(frame));
}

const std::shared_ptr<const SharedFrame>& PyFrame::lease() const {
  if (!lease_) {
    throw Error(Errc::kInvalidArgument, "frame " + std::to_string(meta_.sequence) + " of '" + shareName_ +
                                            "' was released: its pixels are no longer leased");
  }
  return lease_;
}

std::vector<PyPlane> PyFrame::planes() const {
  return planesOf(lease());
}

PyPlane PyFrame::plane(std::size_t i) const {
  auto all = planes();
  if (i >= all.size()) {
    throw Error(Errc::kInvalidArgument, "plane " + std::to_string(i) + " out of range: a " +
                                            std::string(formatName(meta_.format)) + " frame has " +
                                            std::to_string(all.size()));
  }
  return all[i];
}

namespace {

py::dict timestamps(const PyFrame& f) {
  py::dict d;
  for (std::size_t s = 0; s < kStageCount; ++s) {
    const auto ns = f.meta().times.ns[s];
    if (ns != 0) d[stageName(static_cast<Stage>(s))] = ns;
  }
  d["publish"] = f.publishNs();
  return d;
}

// bytes(f): encoded units as they are; images tightly packed (planes one after another, no pitch
// padding), i.e. the usual raw file layout. A copy: check f.valid() afterwards.
py::bytes toBytes(const PyFrame& f) {
  const auto planes = f.planes();
  for (const auto& p : planes) {
    if (p.memory == MemoryKind::kDevice) throw Error(Errc::kUnsupported, "bytes() of a GPU-memory frame");
  }
  if (planes.size() == 1 && planes[0].ndim == 1) {
    return py::bytes(reinterpret_cast<const char*>(planes[0].data), static_cast<std::size_t>(planes[0].shape[0]));
  }
  std::string out;
  for (const auto& p : planes) {
    const std::size_t rowBytes = static_cast<std::size_t>(p.ndim == 3 ? p.shape[1] * p.shape[2] : p.shape[1]);
    for (std::int64_t r = 0; r < p.shape[0]; ++r) {
      out.append(reinterpret_cast<const char*>(p.data + r * p.strides[0]), rowBytes);
    }
  }
  return py::bytes(out);
}

// f.data: encoded units only, a read-only memoryview of bytesUsed bytes that holds the lease.
py::object dataView(const PyFrame& f) {
  if (!isCompressed(f.meta().format)) {
    throw Error(Errc::kInvalidArgument,
                "Frame.data is for encoded units; for images use f.plane(i), f.planes or numpy.from_dlpack(f)");
  }
  py::object plane = py::cast(f.plane(0));
  return py::reinterpret_steal<py::object>(PyMemoryView_FromObject(plane.ptr()));
}

std::string repr(const PyFrame& f) {
  const Frame& m = f.meta();
  std::string s = "<zerohop.Frame '" + f.shareName() + "' seq=" + std::to_string(m.sequence) + " " +
                  std::string(formatName(m.format));
  if (isCompressed(m.format)) {
    s += " " + std::to_string(m.bytesUsed) + " bytes" + (m.keyframe ? " keyframe" : "");
  } else {
    s += " " + std::to_string(m.width) + "x" + std::to_string(m.height);
  }
  return s + (f.released() ? " released>" : ">");
}

}  // namespace

void registerFrame(py::module_& m) {
  py::class_<PyFrame>(m, "Frame", R"doc(
A lease on one published frame. Metadata: seq, timestamps, wall_clock_ms, format, width, height,
keyframe, bytes_used, publish_index. Pixels, zero-copy and read-only: numpy.from_dlpack(f) (plane 0:
luma, or the packed image, or the encoded bytes), f.plane(i) / f.planes, f.data (encoded units).
Check f.valid() after reading: False means the publisher overwrote the slot meanwhile.
`with s.next() as f:` (or f.release()) gives the lease back; arrays made from the frame keep it
until they are gone.)doc")
      .def_property_readonly("seq", [](const PyFrame& f) { return f.meta().sequence; },
                             "Source sequence number (gaps are frames the source dropped).")
      .def_property_readonly("publish_index", &PyFrame::publishIndex,
                             "1-based count of publishes on this ring (gaps = frames this reader missed).")
      .def_property_readonly("timestamps", &timestamps,
                             "Stage name -> CLOCK_MONOTONIC ns (time.monotonic_ns()); always has 'publish'.")
      .def_property_readonly("wall_clock_ms", [](const PyFrame& f) { return f.meta().wallClockMs; })
      .def_property_readonly("format", [](const PyFrame& f) { return std::string(formatName(f.meta().format)); })
      .def_property_readonly("width", [](const PyFrame& f) { return f.meta().width; })
      .def_property_readonly("height", [](const PyFrame& f) { return f.meta().height; })
      .def_property_readonly("keyframe", [](const PyFrame& f) { return f.meta().keyframe; })
      .def_property_readonly("bytes_used", [](const PyFrame& f) { return f.meta().bytesUsed; })
      .def_property_readonly("memory", [](const PyFrame& f) { return memoryKindName(f.meta().memory); })
      .def_property_readonly("encoded", [](const PyFrame& f) { return isCompressed(f.meta().format); })
      .def_property_readonly("released", &PyFrame::released)
      .def("valid", &PyFrame::valid, "True while the slot still holds this frame (False after release()).")
      .def("release", &PyFrame::release, "Gives this Frame's share of the lease back (idempotent).")
      .def("plane", &PyFrame::plane, py::arg("index"))
      .def_property_readonly("planes", &PyFrame::planes)
      .def_property_readonly("data", &dataView)
      .def("__bytes__", &toBytes)
      .def("__dlpack__",
           [](const PyFrame& f, py::object stream, py::object maxVersion, py::object dlDevice, py::object copy) {
             return exportDlpack(f.plane(0), std::move(stream), std::move(maxVersion), std::move(dlDevice),
                                 std::move(copy));
           },
           py::arg("stream") = py::none(), py::kw_only(), py::arg("max_version") = py::none(),
           py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
           "DLPack capsule of plane 0 (the luma plane of YUV formats); use f.plane(i) for the others.")
      .def("__dlpack_device__", [](const PyFrame& f) { return dlpackDeviceTuple(f.plane(0)); })
      .def("__array__",
           [](const PyFrame& f, py::object dtype, py::object copy) {
             py::object np = py::module_::import("numpy");
             py::object view = np.attr("asarray")(py::cast(f.plane(0)), dtype);
             return !copy.is_none() && copy.cast<bool>() ? view.attr("copy")() : view;
           },
           py::arg("dtype") = py::none(), py::arg("copy") = py::none(),
           "numpy.asarray(f): plane 0 as a read-only array (zero-copy unless copy=True).")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyFrame& f, py::args) { f.release(); })
      .def("__repr__", &repr);
}

}  // namespace zerohop::python
