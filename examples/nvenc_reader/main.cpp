// Encodes another process's device frames with an NVENC session of your own: the frames stay in VRAM.
//   nvenc_reader NAME [--out FILE.h264] [--frames N] [--fps F] [--kbps K] [--copy]
// next to `zerohop serve --gpu 0 --share NAME` (NV12 in GPU memory). docs/plugin-guide.md walks through it.
//
// Per frame: zh_reader_next -> zh_frame_wait_on_stream(frame, our stream) -> NvEncRegisterResource
// (CUDADEVICEPTR, NV12, the share's pitch; once per slot) -> NvEncMapInputResource -> NvEncEncodePicture
// -> NvEncLockBitstream (returns once NVENC has read the input and written the unit) -> unmap ->
// zh_frame_check -> the lease goes. With --copy each frame is first copied on the GPU into a surface of
// our own and the lease goes right after that copy.
//
// Written to the NVENC API 11.1 headers (nv-codec-headers); it has NOT run on a GPU with an encoder yet.
// libcuda.so.1 and libnvidia-encode.so.1 are loaded with dlopen: without them it exits 3 saying why.
// Uses the C API (zerohop/zerohop.h), the ABI-stable surface for plugins built with another toolchain.
#include <dlfcn.h>
#include <dynlink_cuda.h>  // nv-codec-headers: the CUDA driver API types, no CUDA toolkit
#include <nvEncodeAPI.h>
#include <zerohop/zerohop.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

// Exit codes: 1 zerohop or CUDA/NVENC failure, 2 usage, 3 this machine cannot encode (no driver, no NVENC).
struct CannotEncode : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void* symbol(void* lib, const char* name, const char* libName) {
  void* f = dlsym(lib, name);
  if (!f) throw CannotEncode(std::string(libName) + " has no " + name + ": update the NVIDIA driver");
  return f;
}

// The few CUDA driver calls we need, from libcuda.so.1 (the driver's library; no CUDA toolkit needed).
struct Cuda {
  tcuInit* init;
  tcuDeviceGet* deviceGet;
  tcuDevicePrimaryCtxRetain* primaryCtxRetain;
  tcuDevicePrimaryCtxRelease* primaryCtxRelease;
  tcuCtxPushCurrent_v2* ctxPush;
  tcuCtxPopCurrent_v2* ctxPop;
  tcuStreamCreate* streamCreate;
  tcuStreamDestroy_v2* streamDestroy;
  tcuStreamSynchronize* streamSynchronize;
  tcuMemAllocPitch_v2* memAllocPitch;
  tcuMemFree_v2* memFree;
  tcuMemcpy2DAsync_v2* memcpy2DAsync;
  tcuGetErrorName* errorName;

  static Cuda load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw CannotEncode(std::string("libcuda.so.1 could not be loaded: install the NVIDIA driver (") + dlerror() + ")");
    auto f = [&](const char* name) { return symbol(lib, name, "libcuda.so.1"); };
    return Cuda{reinterpret_cast<tcuInit*>(f("cuInit")),
                reinterpret_cast<tcuDeviceGet*>(f("cuDeviceGet")),
                reinterpret_cast<tcuDevicePrimaryCtxRetain*>(f("cuDevicePrimaryCtxRetain")),
                reinterpret_cast<tcuDevicePrimaryCtxRelease*>(f("cuDevicePrimaryCtxRelease_v2")),
                reinterpret_cast<tcuCtxPushCurrent_v2*>(f("cuCtxPushCurrent_v2")),
                reinterpret_cast<tcuCtxPopCurrent_v2*>(f("cuCtxPopCurrent_v2")),
                reinterpret_cast<tcuStreamCreate*>(f("cuStreamCreate")),
                reinterpret_cast<tcuStreamDestroy_v2*>(f("cuStreamDestroy_v2")),
                reinterpret_cast<tcuStreamSynchronize*>(f("cuStreamSynchronize")),
                reinterpret_cast<tcuMemAllocPitch_v2*>(f("cuMemAllocPitch_v2")),
                reinterpret_cast<tcuMemFree_v2*>(f("cuMemFree_v2")),
                reinterpret_cast<tcuMemcpy2DAsync_v2*>(f("cuMemcpy2DAsync_v2")),
                reinterpret_cast<tcuGetErrorName*>(f("cuGetErrorName"))};
  }
  void check(CUresult r, const char* call) const {
    if (r == CUDA_SUCCESS) return;
    const char* name = "?";
    errorName(r, &name);
    throw std::runtime_error(std::string(call) + " failed: " + name);
  }
};

