#pragma once
// The one error model of zerohop: every failure is a zerohop::Error carrying a category, the
// name of the call that failed and the system's own words for why (errno text, CUresult name,
// nvjpegStatus_t, FFmpeg's av_err2str, GStreamer's GError message).
// Thread-safety: Error is a value type; the helpers are reentrant.

#include <stdexcept>
#include <string>
#include <string_view>

#include "zerohop/export.h"

namespace zerohop {

/// What kind of failure, so callers (CLI exit codes, HTTP status, Python exception types) can map it.
enum class Errc {
  kInvalidArgument,  ///< the caller asked for something malformed or impossible
  kNotFound,         ///< a device, file, session or share does not exist
  kUnavailable,      ///< exists but cannot be used now (busy, no GPU, no encoder, port in use)
  kUnsupported,      ///< valid request this build or hardware cannot do
  kIo,               ///< an operating-system call failed
  kDevice,           ///< CUDA / driver / codec failure
  kProtocol,         ///< a peer broke the protocol (IPC handshake, malformed message)
  kTimeout,          ///< nothing happened within the allowed time
  kInternal,         ///< a bug in zerohop
};

ZEROHOP_API const char* errcName(Errc code) noexcept;

class ZEROHOP_API Error : public std::runtime_error {
 public:
  Error(Errc code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

/// Throws kIo (or kNotFound / kUnavailable for ENOENT, ENODEV, EBUSY...) naming `call` and strerror(err).
[[noreturn]] ZEROHOP_API void throwErrno(std::string_view call, int err, std::string_view context = {});

/// Maps an errno value to the category throwErrno would use.
ZEROHOP_API Errc errcFromErrno(int err) noexcept;

}  // namespace zerohop
