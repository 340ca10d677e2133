#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

#include <cerrno>
#include <cstring>
#include <string>

namespace zerohop {

SettingError::~SettingError() = default;  // the key function: one typeinfo for every catch

const char* errcName(Errc code) noexcept {
  switch (code) {
    case Errc::kInvalidArgument: return "invalid argument";
    case Errc::kNotFound: return "not found";
    case Errc::kUnavailable: return "unavailable";
    case Errc::kUnsupported: return "unsupported";
    case Errc::kIo: return "i/o error";
    case Errc::kDevice: return "device error";
    case Errc::kProtocol: return "protocol error";
    case Errc::kTimeout: return "timeout";
    case Errc::kInternal: return "internal error";
  }
  return "unknown error";
}

Errc errcFromErrno(int err) noexcept {
  switch (err) {
    case ENOENT:
    case ENXIO: return Errc::kNotFound;
    case ENODEV:
    case EBUSY:
    case EADDRINUSE:
    case EAGAIN:
    case ECONNREFUSED: return Errc::kUnavailable;
    case EINVAL:
    case ERANGE: return Errc::kInvalidArgument;
    case ENOTTY:
    case EOPNOTSUPP: return Errc::kUnsupported;
    case ETIMEDOUT: return Errc::kTimeout;
    case EPROTO:
    case EBADMSG: return Errc::kProtocol;
    default: return Errc::kIo;
  }
}

void throwErrno(std::string_view call, int err, std::string_view context) {
  std::string msg(call);
  if (!context.empty()) {
    msg += "(";
    msg += context;
    msg += ")";
  }
  msg += " failed: ";
  msg += std::strerror(err);
  msg += " (errno ";
  msg += std::to_string(err);
  msg += ")";
  throw Error(errcFromErrno(err), std::move(msg));
}

}  // namespace zerohop