// libnvidia-encode.so.1's function list (NVENC API 11.1 or newer in the driver).
NV_ENCODE_API_FUNCTION_LIST loadNvenc() {
  void* lib = dlopen("libnvidia-encode.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    throw CannotEncode(std::string("libnvidia-encode.so.1 could not be loaded: install the NVIDIA driver's encode "
                                   "library (e.g. libnvidia-encode-<version>) (") + dlerror() + ")");
  }
  using MaxVersion = NVENCSTATUS(NVENCAPI*)(uint32_t*);
  using CreateInstance = NVENCSTATUS(NVENCAPI*)(NV_ENCODE_API_FUNCTION_LIST*);
  uint32_t driverApi = 0;
  reinterpret_cast<MaxVersion>(symbol(lib, "NvEncodeAPIGetMaxSupportedVersion", "libnvidia-encode.so.1"))(&driverApi);
  if (driverApi < ((NVENCAPI_MAJOR_VERSION << 4) | NVENCAPI_MINOR_VERSION)) {
    throw CannotEncode("the driver offers NVENC API " + std::to_string(driverApi >> 4) + "." +
                       std::to_string(driverApi & 0xf) + ", this program needs 11.1: update the NVIDIA driver");
  }
  NV_ENCODE_API_FUNCTION_LIST api{};
  api.version = NV_ENCODE_API_FUNCTION_LIST_VER;
  const NVENCSTATUS st =
      reinterpret_cast<CreateInstance>(symbol(lib, "NvEncodeAPICreateInstance", "libnvidia-encode.so.1"))(&api);
  if (st != NV_ENC_SUCCESS) throw CannotEncode("NvEncodeAPICreateInstance failed: NVENCSTATUS " + std::to_string(st));
  return api;
}

void nvCheck(NVENCSTATUS st, const char* call) {
  if (st == NV_ENC_SUCCESS) return;
  if (st == NV_ENC_ERR_NO_ENCODE_DEVICE || st == NV_ENC_ERR_UNSUPPORTED_DEVICE) {
    throw CannotEncode(std::string(call) + ": this GPU has no video encoder (NVENCSTATUS " + std::to_string(st) + ")");
  }
  if (st == NV_ENC_ERR_OUT_OF_MEMORY || st == NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY) {
    throw CannotEncode(std::string(call) + ": session limit reached or no video memory left (a GeForce driver caps "
                       "concurrent NVENC sessions: close another encoder)");
  }
  throw std::runtime_error(std::string(call) + " failed: NVENCSTATUS " + std::to_string(st));
}

struct Options {
  std::string name, out = "out.h264";
  long frames = 300;
  unsigned fps = 30, kbps = 4000;
  bool copy = false;
};

