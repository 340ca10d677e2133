#pragma once
// Exit codes of the zerohop CLI and the translation of library errors into them.

#include "zerohop/error.hpp"

namespace zerohop::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      ///< a runtime failure (device, I/O, internal)
inline constexpr int kExitUsage = 2;        ///< bad option or argument
inline constexpr int kExitUnavailable = 3;  ///< a resource is missing or busy (port in use, no camera, no GPU)

/// Prints "zerohop: error: <message>" to stderr and returns the exit code for `error`.
int reportError(const Error& error);

}  // namespace zerohop::cli
