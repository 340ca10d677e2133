#pragma once
// The CLI's spelling of the settings the library names (SettingError::setting(), zerohop/setting_error.hpp):
// the library's messages speak of its own settings; the CLI adds the option that sets each one.

#include <string>
#include <string_view>

namespace zerohop::cli {

/// This CLI's option for `setting` (one of zerohop::setting::kAll), e.g. "--ice-server"; nullptr for a
/// name it does not know.
const char* flagFor(const std::string& setting);

/// The note that ends the library's log lines about `setting` (log::setSettingNote): "(option FLAG)",
/// or the library's own "(setting NAME)" for a name this CLI does not know.
std::string settingNote(std::string_view setting);

}  // namespace zerohop::cli