// One NVENC H.264 session on the device's primary context (the context the share's mapping and the
// CUDA runtime use), for NV12 frames of one size: baseline, P1 + ultra-low-latency, CBR with a VBV of
// one frame, no B-frames, no periodic IDR, SPS/PPS before every IDR (what WebRTC wants).
class Encoder {
 public:
  Encoder(const Cuda& cu, const NV_ENCODE_API_FUNCTION_LIST& api, int device, uint32_t width, uint32_t height,
          const Options& o)
      : cu_(cu), api_(api), width_(width), height_(height) {
    try {
      open(device, o);
    } catch (...) {
      close();  // what was set up before the failure
      throw;
    }
  }
  ~Encoder() { close(); }
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  void* stream() const { return stream_; }  // a CUstream is a cudaStream_t
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }

  // NVENC keeps a registration per device pointer: one per ring slot. Call before the share's mapping
  // can go (a publisher restart: a new session maps the ring at other addresses).
  void forgetRegistrations() {
    for (auto& [ptr, reg] : registered_) api_.nvEncUnregisterResource(enc_, reg);
    registered_.clear();
  }

 private:
  void open(int device, const Options& o) {
    cu_.check(cu_.init(0), "cuInit");
    cu_.check(cu_.deviceGet(&device_, device), "cuDeviceGet");
    cu_.check(cu_.primaryCtxRetain(&ctx_, device_), "cuDevicePrimaryCtxRetain");
    cu_.check(cu_.ctxPush(ctx_), "cuCtxPushCurrent");  // this thread's context from now on
    cu_.check(cu_.streamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

    NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS open{};
    open.version = NV_ENC_OPEN_ENCODE_SESSION_EX_PARAMS_VER;
    open.deviceType = NV_ENC_DEVICE_TYPE_CUDA;
    open.device = ctx_;
    open.apiVersion = NVENCAPI_VERSION;
    nvCheck(api_.nvEncOpenEncodeSessionEx(&open, &enc_), "NvEncOpenEncodeSessionEx");

    NV_ENC_PRESET_CONFIG preset{};
    preset.version = NV_ENC_PRESET_CONFIG_VER;
    preset.presetCfg.version = NV_ENC_CONFIG_VER;
    nvCheck(api_.nvEncGetEncodePresetConfigEx(enc_, NV_ENC_CODEC_H264_GUID, NV_ENC_PRESET_P1_GUID,
                                              NV_ENC_TUNING_INFO_ULTRA_LOW_LATENCY, &preset),
            "NvEncGetEncodePresetConfigEx");
    NV_ENC_CONFIG config = preset.presetCfg;
    config.profileGUID = NV_ENC_H264_PROFILE_BASELINE_GUID;
    config.gopLength = NVENC_INFINITE_GOPLENGTH;
    config.frameIntervalP = 1;  // no B-frames
    config.rcParams.rateControlMode = NV_ENC_PARAMS_RC_CBR;
    config.rcParams.averageBitRate = config.rcParams.maxBitRate = o.kbps * 1000;
    config.rcParams.vbvBufferSize = config.rcParams.vbvInitialDelay = o.kbps * 1000 / o.fps;  // one frame
    config.encodeCodecConfig.h264Config.idrPeriod = NVENC_INFINITE_GOPLENGTH;
    config.encodeCodecConfig.h264Config.repeatSPSPPS = 1;

    NV_ENC_INITIALIZE_PARAMS init{};
    init.version = NV_ENC_INITIALIZE_PARAMS_VER;
    init.encodeGUID = NV_ENC_CODEC_H264_GUID;
    init.presetGUID = NV_ENC_PRESET_P1_GUID;
    init.tuningInfo = NV_ENC_TUNING_INFO_ULTRA_LOW_LATENCY;
    init.encodeWidth = init.darWidth = init.maxEncodeWidth = width_;
    init.encodeHeight = init.darHeight = init.maxEncodeHeight = height_;
    init.frameRateNum = o.fps;
    init.frameRateDen = 1;
    init.enablePTD = 1;
    init.encodeConfig = &config;
    nvCheck(api_.nvEncInitializeEncoder(enc_, &init), "NvEncInitializeEncoder");
    // NVENC reads its input on stream_, which waits for each frame's ready event (zh_frame_wait_on_stream).
    nvCheck(api_.nvEncSetIOCudaStreams(enc_, &stream_, &stream_), "NvEncSetIOCudaStreams");

    NV_ENC_CREATE_BITSTREAM_BUFFER bitstream{};
    bitstream.version = NV_ENC_CREATE_BITSTREAM_BUFFER_VER;
    nvCheck(api_.nvEncCreateBitstreamBuffer(enc_, &bitstream), "NvEncCreateBitstreamBuffer");
    bitstream_ = bitstream.bitstreamBuffer;
  }

  void close() noexcept {  // reverse order; tolerates a partial set-up
    if (enc_) {
      forgetRegistrations();
      if (surface_) api_.nvEncUnregisterResource(enc_, surfaceReg_);
      if (bitstream_) api_.nvEncDestroyBitstreamBuffer(enc_, bitstream_);
      api_.nvEncDestroyEncoder(enc_);
    }
    if (surface_) cu_.memFree(surface_);
    if (stream_) cu_.streamDestroy(stream_);
    if (ctx_) {
      CUcontext popped = nullptr;
      cu_.ctxPop(&popped);
      cu_.primaryCtxRelease(device_);
    }
  }

 public:

  // The frame in place: registered once per slot (NVENC reads NV12 chroma at base + pitch x height,
  // which is where a zerohop NV12 slot keeps it), mapped, encoded, unmapped.
  size_t encodeInPlace(const zh_frame_info& f, bool idr, FILE* out) {
    auto it = registered_.find(f.planes[0]);
    if (it == registered_.end()) it = registered_.emplace(f.planes[0], registerNv12(f.planes[0], f.pitches[0])).first;
    return encode(it->second, f.pitches[0], f.sequence, idr, out);
  }

  // Copies the frame on the GPU into our own surface, waits for that copy (tens of microseconds), and
  // returns; the caller may release the lease before encodeSurface().
  void copyIn(const zh_frame_info& f) {
    if (!surface_) {
      size_t pitch = 0;
      cu_.check(cu_.memAllocPitch(&surface_, &pitch, width_, height_ * 3 / 2, 16), "cuMemAllocPitch");
      surfacePitch_ = static_cast<uint32_t>(pitch);
      surfaceReg_ = registerNv12(reinterpret_cast<void*>(surface_), surfacePitch_);
    }
    for (int plane = 0; plane < 2; ++plane) {
      CUDA_MEMCPY2D c{};
      c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      c.srcDevice = reinterpret_cast<CUdeviceptr>(f.planes[plane]);
      c.srcPitch = f.pitches[plane];
      c.dstDevice = surface_ + (plane ? size_t{surfacePitch_} * height_ : 0);
      c.dstPitch = surfacePitch_;
      c.WidthInBytes = width_;
      c.Height = plane ? height_ / 2 : height_;
      cu_.check(cu_.memcpy2DAsync(&c, stream_), "cuMemcpy2DAsync");
    }
    cu_.check(cu_.streamSynchronize(stream_), "cuStreamSynchronize");
  }
  size_t encodeSurface(uint64_t sequence, bool idr, FILE* out) {
    return encode(surfaceReg_, surfacePitch_, sequence, idr, out);
  }

 private:
  NV_ENC_REGISTERED_PTR registerNv12(void* devicePtr, uint32_t pitch) {
    NV_ENC_REGISTER_RESOURCE r{};
    r.version = NV_ENC_REGISTER_RESOURCE_VER;
    r.resourceType = NV_ENC_INPUT_RESOURCE_TYPE_CUDADEVICEPTR;
    r.width = width_;
    r.height = height_;
    r.pitch = pitch;
    r.resourceToRegister = devicePtr;
    r.bufferFormat = NV_ENC_BUFFER_FORMAT_NV12;
    r.bufferUsage = NV_ENC_INPUT_IMAGE;
    nvCheck(api_.nvEncRegisterResource(enc_, &r), "NvEncRegisterResource");
    return r.registeredResource;
  }

  // Map, encode, lock (waits until NVENC has read the input and written the unit), write, unlock, unmap.
  size_t encode(NV_ENC_REGISTERED_PTR reg, uint32_t pitch, uint64_t sequence, bool idr, FILE* out) {
    NV_ENC_MAP_INPUT_RESOURCE map{};
    map.version = NV_ENC_MAP_INPUT_RESOURCE_VER;
    map.registeredResource = reg;
    nvCheck(api_.nvEncMapInputResource(enc_, &map), "NvEncMapInputResource");
    NV_ENC_PIC_PARAMS pic{};
    pic.version = NV_ENC_PIC_PARAMS_VER;
    pic.inputWidth = width_;
    pic.inputHeight = height_;
    pic.inputPitch = pitch;
    pic.inputBuffer = map.mappedResource;
    pic.bufferFmt = map.mappedBufferFmt;
    pic.outputBitstream = bitstream_;
    pic.pictureStruct = NV_ENC_PIC_STRUCT_FRAME;
    pic.inputTimeStamp = sequence;
    pic.encodePicFlags = idr ? (NV_ENC_PIC_FLAG_FORCEIDR | NV_ENC_PIC_FLAG_OUTPUT_SPSPPS) : 0;
    NVENCSTATUS st = api_.nvEncEncodePicture(enc_, &pic);
    size_t bytes = 0;
    if (st == NV_ENC_SUCCESS) {
      NV_ENC_LOCK_BITSTREAM lock{};
      lock.version = NV_ENC_LOCK_BITSTREAM_VER;
      lock.outputBitstream = bitstream_;
      st = api_.nvEncLockBitstream(enc_, &lock);
      if (st == NV_ENC_SUCCESS) {
        bytes = lock.bitstreamSizeInBytes;  // one Annex B access unit: hand it to your packetiser here
        std::fwrite(lock.bitstreamBufferPtr, 1, bytes, out);
        api_.nvEncUnlockBitstream(enc_, bitstream_);
      }
    }
    api_.nvEncUnmapInputResource(enc_, map.mappedResource);
    if (st != NV_ENC_ERR_NEED_MORE_INPUT) nvCheck(st, "NvEncEncodePicture/NvEncLockBitstream");
    return bytes;
  }

  const Cuda& cu_;
  const NV_ENCODE_API_FUNCTION_LIST& api_;
  uint32_t width_, height_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  void* enc_ = nullptr;
  NV_ENC_OUTPUT_PTR bitstream_ = nullptr;
  std::map<void*, NV_ENC_REGISTERED_PTR> registered_;
  CUdeviceptr surface_ = 0;
  uint32_t surfacePitch_ = 0;
  NV_ENC_REGISTERED_PTR surfaceReg_ = nullptr;
};

