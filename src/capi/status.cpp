// zh_last_error, zh_status_name and friends: the C API's error model (status.hpp).
#include "capi/status.hpp"

#include "capi/enum_map.hpp"
#include "capi/handles.hpp"
#include "zerohop/pixel_format.hpp"
#include "zerohop/version.hpp"

namespace zerohop::capi {
namespace {
thread_local std::string lastError;
}  // namespace

zh_status statusOf(Errc code) noexcept {
  switch (code) {
    case Errc::kInvalidArgument: return ZH_ERR_INVALID_ARGUMENT;
    case Errc::kNotFound: return ZH_ERR_NOT_FOUND;
    case Errc::kUnavailable: return ZH_ERR_UNAVAILABLE;
    case Errc::kUnsupported: return ZH_ERR_UNSUPPORTED;
    case Errc::kIo: return ZH_ERR_IO;
    case Errc::kDevice: return ZH_ERR_DEVICE;
    case Errc::kProtocol: return ZH_ERR_PROTOCOL;
    case Errc::kTimeout: return ZH_ERR_TIMEOUT;
    case Errc::kInternal: return ZH_ERR_INTERNAL;
  }
  return ZH_ERR_INTERNAL;
}

zh_status fail(const char* function, zh_status status, const std::string& message) noexcept {
  try {
    lastError = std::string(function) + ": " + message;
  } catch (...) {
    lastError.clear();  // out of memory while reporting: the status still says what happened
  }
  return status;
}

zh_status badHandle(const char* function, const char* what) noexcept {
  return fail(function, ZH_ERR_INVALID_ARGUMENT,
              std::string(what) + " is NULL, already closed or ended, or not a handle this function takes");
}

HandleRegistry<zh_reader>& readers() {
  static HandleRegistry<zh_reader> r;
  return r;
}
HandleRegistry<zh_frame>& frames() {
  static HandleRegistry<zh_frame> r;
  return r;
}
HandleRegistry<zh_publisher>& publishers() {
  static HandleRegistry<zh_publisher> r;
  return r;
}
HandleRegistry<zh_slot>& slots() {
  static HandleRegistry<zh_slot> r;
  return r;
}
HandleRegistry<zh_ready_semaphore>& readySemaphores() {
  static HandleRegistry<zh_ready_semaphore> r;
  return r;
}

}  // namespace zerohop::capi

extern "C" {

const char* zh_version(void) {
  return zerohop::kVersion;
}

const char* zh_last_error(void) {
  return zerohop::capi::lastError.c_str();
}

const char* zh_status_name(zh_status status) {
  switch (status) {
    case ZH_OK: return "ZH_OK";
    case ZH_ERR_INVALID_ARGUMENT: return "ZH_ERR_INVALID_ARGUMENT";
    case ZH_ERR_NOT_FOUND: return "ZH_ERR_NOT_FOUND";
    case ZH_ERR_UNAVAILABLE: return "ZH_ERR_UNAVAILABLE";
    case ZH_ERR_UNSUPPORTED: return "ZH_ERR_UNSUPPORTED";
    case ZH_ERR_IO: return "ZH_ERR_IO";
    case ZH_ERR_DEVICE: return "ZH_ERR_DEVICE";
    case ZH_ERR_PROTOCOL: return "ZH_ERR_PROTOCOL";
    case ZH_ERR_TIMEOUT: return "ZH_ERR_TIMEOUT";
    case ZH_ERR_INTERNAL: return "ZH_ERR_INTERNAL";
    case ZH_ERR_OVERWRITTEN: return "ZH_ERR_OVERWRITTEN";
    case ZH_STATUS_MAX_ENUM: break;
  }
  return "ZH_ERR_UNKNOWN_STATUS";
}

const char* zh_format_name(zh_format format) {
  const auto known = zerohop::capi::formatFromC(format);
  if (!known) return "unknown";
  // formatName() returns views of string literals: NUL-terminated.
  return zerohop::formatName(*known).data();
}

}  // extern "C"
