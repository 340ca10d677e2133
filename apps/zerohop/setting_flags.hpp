#pragma once
// The CLI's spelling of the settings the library names (SettingError::setting(), zerohop/setting_error.hpp):
// the library's messages speak of its own settings; the CLI adds the option that sets each one.

#include <string>

namespace zerohop::cli {

/// This CLI's option for `setting` (one of zerohop::setting::kAll), e.g. "--ice-server"; nullptr for a
/// name it does not know.
const char* flagFor(const std::string& setting);

}  // namespace zerohop::cli
