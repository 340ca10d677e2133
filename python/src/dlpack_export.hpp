#pragma once
// DLPack export of a Plane: a "dltensor_versioned" capsule (DLPack 1.0, flagged read-only) for
// consumers that pass max_version >= (1, 0) (numpy >= 2.1, recent torch/cupy), else the legacy
// "dltensor" capsule every consumer accepts (numpy >= 1.22). The managed tensor owns a copy of the
// Plane, hence a reference to the frame's lease: the slot stays mapped and spared until the consumer
// calls the deleter (numpy: when the array dies), or, if nobody consumed the capsule, until it dies.
// Device mode: GPU planes report (kDLCUDA, device) with the device pointer; __dlpack__(stream) makes
// the consumer's stream (None = legacy default, 1, 2, a handle; -1 = none) wait on the slot's ready
// event on the GPU, see device_stream.hpp.
// Thread-safety: call under the GIL; the deleter may run on any thread without it.

#include <pybind11/pybind11.h>

#include "plane.hpp"

namespace zerohop::python {

/// __dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None) -> PyCapsule.
/// Raises zerohop.InvalidArgumentError for a stream on a host plane (or stream=0 on a GPU plane), a
/// foreign dl_device or copy=True; zerohop.DeviceError when the stream wait fails.
pybind11::object exportDlpack(const PyPlane& plane, pybind11::object stream, pybind11::object maxVersion,
                              pybind11::object dlDevice, pybind11::object copy);

/// __dlpack_device__() -> (device_type, device_id): (kDLCPU, 0) for ring memory in host mode,
/// (kDLCUDAHost, 0) for pinned memory, (kDLCUDA, device) for GPU memory.
pybind11::tuple dlpackDeviceTuple(const PyPlane& plane);

}  // namespace zerohop::python
