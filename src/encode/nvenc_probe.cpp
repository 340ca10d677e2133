// probeNvenc(): the real probe, built when nv-codec-headers were found (ZEROHOP_NVENC_HEADERS_DIR).
// Everything is loaded at run time: libnvidia-encode.so.1 and libcuda.so.1 through dlopen.
#include <nvEncodeAPI.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "cuda_driver.hpp"
#include "nvenc_status.hpp"
#include "shared_library.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/nvenc.hpp"

namespace zerohop {
namespace {

using encode::CudaDriver;
using encode::SharedLibrary;

constexpr std::uint32_t kBuiltApi = (NVENCAPI_MAJOR_VERSION << 4) | NVENCAPI_MINOR_VERSION;

using GetMaxSupportedVersionFn = NVENCSTATUS(NVENCAPI*)(std::uint32_t*);
using CreateInstanceFn = NVENCSTATUS(NVENCAPI*)(NV_ENCODE_API_FUNCTION_LIST*);

// One encode session; destroyed with nvEncDestroyEncoder even after a failed open, as the SDK asks
// ("if the creation of encoder session fails, the client must call NvEncDestroyEncoder").
class EncodeSession {
 public:
  explicit EncodeSession(const NV_ENCODE_API_FUNCTION_LIST& api) : api_(api) {}
  ~EncodeSession() {
    if (encoder_ == nullptr) return;
    if (const NVENCSTATUS st = api_.nvEncDestroyEncoder(encoder_); st != NV_ENC_SUCCESS) {
      log::warn("nvEncDestroyEncoder failed: ", encode::nvencStatusName(st));
    }
  }
  EncodeSession(const EncodeSession&) = delete;
  EncodeSession& operator=(const EncodeSession&) = delete;

  void** out() noexcept { return &encoder_; }
  void* get() const noexcept { return encoder_; }

