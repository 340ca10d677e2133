#include "gpu/jpeg_handles.hpp"

#include <string>

#include "zerohop/error.hpp"

namespace zerohop::jpeg {

const char* backendText(nvjpegBackend_t backend) noexcept {
  switch (backend) {
    case NVJPEG_BACKEND_HARDWARE: return "hardware";
    case NVJPEG_BACKEND_GPU_HYBRID: return "gpu-hybrid";
    case NVJPEG_BACKEND_HYBRID: return "hybrid";
    case NVJPEG_BACKEND_DEFAULT: return "default";
    default: return "other";
  }
}

LibraryHandle createLibraryHandle(const Library& lib, nvjpegBackend_t backend) {
  nvjpegHandle_t h = nullptr;
  check(lib.createEx(backend, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &h), "nvjpegCreateEx",
        std::string("backend ") + backendText(backend));
  return {h, lib.destroy, "nvjpegDestroy"};
}

DecoderHandle createDecoder(const Library& lib, nvjpegHandle_t handle, nvjpegBackend_t backend) {
  nvjpegJpegDecoder_t d = nullptr;
  check(lib.decoderCreate(handle, backend, &d), "nvjpegDecoderCreate", std::string("backend ") + backendText(backend));
  return {d, lib.decoderDestroy, "nvjpegDecoderDestroy"};
}

StateHandle createDecoderState(const Library& lib, nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder) {
  nvjpegJpegState_t s = nullptr;
  check(lib.decoderStateCreate(handle, decoder, &s), "nvjpegDecoderStateCreate");
  return {s, lib.jpegStateDestroy, "nvjpegJpegStateDestroy"};
}

StateHandle createBatchedState(const Library& lib, nvjpegHandle_t handle) {
  nvjpegJpegState_t s = nullptr;
  check(lib.jpegStateCreate(handle, &s), "nvjpegJpegStateCreate");
  return {s, lib.jpegStateDestroy, "nvjpegJpegStateDestroy"};
}

PinnedBufferHandle createPinnedBuffer(const Library& lib, nvjpegHandle_t handle) {
  nvjpegBufferPinned_t b = nullptr;
  check(lib.bufferPinnedCreate(handle, nullptr, &b), "nvjpegBufferPinnedCreate");
  return {b, lib.bufferPinnedDestroy, "nvjpegBufferPinnedDestroy"};
}

DeviceBufferHandle createDeviceBuffer(const Library& lib, nvjpegHandle_t handle) {
  nvjpegBufferDevice_t b = nullptr;
  check(lib.bufferDeviceCreate(handle, nullptr, &b), "nvjpegBufferDeviceCreate");
  return {b, lib.bufferDeviceDestroy, "nvjpegBufferDeviceDestroy"};
}

StreamHandle createJpegStream(const Library& lib, nvjpegHandle_t handle) {
  nvjpegJpegStream_t s = nullptr;
  check(lib.jpegStreamCreate(handle, &s), "nvjpegJpegStreamCreate");
  return {s, lib.jpegStreamDestroy, "nvjpegJpegStreamDestroy"};
}

ParamsHandle createDecodeParams(const Library& lib, nvjpegHandle_t handle, nvjpegOutputFormat_t format) {
  nvjpegDecodeParams_t p = nullptr;
  check(lib.decodeParamsCreate(handle, &p), "nvjpegDecodeParamsCreate");
  ParamsHandle owned{p, lib.decodeParamsDestroy, "nvjpegDecodeParamsDestroy"};
  check(lib.decodeParamsSetOutputFormat(p, format), "nvjpegDecodeParamsSetOutputFormat");
  return owned;
}

LibraryHandle tryHardwareHandle(const Library& lib, std::string& info) noexcept {
  try {
    LibraryHandle h = createLibraryHandle(lib, NVJPEG_BACKEND_HARDWARE);
    unsigned engines = 0, cores = 0;
    if (lib.getHardwareDecoderInfo(h.get(), &engines, &cores) == NVJPEG_STATUS_SUCCESS) {
      info = std::to_string(engines) + " engines x " + std::to_string(cores) + " cores";
    } else {
      info = "engine count unknown";
    }
    return h;
  } catch (const Error& e) {
    info = std::string("no hardware JPEG decoder: ") + e.what();
    return {};
  }
}

}  // namespace zerohop::jpeg
