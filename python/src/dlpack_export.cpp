#include "dlpack_export.hpp"

#include <string>

#include "device_stream.hpp"
#include "dlpack.h"
#include "zerohop/error.hpp"

namespace py = pybind11;

namespace zerohop::python {
namespace {

using namespace dlpack;

// Capsule names from the DLPack Python spec; a consumer renames the capsule to "used_..." when it
// takes ownership of the tensor.
constexpr const char* kLegacyName = "dltensor";
constexpr const char* kLegacyUsedName = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kVersionedUsedName = "used_dltensor_versioned";

// What a managed tensor points to: the arrays it refers to, and the lease.
struct DlpackExport {
  DLManagedTensor legacy{};
  DLManagedTensorVersioned versioned{};
  std::array<std::int64_t, 3> shape{};
  std::array<std::int64_t, 3> strides{};
  PyPlane plane;  // holds the lease until the deleter runs
};

// Deleters may run on any thread, without the GIL: they only drop C++ references.
void deleteLegacy(DLManagedTensor* self) {
  delete static_cast<DlpackExport*>(self->manager_ctx);
}
void deleteVersioned(DLManagedTensorVersioned* self) {
  delete static_cast<DlpackExport*>(self->manager_ctx);
}

// A capsule nobody consumed still owns its tensor (the spec's PyCapsule destructor).
template <typename Managed>
void destroyCapsule(PyObject* capsule, const char* name, const char* usedName) {
  if (PyCapsule_IsValid(capsule, usedName)) return;  // the consumer owns it now
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed == nullptr) {
    PyErr_WriteUnraisable(capsule);
  } else if (managed->deleter != nullptr) {
    managed->deleter(managed);
  }
  PyErr_Restore(type, value, traceback);
}
void destroyLegacyCapsule(PyObject* capsule) {
  destroyCapsule<DLManagedTensor>(capsule, kLegacyName, kLegacyUsedName);
}
void destroyVersionedCapsule(PyObject* capsule) {
  destroyCapsule<DLManagedTensorVersioned>(capsule, kVersionedName, kVersionedUsedName);
}

DLDevice dlpackDevice(const PyPlane& p) {
  switch (p.memory) {
    case MemoryKind::kHost: return {kDLCPU, 0};
    case MemoryKind::kPinned: return {kDLCUDAHost, 0};
    case MemoryKind::kDevice: return {kDLCUDA, p.gpu.device < 0 ? 0 : p.gpu.device};
  }
  return {kDLCPU, 0};
}

// The consumer's max_version (a (major, minor) tuple, or None for a pre-1.0 consumer).
bool wantsVersioned(const py::object& maxVersion) {
  if (maxVersion.is_none()) return false;
  const auto v = maxVersion.cast<py::tuple>();
  return v.size() >= 1 && v[0].cast<int>() >= static_cast<int>(kMajorVersion);
}

}  // namespace

py::tuple dlpackDeviceTuple(const PyPlane& plane) {
  const DLDevice d = dlpackDevice(plane);
  return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
}

py::object exportDlpack(const PyPlane& plane, py::object stream, py::object maxVersion, py::object dlDevice,
                        py::object copy) {
  const DLDevice device = dlpackDevice(plane);
  if (!copy.is_none() && copy.cast<bool>()) {
    throw Error(Errc::kInvalidArgument,
                "__dlpack__(copy=True): a zerohop frame is exported zero-copy only; copy the array instead");
  }
  if (!dlDevice.is_none()) {
    const auto want = dlDevice.cast<py::tuple>();
    if (want.size() != 2 || want[0].cast<int>() != static_cast<int>(device.device_type) ||
        want[1].cast<int>() != device.device_id) {
      throw Error(Errc::kInvalidArgument, "__dlpack__(dl_device=...): the frame lives on another device");
    }
  }
  if (plane.memory == MemoryKind::kDevice) {
    // The consumer's stream must wait on the producer's event; -1 = "no synchronisation wanted",
    // None = the legacy default stream (DLPack: "the producer must assume the legacy default stream").
    const std::intptr_t s = stream.is_none() ? 1 : stream.cast<std::intptr_t>();
    orderStreamAfterProducer(plane.gpu, s);
  } else if (!stream.is_none()) {
    throw Error(Errc::kInvalidArgument, "__dlpack__(stream=...): stream must be None for host-memory frames");
  }

  auto* x = new DlpackExport{};
  x->plane = plane;
  x->shape = plane.shape;
  x->strides = plane.strides;
  DLTensor t{};
  t.data = plane.data;
  t.device = device;
  t.ndim = plane.ndim;
  t.dtype = DLDataType{kDLUInt, 8, 1};
  t.shape = x->shape.data();
  t.strides = x->strides.data();
  t.byte_offset = 0;

  PyObject* capsule = nullptr;
  if (wantsVersioned(maxVersion)) {
    x->versioned.version = {kMajorVersion, kMinorVersion};
    x->versioned.manager_ctx = x;
    x->versioned.deleter = &deleteVersioned;
    x->versioned.flags = kFlagReadOnly;  // the ring is mapped read-only
    x->versioned.dl_tensor = t;
    capsule = PyCapsule_New(&x->versioned, kVersionedName, &destroyVersionedCapsule);
  } else {
    x->legacy.dl_tensor = t;
    x->legacy.manager_ctx = x;
    x->legacy.deleter = &deleteLegacy;
    capsule = PyCapsule_New(&x->legacy, kLegacyName, &destroyLegacyCapsule);
  }
  if (capsule == nullptr) {
    delete x;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

}  // namespace zerohop::python
