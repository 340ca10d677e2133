#pragma once
// Library logging. The library writes through one sink; by default lines go to stderr. The CLI
// installs a spdlog sink; embedders can install their own.
// Thread-safety: thread-safe. setSink/setLevel are meant for start-up.

#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "zerohop/export.h"

namespace zerohop::log {

enum class Level { kTrace = 0, kDebug, kInfo, kWarn, kError, kOff };

using Sink = std::function<void(Level, std::string_view)>;
ZEROHOP_API void setSink(Sink sink);
ZEROHOP_API void setLevel(Level level);
ZEROHOP_API Level level() noexcept;
ZEROHOP_API void write(Level level, std::string_view message);
/// Parses trace|debug|info|warn|error|off; nullopt-like: returns false on an unknown name.
ZEROHOP_API bool parseLevel(std::string_view name, Level& out) noexcept;

template <class... Args>
void emit(Level lvl, Args&&... args) {
  if (lvl < level()) return;
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  write(lvl, os.str());
}
template <class... Args> void debug(Args&&... a) { emit(Level::kDebug, std::forward<Args>(a)...); }
template <class... Args> void info(Args&&... a) { emit(Level::kInfo, std::forward<Args>(a)...); }
template <class... Args> void warn(Args&&... a) { emit(Level::kWarn, std::forward<Args>(a)...); }
template <class... Args> void error(Args&&... a) { emit(Level::kError, std::forward<Args>(a)...); }

}  // namespace zerohop::log
