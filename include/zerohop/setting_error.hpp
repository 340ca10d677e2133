#pragma once
// An Error about one setting the caller chose, named in the library's terms, so that a front end
// can point at its own spelling of that setting (the CLI names its flag) without parsing the
// message. Thread-safety: a value type.

#include <string>

#include "zerohop/error.hpp"
#include "zerohop/export.h"

namespace zerohop {

/// The settings a SettingError names: the field of the C++ config and of the C API's options.
namespace setting {
inline constexpr const char* kListen = "listen";    ///< StreamConfig host/port; zh_stream_options listen_host/port
inline constexpr const char* kEncoder = "encoder";  ///< EncoderConfig::encoder; zh_stream_options.encoder
}  // namespace setting

/// Thrown like any Error (catch Error& still catches it); setting() says which choice to change.
class ZEROHOP_API SettingError : public Error {
 public:
  SettingError(Errc code, std::string setting, std::string message)
      : Error(code, std::move(message)), setting_(std::move(setting)) {}
  ~SettingError() override;
  /// One of the setting:: names.
  const std::string& setting() const noexcept { return setting_; }

 private:
  std::string setting_;
};

}  // namespace zerohop