 private:
  const NV_ENCODE_API_FUNCTION_LIST& api_;
  void* encoder_ = nullptr;
};

NvencAvailability unavailable(NvencAvailability a, std::string status, std::string reason) {
  a.available = false;
  a.status = std::move(status);
  a.reason = std::move(reason);
  return a;
}

bool sameGuid(const GUID& a, const GUID& b) { return std::memcmp(&a, &b, sizeof(GUID)) == 0; }

}  // namespace

NvencAvailability probeNvenc(int device) {
  NvencAvailability a;
  a.device = device < 0 ? 0 : device;
  a.builtApi = encode::nvencApiVersionText(kBuiltApi);

  // 1. The encode library (part of the driver: libnvidia-encode-<ver> on Debian/Ubuntu).
  SharedLibrary library = SharedLibrary::open(encode::kNvencLibraryName);
  if (!library) return unavailable(a, "dlopen", encode::nvencLibraryFailureReason(library.error()));
  auto getMax = reinterpret_cast<GetMaxSupportedVersionFn>(library.symbol("NvEncodeAPIGetMaxSupportedVersion"));
  auto create = reinterpret_cast<CreateInstanceFn>(library.symbol("NvEncodeAPICreateInstance"));
  if (getMax == nullptr || create == nullptr) {
    return unavailable(a, "dlsym",
                       std::string(encode::kNvencLibraryName) + " lacks " +
                           (getMax == nullptr ? "NvEncodeAPIGetMaxSupportedVersion" : "NvEncodeAPICreateInstance") +
                           ": " + encode::nvencDriverTooOldReason(kBuiltApi, 0));
  }

  // 2. The API version the driver offers against the one we were built with.
  std::uint32_t driverApi = 0;
  if (const NVENCSTATUS st = getMax(&driverApi); st != NV_ENC_SUCCESS) {
    return unavailable(a, encode::nvencStatusName(st),
                       encode::nvencFailureReason("NvEncodeAPIGetMaxSupportedVersion", st, kBuiltApi));
  }
  a.driverApi = encode::nvencApiVersionText(driverApi);
  if (driverApi < kBuiltApi) {
    return unavailable(a, "NV_ENC_ERR_INVALID_VERSION", encode::nvencDriverTooOldReason(kBuiltApi, driverApi));
  }
  NV_ENCODE_API_FUNCTION_LIST api{};
  api.version = NV_ENCODE_API_FUNCTION_LIST_VER;
  if (const NVENCSTATUS st = create(&api); st != NV_ENC_SUCCESS) {
    return unavailable(a, encode::nvencStatusName(st), encode::nvencFailureReason("NvEncodeAPICreateInstance", st, kBuiltApi));
  }

  // 3. The CUDA device and its primary context (the one the CUDA runtime and our kernels use).
  std::string whyNot;
  const CudaDriver* cuda = CudaDriver::load(&whyNot);
  if (cuda == nullptr) return unavailable(a, "dlopen", encode::noCudaDeviceReason(whyNot));
  if (const CUresult r = cuda->init(0); r != CUDA_SUCCESS) {
    return unavailable(a, cuda->errorName(r), encode::noCudaDeviceReason("cuInit: " + cuda->errorName(r)));
  }
  int count = 0;
  if (const CUresult r = cuda->deviceGetCount(&count); r != CUDA_SUCCESS) {
    return unavailable(a, cuda->errorName(r), encode::noCudaDeviceReason("cuDeviceGetCount: " + cuda->errorName(r)));
  }
  if (count == 0) return unavailable(a, "CUDA_ERROR_NO_DEVICE", encode::noCudaDeviceReason());
  if (a.device >= count) {
    return unavailable(a, "CUDA_ERROR_INVALID_DEVICE",
                       encode::noCudaDeviceReason("device " + std::to_string(a.device) + " requested, " +
                                                  std::to_string(count) + " present"));
  }
  CUdevice dev = 0;
  if (const CUresult r = cuda->deviceGet(&dev, a.device); r != CUDA_SUCCESS) {
    return unavailable(a, cuda->errorName(r), encode::noCudaDeviceReason("cuDeviceGet: " + cuda->errorName(r)));
  }
  char name[256] = {};
  if (cuda->deviceGetName(name, sizeof(name) - 1, dev) == CUDA_SUCCESS) a.deviceName = name;

  try {
    encode::PrimaryContext context(*cuda, dev);
    encode::ScopedCurrentContext current(*cuda, context.get());

    // 4. One encode session on that context, as the encoder would open it.
    NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS params{};
    params.version = NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS_VER;
    params.deviceType = NV_ENC_DEVICE_TYPE_CUDA;
    params.device = context.get();
    params.apiVersion = NVENCAPI_VERSION;
    EncodeSession session(api);
    if (const NVENCSTATUS st = api.nvEncOpenEncodeSessionEx(&params, session.out()); st != NV_ENC_SUCCESS) {
      return unavailable(a, encode::nvencStatusName(st),
                         encode::nvencFailureReason("nvEncOpenEncodeSessionEx", st, kBuiltApi));
    }

    // 5. The codecs it offers.
    std::uint32_t guidCount = 0;
    if (const NVENCSTATUS st = api.nvEncGetEncodeGUIDCount(session.get(), &guidCount); st != NV_ENC_SUCCESS) {
      return unavailable(a, encode::nvencStatusName(st),
                         encode::nvencFailureReason("nvEncGetEncodeGUIDCount", st, kBuiltApi));
    }
    std::vector<GUID> guids(guidCount);
    std::uint32_t filled = 0;
    if (guidCount > 0) {
      if (const NVENCSTATUS st = api.nvEncGetEncodeGUIDs(session.get(), guids.data(), guidCount, &filled);
          st != NV_ENC_SUCCESS) {
        return unavailable(a, encode::nvencStatusName(st),
                           encode::nvencFailureReason("nvEncGetEncodeGUIDs", st, kBuiltApi));
      }
    }
    for (std::uint32_t i = 0; i < filled && i < guidCount; ++i) {
      a.h264 = a.h264 || sameGuid(guids[i], NV_ENC_CODEC_H264_GUID);
      a.hevc = a.hevc || sameGuid(guids[i], NV_ENC_CODEC_HEVC_GUID);
    }
  } catch (const Error& e) {  // cuDevicePrimaryCtxRetain / cuCtxPushCurrent refused
    return unavailable(a, "CUDA", encode::noCudaDeviceReason(e.what()));
  }
  if (!a.h264) {
    return unavailable(a, "NV_ENC_CODEC_H264_GUID",
                       "this GPU's encoder does not offer H.264 (nvEncGetEncodeGUIDs lists no NV_ENC_CODEC_H264_GUID)");
  }
  a.available = true;
  return a;
}

}  // namespace zerohop
