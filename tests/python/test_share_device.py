#!/usr/bin/env python3
"""Python device mode (label gpu): a device ring's frames exported through DLPack as kDLCUDA tensors.

A C++ publisher (py_share_device_publisher) writes NV12 96x48 pattern frames into a device ring with a
kernel. The first tests do not need torch or cupy: they play the consumer
itself, as torch.from_dlpack / cupy.from_dlpack would: calls __dlpack__(stream=...), opens the capsule
with ctypes, checks device / pointer / shape / strides / dtype / flags, then copies the bytes back
through libcudart (ctypes) ON THE STREAM IT PASSED, and compares every byte with the pattern.
Where torch / cupy are installed (the GPU machine's Python has both), two more tests let them consume
the frames for real (same device address as the ring's slot, every byte checked), imported only after
the Subscriber exists (the order that once crashed them).
Exit 77 (skipped) without a usable GPU or without libcudart.
"""
import argparse
import ctypes
import ctypes.util
import glob
import select
import shutil
import subprocess
import sys
import tempfile
import unittest

import zerohop

ARGS = argparse.Namespace(publisher=None)
KDLCUDA = 2


def load_cudart():
    names = [ctypes.util.find_library("cudart")]
    for pattern in ("/usr/local/cuda*/lib64/libcudart.so*", "/usr/local/cuda*/targets/*/lib/libcudart.so*",
                    "/usr/lib/x86_64-linux-gnu/libcudart.so*"):
        names += sorted(glob.glob(pattern))
    for n in names:
        if n:
            try:
                return ctypes.CDLL(n)
            except OSError:
                pass
    return None


CUDART = load_cudart()


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def open_capsule(capsule, versioned):
    name = b"dltensor_versioned" if versioned else b"dltensor"
    ptr = _get_pointer(capsule, name)
    managed = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(ptr)
    return managed, managed.dl_tensor


def pattern_rows(seq, plane, rows, width_bytes):
    """tests/share/share_test_support.hpp's patternByte for every meaningful byte, row by row."""
    out = bytearray(rows * width_bytes)
    for off in range(rows * width_bytes):
        out[off] = (seq * 7 + plane * 101 + off * 13 + (off >> 9)) & 0xFF
    return bytes(out)


def check(rc, call):
    if rc != 0:
        raise AssertionError("%s failed: cudaError %d" % (call, rc))


def copy_back(t, stream=None):
    """Copies a 2-D uint8 device tensor to host on `stream` (None: the legacy default stream)."""
    rows, cols = t.shape[0], t.shape[1]
    pitch = t.strides[0]
    host = ctypes.create_string_buffer(rows * cols)
    src = ctypes.c_void_p(t.data + t.byte_offset)
    if stream is None:
        check(CUDART.cudaMemcpy2D(host, ctypes.c_size_t(cols), src, ctypes.c_size_t(pitch), ctypes.c_size_t(cols),
                                  ctypes.c_size_t(rows), 2), "cudaMemcpy2D")
    else:
        check(CUDART.cudaMemcpy2DAsync(host, ctypes.c_size_t(cols), src, ctypes.c_size_t(pitch),
                                       ctypes.c_size_t(cols), ctypes.c_size_t(rows), 2, stream),
              "cudaMemcpy2DAsync")
        check(CUDART.cudaStreamSynchronize(stream), "cudaStreamSynchronize")
    return host.raw


class DeviceModeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="zerohop-pydev-")
        self.name = "pydev-" + self.id().rsplit(".", 1)[-1][:40]
        self.proc = subprocess.Popen([ARGS.publisher, self.name, self.dir, "8"], stdout=subprocess.PIPE, text=True)
        said, _, _ = select.select([self.proc.stdout], [], [], 20.0)  # a hang guard for "ready"
        line = self.proc.stdout.readline().strip() if said else "nothing within 20 s"
        if line.startswith("nogpu"):
            self.tearDown()
            raise unittest.SkipTest(line)
        self.assertEqual(line, "ready")
        self.sub = zerohop.Subscriber(self.name, directory=self.dir)

    def tearDown(self):
        if getattr(self, "sub", None) is not None:
            self.sub.close()
            self.sub = None
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def next_frame(self):
        f = self.sub.next(timeout=5.0)
        self.assertIsNotNone(f, "no frame within 5 s")
        return f

    def test_info_says_device_memory(self):
        self.assertEqual(self.sub.info["memory"], "device")
        f = self.next_frame()
        with f:
            self.assertEqual(f.memory, "device")
            self.assertEqual(f.__dlpack_device__(), (KDLCUDA, 0))
            self.assertEqual(f.planes[1].__dlpack_device__(), (KDLCUDA, 0))

    def test_forced_copy_reads_every_byte_from_this_readers_own_buffer(self):
        """device_access="copy" (the fallback for GPUs without peer access, forced on one GPU): the info
        says so and why, the frames are the pattern, and the planes are not the ring's slots."""
        copy = zerohop.Subscriber(self.name, directory=self.dir, device=0, device_access="copy")
        try:
            info = copy.info
            self.assertEqual((info["ring_device"], info["reader_device"], info["device_access"]), (0, 0, "copy"))
            self.assertTrue(info["device_access_reason"])
            self.assertEqual(self.sub.info["device_access"], "same-gpu")
            checked = 0
            for _ in range(20):
                with copy.next(timeout=5.0) as f:
                    self.assertEqual(f.__dlpack_device__(), (KDLCUDA, 0))
                    ring = self.sub.latest()
                    if ring is not None and ring.seq == f.seq:
                        self.assertNotEqual(self.plane_pointer(f.planes[0]), self.plane_pointer(ring.planes[0]),
                                            "the copy reader got the ring's own slot")
                    if ring is not None:
                        ring.release()
                    if self.verify(f, versioned=False, stream=None):
                        checked += 1
            self.assertGreaterEqual(checked, 15)
        finally:
            copy.close()

    def verify(self, f, versioned, stream):
        """Exports both planes as a consumer would, checks the tensors and every byte."""
        kwargs = {"max_version": (1, 0)} if versioned else {}
        for index, plane in enumerate(f.planes):
            capsule = plane.__dlpack__(stream=stream, **kwargs)
            managed, t = open_capsule(capsule, versioned)
            self.assertEqual((t.device.device_type, t.device.device_id), (KDLCUDA, 0))
            self.assertEqual(t.ndim, 2)
            self.assertEqual((t.dtype.code, t.dtype.bits, t.dtype.lanes), (1, 8, 1))  # uint8
            rows, cols = (48, 96) if index == 0 else (24, 96)
            self.assertEqual((t.shape[0], t.shape[1]), (rows, cols))
            self.assertEqual(t.strides[1], 1)
            self.assertGreaterEqual(t.strides[0], cols)  # the ring's pitch, zero-copy
            if versioned:
                self.assertEqual((managed.major, managed.minor), (1, 0))
                self.assertTrue(managed.flags & 1, "read-only flag")
            got = copy_back(t, None if stream in (None, 1) else ctypes.c_void_p(stream))
            self.assertEqual(got, pattern_rows(f.seq, index, rows, cols),
                             "plane %d of seq %d differs from the pattern" % (index, f.seq))
            del capsule  # never consumed: the capsule's destructor frees the tensor
        return f.valid()

    def test_legacy_capsule_on_the_default_stream_reads_the_frame(self):
        checked = 0
        for _ in range(40):
            with self.next_frame() as f:
                if self.verify(f, versioned=False, stream=None):
                    checked += 1
        self.assertGreaterEqual(checked, 30)

    def test_versioned_capsule_on_a_consumer_stream_reads_the_frame(self):
        stream = ctypes.c_void_p()
        check(CUDART.cudaStreamCreate(ctypes.byref(stream)), "cudaStreamCreate")
        try:
            checked = 0
            for _ in range(40):
                with self.next_frame() as f:
                    if self.verify(f, versioned=True, stream=stream.value):
                        checked += 1
            self.assertGreaterEqual(checked, 30)
        finally:
            CUDART.cudaStreamDestroy(stream)

    def plane_pointer(self, plane):
        """The device address a consumer is given for this plane (from a capsule it never consumes)."""
        capsule = plane.__dlpack__(stream=-1)
        _, t = open_capsule(capsule, False)
        ptr = t.data + t.byte_offset
        del capsule
        return ptr

    def consume(self, from_dlpack, data_ptr, to_bytes):
        """A real consumer (torch / cupy): zero-copy (same device address), right shape, right bytes."""
        checked = 0
        for _ in range(20):
            with self.next_frame() as f:
                for index, plane in enumerate(f.planes):
                    x = from_dlpack(plane)
                    rows, cols = (48, 96) if index == 0 else (24, 96)
                    self.assertEqual(tuple(x.shape), (rows, cols))
                    self.assertEqual(data_ptr(x), self.plane_pointer(plane), "the consumer copied the plane")
                    got = to_bytes(x)
                    if f.valid():
                        self.assertEqual(got, pattern_rows(f.seq, index, rows, cols),
                                         "plane %d of seq %d differs from the pattern" % (index, f.seq))
                if f.valid():
                    checked += 1
        self.assertGreaterEqual(checked, 15)

    # torch / cupy are imported here, after setUp created the Subscriber (and so loaded the CUDA
    # driver): the order that crashed their import while the module exported its static libstdc++
    # (python/CMakeLists.txt). The GPU machine's python3 (/opt/torch/.venv) has torch and cupy.
    def test_torch_from_dlpack_is_zero_copy(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch is not installed")
        if not torch.cuda.is_available():
            self.skipTest("torch sees no CUDA device")
        self.consume(torch.from_dlpack, lambda x: x.data_ptr(), lambda x: x.cpu().numpy().tobytes())

    def test_cupy_from_dlpack_is_zero_copy(self):
        try:
            import cupy
        except ImportError:
            self.skipTest("cupy is not installed")
        self.consume(cupy.from_dlpack, lambda x: x.data.ptr, lambda x: cupy.asnumpy(x).tobytes())

    def test_stream_zero_and_host_views_are_refused(self):
        with self.next_frame() as f:
            with self.assertRaises(zerohop.InvalidArgumentError):
                f.__dlpack__(stream=0)
            with self.assertRaises((zerohop.Error, BufferError)):  # pybind11 reports it as BufferError
                memoryview(f.planes[0])
            f.__dlpack__(stream=-1)  # the consumer synchronises itself: allowed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--publisher", required=True)
    args, rest = parser.parse_known_args()
    ARGS.publisher = args.publisher
    if CUDART is None:
        print("SKIP: libcudart not found (ctypes)")
        sys.exit(77)
    result = unittest.main(argv=[sys.argv[0]] + rest, exit=False).result
    if result.testsRun > 0 and len(result.skipped) == result.testsRun:
        sys.exit(77)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