struct ReaderClose {
  void operator()(zh_reader* r) const { zh_reader_close(r); }
};
struct FrameRelease {  // a frame's lease goes when its FramePtr does
  void operator()(zh_frame* f) const { zh_frame_release(f); }
};
using FramePtr = std::unique_ptr<zh_frame, FrameRelease>;
struct FileClose {
  void operator()(FILE* f) const { std::fclose(f); }
};

std::runtime_error zerohopError(const char* call, zh_status st) {
  return std::runtime_error(std::string(call) + ": " + zh_status_name(st) + ": " + zh_last_error());
}

// Attaches to the restarted publisher: zh_reader_reconnect does not wait, so ask again until `timeout`.
void reconnect(zh_reader* reader, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const zh_status st = zh_reader_reconnect(reader);
    if (st == ZH_OK) return;
    if ((st != ZH_ERR_UNAVAILABLE && st != ZH_ERR_NOT_FOUND) || std::chrono::steady_clock::now() > until) {
      throw zerohopError("zh_reader_reconnect", st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a retry interval, not synchronisation
  }
}

int run(const Options& o) {
  // Fail first, and in words, where this machine cannot encode at all.
  const Cuda cu = Cuda::load();
  const NV_ENCODE_API_FUNCTION_LIST api = loadNvenc();

  zh_reader* opened = nullptr;
  zh_status st = zh_reader_open(o.name.c_str(), 10000, &opened);  // waits up to 10 s for the publisher
  if (st != ZH_OK) throw zerohopError("zh_reader_open", st);
  const std::unique_ptr<zh_reader, ReaderClose> reader(opened);
  const std::unique_ptr<FILE, FileClose> out(std::fopen(o.out.c_str(), "wb"));
  if (!out) throw std::runtime_error("cannot write " + o.out + ": " + std::strerror(errno));

  // Declared in this order so that the encoder (its registrations) goes before the frame that keeps the
  // ring mapped, and that frame before the reader.
  FramePtr held;  // in place: the last encoded frame, which keeps the ring mapped while its slots are registered
  std::unique_ptr<Encoder> encoder;
  bool idr = true;           // the first frame, after a restart, after a torn read
  long encoded = 0, torn = 0, restarts = 0;
  while (encoded < o.frames) {
    zh_frame* next = nullptr;
    st = zh_reader_next(reader.get(), 1000, &next);
    if (st == ZH_ERR_TIMEOUT) continue;
    if (st == ZH_ERR_UNAVAILABLE) {  // the publisher went away: drop what points into its ring, wait for the next
      std::fprintf(stderr, "publisher went away (%s); waiting up to 30 s for it to come back\n", zh_last_error());
      if (encoder) encoder->forgetRegistrations();
      held.reset();
      reconnect(reader.get(), std::chrono::seconds(30));
      ++restarts;
      idr = true;
      continue;
    }
    if (st != ZH_OK) throw zerohopError("zh_reader_next", st);
    FramePtr frame(next);

    zh_frame_info f = ZH_FRAME_INFO_INIT;
    zh_frame_get_info(frame.get(), &f);
    if (f.memory != ZH_MEMORY_DEVICE || f.format != ZH_FORMAT_NV12) {
      throw std::runtime_error("share '" + o.name + "' holds " + zh_format_name(f.format) +
                               (f.memory == ZH_MEMORY_DEVICE ? " in GPU memory" : " in host memory") +
                               ", not NV12 in GPU memory: publish it from serve's GPU path (serve --gpu 0 --share NAME)");
    }
    if (encoder && (f.width != encoder->width() || f.height != encoder->height())) {  // a restart at another size
      encoder.reset();  // unregisters the slots while `held` still keeps the ring mapped
      held.reset();
    }
    if (!encoder) encoder = std::make_unique<Encoder>(cu, api, f.cuda_device, f.width, f.height, o);

    // Order our stream (NVENC's input stream) after the publisher's write of this frame: the GPU waits,
    // the host does not.
    if ((st = zh_frame_wait_on_stream(frame.get(), encoder->stream())) != ZH_OK) throw zerohopError("zh_frame_wait_on_stream", st);
    size_t bytes = 0;
    const bool contiguous = f.planes[1] == static_cast<uint8_t*>(f.planes[0]) + size_t{f.pitches[0]} * f.height &&
                            f.pitches[1] == f.pitches[0];
    const bool copy = o.copy || !contiguous;
    if (copy) {
      encoder->copyIn(f);                                  // the copy has completed on return
      const bool intact = zh_frame_check(frame.get()) == ZH_OK;  // was the slot rewritten while we copied?
      frame.reset();                                             // the lease lasted one copy
      if (!intact) {
        ++torn;  // skip it (the copy may be torn): the next frame comes one frame interval later
        continue;
      }
      bytes = encoder->encodeSurface(f.sequence, idr, out.get());
      idr = false;
    } else {
      bytes = encoder->encodeInPlace(f, idr, out.get());         // NVENC has read the slot when this returns
      const bool intact = zh_frame_check(frame.get()) == ZH_OK;  // was it rewritten during the encode?
      torn += intact ? 0 : 1;
      idr = !intact;            // a torn picture is replaced by the next one, an IDR
      held = std::move(frame);  // the previous one's lease goes
    }
    ++encoded;
    if (encoded % 30 == 0 || encoded == 1) {
      std::printf("frame seq %llu %ux%u: %zu bytes (%s)\n", (unsigned long long)f.sequence, f.width, f.height, bytes,
                  copy ? "copied into our surface" : "encoded in place");
    }
  }
  encoder.reset();  // its registrations go before the last lease (and with it the mapping)
  held.reset();
  std::printf("%ld frames encoded into %s, %ld read while rewritten, %ld publisher restarts\n", encoded, o.out.c_str(),
              torn, restarts);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--out" && more) o.out = argv[++i];
    else if (a == "--frames" && more) o.frames = std::atol(argv[++i]);
    else if (a == "--fps" && more) o.fps = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (a == "--kbps" && more) o.kbps = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (a == "--copy") o.copy = true;
    else if (o.name.empty() && a[0] != '-') o.name = a;
    else o.name.clear(), i = argc;
  }
  if (o.name.empty() || o.fps == 0 || o.frames <= 0) {
    std::fprintf(stderr, "usage: %s NAME [--out FILE.h264] [--frames N] [--fps F] [--kbps K] [--copy]\n", argv[0]);
    return 2;
  }
  try {
    return run(o);
  } catch (const CannotEncode& e) {
    std::fprintf(stderr, "nvenc_reader: cannot encode on this machine: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvenc_reader: %s\n", e.what());
    return 1;
  }
}
