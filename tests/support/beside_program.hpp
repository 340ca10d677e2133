#pragma once
// besideProgram(): a file of the build or source tree, named relative to the running test program's own
// folder (tests/CMakeLists.txt, zerohop_test_paths(), defines those names), as an absolute path. Resolved
// at run time against /proc/self/exe, so no compile line holds the tree's absolute path and ccache shares
// the test objects between clones of the tree in other folders; the program still finds its files when it
// is started from any working directory.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace zerohop::testing {

inline std::string besideProgram(const std::string& relative) {
  static const std::filesystem::path folder = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  return (folder / relative).lexically_normal().string();
}

/// $`variable` where it is set and not empty (a test carried away from its tree, e.g. in a bundle on the
/// GPU machine, is told where its files are), else besideProgram(relative).
inline std::string fromEnvOrBesideProgram(const char* variable, const std::string& relative) {
  const char* v = std::getenv(variable);
  return v != nullptr && *v != '\0' ? std::string(v) : besideProgram(relative);
}

}  // namespace zerohop::testing
