// libzerohop-nvrtc-compat.so: NVRTC as GStreamer 1.22's CUDA elements call it, on a CUDA 13 toolkit.
//
// GStreamer 1.22 (Debian 12) compiles the kernels of nvcodec's cudaconvert and cudascale at run time
// with NVRTC and asks for `--gpu-architecture=compute_52` (gst_cuda_nvrtc_compile). CUDA 13's NVRTC
// targets compute_75 and newer and refuses that option, so with only a CUDA 13 toolkit those elements
// cannot start. This library has NVRTC's C ABI for the calls GStreamer makes, forwards each one to the
// real libnvrtc, and raises a virtual or real architecture the real one does not target to the lowest
// one it does. The result is PTX that the driver compiles for the GPU at load time, as it would have
// compiled compute_52 PTX; every GPU CUDA 13 supports is at least compute_75.
//
// Use it through GStreamer's own variable: GST_CUDA_NVRTC_LIBNAME=/path/to/libzerohop-nvrtc-compat.so.
// The real NVRTC: ZEROHOP_NVRTC_LIBNAME if set, else libnvrtc.so.13, .so.12, .so.11.2, libnvrtc.so
// from the loader's search path. Options it leaves as they are: an architecture the real NVRTC
// targets, and everything but -arch / --gpu-architecture.
//
// Thread-safety: thread-safe (the real library is opened once, under std::call_once; NVRTC's own
// calls are thread-safe for distinct programs).
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#define ZH_NVRTC_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct RealNvrtc {
  void* handle = nullptr;
  std::string name;
  int lowestArch = 0;  // 0: unknown (the real library cannot list its architectures): nothing is rewritten
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcGetPTXSize) ptxSize = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetCUBINSize) cubinSize = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetProgramLogSize) logSize = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetErrorString) errorString = nullptr;
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetNumSupportedArchs) numArchs = nullptr;
  decltype(&nvrtcGetSupportedArchs) archs = nullptr;
};

template <typename F>
void bind(void* handle, const char* symbol, F& out) {
  out = reinterpret_cast<F>(dlsym(handle, symbol));
}

RealNvrtc openReal() {
  RealNvrtc r;
  std::vector<std::string> names;
  if (const char* env = std::getenv("ZEROHOP_NVRTC_LIBNAME"); env && *env) names.emplace_back(env);
  for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"})
    names.emplace_back(n);
  std::string tried;
  for (const auto& n : names) {
    r.handle = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (r.handle) {
      r.name = n;
      break;
    }
    tried += (tried.empty() ? "" : "; ") + std::string(dlerror());
  }
  if (!r.handle) {
    std::fprintf(
        stderr,
        "zerohop-nvrtc-compat: no NVRTC library to forward to (%s); install the CUDA toolkit's NVRTC "
        "and put its lib folder on LD_LIBRARY_PATH, or set ZEROHOP_NVRTC_LIBNAME to the library\n",
        tried.c_str());
    return r;
  }
  bind(r.handle, "nvrtcCreateProgram", r.create);
  bind(r.handle, "nvrtcCompileProgram", r.compile);
  bind(r.handle, "nvrtcDestroyProgram", r.destroy);
  bind(r.handle, "nvrtcGetPTXSize", r.ptxSize);
  bind(r.handle, "nvrtcGetPTX", r.ptx);
  bind(r.handle, "nvrtcGetCUBINSize", r.cubinSize);
  bind(r.handle, "nvrtcGetCUBIN", r.cubin);
  bind(r.handle, "nvrtcGetProgramLogSize", r.logSize);
  bind(r.handle, "nvrtcGetProgramLog", r.log);
  bind(r.handle, "nvrtcGetErrorString", r.errorString);
  bind(r.handle, "nvrtcVersion", r.version);
  bind(r.handle, "nvrtcGetNumSupportedArchs", r.numArchs);
  bind(r.handle, "nvrtcGetSupportedArchs", r.archs);
  int n = 0;
  if (r.numArchs && r.archs && r.numArchs(&n) == NVRTC_SUCCESS && n > 0) {
    std::vector<int> list(static_cast<std::size_t>(n));
    if (r.archs(list.data()) == NVRTC_SUCCESS) r.lowestArch = *std::min_element(list.begin(), list.end());
  }
  return r;
}

