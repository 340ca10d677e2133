// zh_set_log_callback: the library's log lines into a C callback.
#include <string>

#include "capi/enum_map.hpp"
#include "capi/status.hpp"
#include "zerohop/log.hpp"

using zerohop::capi::fail;

extern "C" {

zh_status zh_set_log_callback(zh_log_callback callback, void* user_data, zh_log_level min_level) {
  constexpr const char* fn = "zh_set_log_callback";
  const auto level = zerohop::capi::logLevelFromC(min_level);
  if (!level) {
    return fail(fn, ZH_ERR_INVALID_ARGUMENT,
                "min_level " + std::to_string(min_level) + " is not a zh_log_level (ZH_LOG_TRACE..ZH_LOG_OFF)");
  }
  return zerohop::capi::guarded(fn, [&] {
    if (callback) {
      // log::write calls the sink under its lock: one call at a time. The line is copied to add the NUL.
      zerohop::log::setSink([callback, user_data](zerohop::log::Level l, std::string_view message) {
        const std::string line(message);
        callback(zerohop::capi::logLevelToC(l), line.c_str(), user_data);
      });
    } else {
      zerohop::log::setSink(nullptr);
    }
    zerohop::log::setLevel(*level);
    return ZH_OK;
  });
}

}  // extern "C"
