#pragma once
// A --config file checked against the options the CLI knows, so that a typo fails loudly instead of
// being skipped (CLI11 ignores keys and tables it does not know: `whep_tokne = "x"` or a misspelt
// [srve] silently left authentication off). Keys are option names without the dashes, at the top
// level for the global options and in a [serve] / [probe] / [tap] table (or dotted, serve.KEY);
// [[camera]] tables (serve's cameras) are checked by readCameraTables (camera_options.hpp).
// Thread-safety: reentrant.

#include <CLI/CLI.hpp>
#include <string>

namespace zerohop::cli {

/// Throws zerohop::Error(kInvalidArgument) naming the file, the line and the key (or table) when the
/// TOML file at `path` has a key or table `app` does not know, or a line that is not TOML.
void checkConfigFile(const std::string& path, const CLI::App& app);

}  // namespace zerohop::cli
