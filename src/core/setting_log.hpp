#pragma once
// Log lines about one setting the caller chose carry that setting, as a SettingError does
// (zerohop/setting_error.hpp): the line ends with the note for it, "(setting NAME)" unless a front
// end installed its own spelling (log::setSettingNote; the CLI: "(option --flag)").
// Thread-safety: thread-safe, like log::write.

#include <sstream>
#include <string_view>
#include <utility>

#include "zerohop/log.hpp"

namespace zerohop::log {

/// Writes `message` followed by the note for `setting` (one of setting::kAll).
void writeAbout(Level level, std::string_view setting, std::string_view message);

template <class... Args>
void emitAbout(Level lvl, std::string_view setting, Args&&... args) {
  if (lvl < level()) return;
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  writeAbout(lvl, setting, os.str());
}
/// log::warn for a line that concerns `setting`, e.g. warnAbout(setting::kRenditions, "renditions: ...").
template <class... Args> void warnAbout(std::string_view setting, Args&&... a) {
  emitAbout(Level::kWarn, setting, std::forward<Args>(a)...);
}
template <class... Args> void infoAbout(std::string_view setting, Args&&... a) {
  emitAbout(Level::kInfo, setting, std::forward<Args>(a)...);
}

}  // namespace zerohop::log
