#pragma once
// Internal: a move-only owner for each nvJPEG handle type (library handle, decoder, state, pinned and
// device buffers, parsed stream, decode parameters). The destructor calls the library's destroy
// function, logs a failure and never throws; a moved-from owner holds nothing.
// Thread-safety: thread-bound while used; distinct owners are independent.

#include "gpu/jpeg_library.hpp"
#include "gpu/owned_handle.hpp"

namespace zerohop::jpeg {

// nvJPEG's destroy calls report through logIfFailed (jpeg_library.hpp).
inline void reportDestroy(nvjpegStatus_t status, const char* call) noexcept { logIfFailed(status, call); }
template <typename H>
using Owned = OwnedHandle<H, nvjpegStatus_t, &reportDestroy>;

using LibraryHandle = Owned<nvjpegHandle_t>;
using DecoderHandle = Owned<nvjpegJpegDecoder_t>;
using StateHandle = Owned<nvjpegJpegState_t>;
using PinnedBufferHandle = Owned<nvjpegBufferPinned_t>;
using DeviceBufferHandle = Owned<nvjpegBufferDevice_t>;
using StreamHandle = Owned<nvjpegJpegStream_t>;
using ParamsHandle = Owned<nvjpegDecodeParams_t>;

/// Factories: each throws Error naming the nvJPEG call and its status.
LibraryHandle createLibraryHandle(const Library& lib, nvjpegBackend_t backend);
DecoderHandle createDecoder(const Library& lib, nvjpegHandle_t handle, nvjpegBackend_t backend);
StateHandle createDecoderState(const Library& lib, nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder);
StateHandle createBatchedState(const Library& lib, nvjpegHandle_t handle);
PinnedBufferHandle createPinnedBuffer(const Library& lib, nvjpegHandle_t handle);
DeviceBufferHandle createDeviceBuffer(const Library& lib, nvjpegHandle_t handle);
StreamHandle createJpegStream(const Library& lib, nvjpegHandle_t handle);
ParamsHandle createDecodeParams(const Library& lib, nvjpegHandle_t handle, nvjpegOutputFormat_t format);

/// A hardware-backend handle with `info` = "N engines x M cores", or an empty handle with `info`
/// saying why there is none (no engines: NVJPEG_STATUS_ARCH_MISMATCH). Never throws.
LibraryHandle tryHardwareHandle(const Library& lib, std::string& info) noexcept;

/// "hardware", "gpu-hybrid", "hybrid", "default".
const char* backendText(nvjpegBackend_t backend) noexcept;

}  // namespace zerohop::jpeg
