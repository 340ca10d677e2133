#pragma once
// besideProgram(): a file of the build or source tree, named relative to the running test program's own
// folder (tests/CMakeLists.txt, zerohop_test_paths(), defines those names), as an absolute path. Resolved
// at run time against /proc/self/exe, so no compile line holds the tree's absolute path and ccache shares
// the test objects between clones of the tree in other folders; the program still finds its files when it
// is started from any working directory.

#include <filesystem>
#include <string>

namespace zerohop::testing {

inline std::string besideProgram(const std::string& relative) {
  static const std::filesystem::path folder = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  return (folder / relative).lexically_normal().string();
}

}  // namespace zerohop::testing
