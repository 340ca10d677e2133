#include "exit_codes.hpp"

#include <cstdio>

namespace zerohop::cli {

int reportError(const Error& error) {
  std::fprintf(stderr, "zerohop: error: %s\n", error.what());
  switch (error.code()) {
    case Errc::kInvalidArgument: return kExitUsage;
    case Errc::kNotFound:
    case Errc::kUnavailable:
    case Errc::kUnsupported: return kExitUnavailable;
    default: return kExitFailure;
  }
}

}  // namespace zerohop::cli
