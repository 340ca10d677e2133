#include "plane.hpp"

#include <string>

#include "dlpack_export.hpp"
#include "zerohop/error.hpp"
#include "zerohop/pixel_format.hpp"

namespace py = pybind11;

namespace zerohop::python {
namespace {

bool isPacked(PixelFormat f) {
  switch (f) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
    case PixelFormat::kRGB24:
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA: return true;
    default: return false;
  }
}

void requireHost(const PyPlane& p, const char* what) {
  if (p.memory == MemoryKind::kDevice) {
    throw Error(Errc::kUnsupported, std::string(what) +
                                        " needs host memory; this plane is in GPU memory: use "
                                        "torch.from_dlpack / cupy.from_dlpack instead");
  }
}

py::buffer_info bufferOf(const PyPlane& p) {
  requireHost(p, "the buffer protocol (numpy.asarray, memoryview)");
  std::vector<py::ssize_t> shape(p.shape.begin(), p.shape.begin() + p.ndim);
  std::vector<py::ssize_t> strides(p.strides.begin(), p.strides.begin() + p.ndim);
  return py::buffer_info(p.data, 1, py::format_descriptor<std::uint8_t>::format(), p.ndim, std::move(shape),
                         std::move(strides), /*readonly=*/true);
}

}  // namespace

std::vector<PyPlane> planesOf(const std::shared_ptr<const SharedFrame>& lease) {
  const Frame& f = lease->frame();
  std::vector<PyPlane> out;
  auto base = [&](std::uint32_t i) {
    PyPlane p;
    p.lease = lease;
    p.data = f.data[i];
    p.memory = f.memory;
    p.gpu = f.gpu;
    return p;
  };
  if (isCompressed(f.format)) {
    PyPlane p = base(0);
    p.ndim = 1;
    p.shape = {static_cast<std::int64_t>(f.bytesUsed), 0, 0};
    p.strides = {1, 0, 0};
    out.push_back(p);
    return out;
  }
  const ImageLayout l = computeLayout(f.format, f.width, f.height);  // rows and meaningful bytes per plane
  for (std::uint32_t i = 0; i < f.planeCount && i < l.planeCount; ++i) {
    PyPlane p = base(i);
    const auto rows = static_cast<std::int64_t>(l.planes[i].rows);
    const auto pitch = static_cast<std::int64_t>(f.pitch[i]);
    if (isPacked(f.format)) {
      const std::int64_t bpp = l.planes[i].widthBytes / f.width;
      p.ndim = 3;
      p.shape = {rows, static_cast<std::int64_t>(f.width), bpp};
      p.strides = {pitch, bpp, 1};
    } else {
      p.ndim = 2;
      p.shape = {rows, static_cast<std::int64_t>(l.planes[i].widthBytes), 0};
      p.strides = {pitch, 1, 0};
    }
    out.push_back(p);
  }
  return out;
}

void registerPlane(py::module_& m) {
  py::class_<PyPlane>(m, "Plane", py::buffer_protocol(), R"doc(
One plane of a leased frame: a zero-copy, read-only uint8 view. numpy.asarray(plane) and
memoryview(plane) use the buffer protocol; numpy/torch/cupy.from_dlpack(plane) use DLPack. The view
and every array made from it hold the frame's lease (see Frame).)doc")
      .def_buffer(&bufferOf)
      .def_property_readonly("shape",
                             [](const PyPlane& p) {
                               py::tuple t(p.ndim);
                               for (int i = 0; i < p.ndim; ++i) t[i] = p.shape[i];
                               return t;
                             })
      .def_property_readonly("strides",
                             [](const PyPlane& p) {
                               py::tuple t(p.ndim);
                               for (int i = 0; i < p.ndim; ++i) t[i] = p.strides[i];
                               return t;
                             })
      .def_property_readonly("memory", [](const PyPlane& p) { return memoryKindName(p.memory); })
      .def("valid", [](const PyPlane& p) { return p.lease->valid(); },
           "True while the slot still holds this frame (check after reading the pixels).")
      .def("__dlpack__", &exportDlpack, py::arg("stream") = py::none(), py::kw_only(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
           "DLPack capsule (legacy 'dltensor') of this plane; it holds the lease until the consumer frees it.")
      .def("__dlpack_device__", [](const PyPlane& p) { return dlpackDeviceTuple(p); })
      .def("__repr__", [](const PyPlane& p) {
        std::string s = "<zerohop.Plane shape=(";
        for (int i = 0; i < p.ndim; ++i) s += std::to_string(p.shape[i]) + (i + 1 < p.ndim ? ", " : "");
        return s + (p.ndim == 1 ? ",)" : ")") + " memory=" + memoryKindName(p.memory) + ">";
      });
}

}  // namespace zerohop::python