const RealNvrtc& real() {
  static std::once_flag once;
  static RealNvrtc r;
  std::call_once(once, [] { r = openReal(); });
  return r;
}

// "compute_52" / "sm_52" below `lowest` -> the same prefix with `lowest`; anything else unchanged.
std::string raiseArch(std::string_view value, int lowest) {
  for (std::string_view prefix : {"compute_", "sm_", "lto_"}) {
    if (!value.starts_with(prefix)) continue;
    const std::string digits(value.substr(prefix.size()));
    char* end = nullptr;
    const long arch = std::strtol(digits.c_str(), &end, 10);
    if (end == digits.c_str() || *end != '\0' || arch >= lowest) return std::string(value);
    return std::string(prefix) + std::to_string(lowest);
  }
  return std::string(value);
}

/// The options with every architecture below `lowest` raised to it: `--gpu-architecture=X`,
/// `-arch=X`, and both spelled as two options (`-arch X`). `lowest` 0 leaves them all unchanged.
std::vector<std::string> raiseArchitectures(const std::vector<std::string>& options, int lowest) {
  std::vector<std::string> out;
  out.reserve(options.size());
  bool valueNext = false;
  for (const auto& o : options) {
    std::string_view v(o);
    if (lowest <= 0) {
      out.push_back(o);
    } else if (valueNext) {
      out.push_back(raiseArch(v, lowest));
    } else if (const auto eq = v.find('=');
               eq != std::string_view::npos &&
               (v.substr(0, eq) == "--gpu-architecture" || v.substr(0, eq) == "-arch")) {
      out.push_back(std::string(v.substr(0, eq + 1)) + raiseArch(v.substr(eq + 1), lowest));
    } else {
      out.push_back(o);
    }
    valueNext = lowest > 0 && !valueNext && (v == "--gpu-architecture" || v == "-arch");
  }
  return out;
}

}  // namespace

ZH_NVRTC_EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name,
                                               int numHeaders, const char* const* headers,
                                               const char* const* includeNames) {
  const auto& r = real();
  return r.create ? r.create(prog, src, name, numHeaders, headers, includeNames) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                                const char* const* options) {
  const auto& r = real();
  if (!r.compile) return NVRTC_ERROR_INTERNAL_ERROR;
  std::vector<std::string> in(options, options + std::max(numOptions, 0));
  const auto raised = raiseArchitectures(in, r.lowestArch);
  std::vector<const char*> argv;
  argv.reserve(raised.size());
  for (const auto& o : raised) argv.push_back(o.c_str());
  return r.compile(prog, static_cast<int>(argv.size()), argv.data());
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  const auto& r = real();
  return r.destroy ? r.destroy(prog) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t* size) {
  const auto& r = real();
  return r.ptxSize ? r.ptxSize(prog, size) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char* ptx) {
  const auto& r = real();
  return r.ptx ? r.ptx(prog, ptx) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* size) {
  const auto& r = real();
  return r.cubinSize ? r.cubinSize(prog, size) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* cubin) {
  const auto& r = real();
  return r.cubin ? r.cubin(prog, cubin) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* size) {
  const auto& r = real();
  return r.logSize ? r.logSize(prog, size) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* log) {
  const auto& r = real();
  return r.log ? r.log(prog, log) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT const char* nvrtcGetErrorString(nvrtcResult result) {
  const auto& r = real();
  return r.errorString ? r.errorString(result) : "zerohop-nvrtc-compat: no NVRTC library to forward to";
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcVersion(int* major, int* minor) {
  const auto& r = real();
  return r.version ? r.version(major, minor) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcGetNumSupportedArchs(int* numArchs) {
  const auto& r = real();
  return r.numArchs ? r.numArchs(numArchs) : NVRTC_ERROR_INTERNAL_ERROR;
}

ZH_NVRTC_EXPORT nvrtcResult nvrtcGetSupportedArchs(int* archs) {
  const auto& r = real();
  return r.archs ? r.archs(archs) : NVRTC_ERROR_INTERNAL_ERROR;
}
