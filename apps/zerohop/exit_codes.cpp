#include "exit_codes.hpp"

#include <cstdio>
#include <string>

#include "setting_flags.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::cli {

int reportError(const Error& error) {
  // The library speaks its own terms; the CLI adds which of its options sets what to change.
  const auto* about = dynamic_cast<const SettingError*>(&error);
  const char* flag = about ? flagFor(about->setting()) : nullptr;
  if (flag) {
    std::fprintf(stderr, "zerohop: error: %s (option %s)\n", error.what(), flag);
  } else {
    std::fprintf(stderr, "zerohop: error: %s\n", error.what());
  }
  switch (error.code()) {
    case Errc::kInvalidArgument: return kExitUsage;
    case Errc::kNotFound:
    case Errc::kUnavailable:
    case Errc::kUnsupported: return kExitUnavailable;
    default: return kExitFailure;
  }
}

}  // namespace zerohop::cli
