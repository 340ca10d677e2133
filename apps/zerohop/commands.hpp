#pragma once
// The zerohop CLI's subcommands. Each registers its options on a CLI11 subcommand and runs
// when that subcommand was given. The CLI sits on top of the library, never inside it: it turns
// zerohop::Error into one line and an exit code (exit_codes.hpp), nothing more.

#include <CLI/CLI.hpp>
#include <functional>

namespace zerohop::cli {

using Runner = std::function<int()>;

Runner addServeCommand(CLI::App& app);
Runner addProbeCommand(CLI::App& app);
Runner addTapCommand(CLI::App& app);
Runner addRecordCommand(CLI::App& app);
Runner addSharesCommand(CLI::App& app);

}  // namespace zerohop::cli
