// zerohop: camera frames to GPU memory, shared, encoded and streamed to browsers over WebRTC.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "commands.hpp"
#include "config_check.hpp"
#include "exit_codes.hpp"
#include "setting_flags.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"
#include "zerohop/version.hpp"

namespace {

void installSpdlogSink() {
  zerohop::log::setSink([](zerohop::log::Level level, std::string_view message) {
    switch (level) {
      case zerohop::log::Level::kTrace: spdlog::trace("{}", message); break;
      case zerohop::log::Level::kDebug: spdlog::debug("{}", message); break;
      case zerohop::log::Level::kInfo: spdlog::info("{}", message); break;
      case zerohop::log::Level::kWarn: spdlog::warn("{}", message); break;
      case zerohop::log::Level::kError: spdlog::error("{}", message); break;
      case zerohop::log::Level::kOff: break;
    }
  });
  // Lines about one setting name the option that sets it, as errors do (reportError).
  zerohop::log::setSettingNote(zerohop::cli::settingNote);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "zerohop: camera frames into GPU memory with the fewest hops, shared with other programs,\n"
      "encoded without a trip back to the CPU and streamed to browsers over WebRTC (WHEP),\n"
      "with every stage's latency measured.\n"};
  app.set_version_flag("--version", std::string("zerohop ") + zerohop::kVersion);
  app.require_subcommand(1);
  app.set_config("--config", "", "read options from this TOML file (a [serve] table for serve's options)");
  std::string logLevel = "info";
  app.add_option("--log-level", logLevel, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  auto serve = zerohop::cli::addServeCommand(app);
  auto probe = zerohop::cli::addProbeCommand(app);
  auto tap = zerohop::cli::addTapCommand(app);
  auto record = zerohop::cli::addRecordCommand(app);
  auto shares = zerohop::cli::addSharesCommand(app);
  app.footer("Examples:\n  zerohop serve --source test:1280x720@30 --listen 127.0.0.1:8080\n  zerohop probe\n  zerohop shares\n  zerohop tap cam0 --count 10");

  try {
    app.parse(argc, argv);
    // CLI11 skips keys and tables it does not know: a typo must not turn an option (the token) off.
    if (const CLI::Option* config = app.get_config_ptr(); config && config->count() > 0) {
      zerohop::cli::checkConfigFile(config->as<std::string>(), app);
    }
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : zerohop::cli::kExitUsage;
  } catch (const zerohop::Error& e) {
    return zerohop::cli::reportError(e);
  }
  zerohop::log::Level level{};
  zerohop::log::parseLevel(logLevel, level);
  zerohop::log::setLevel(level);
  // Logs go to stderr: stdout carries only what scripts read (serve's "open URL" line, tap's frames).
  spdlog::set_default_logger(spdlog::stderr_color_mt("zerohop"));
  spdlog::set_level(static_cast<spdlog::level::level_enum>(static_cast<int>(level)));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  installSpdlogSink();
  zerohop::routeFfmpegLogsToZerohopLog();
  try {
    if (app.got_subcommand("serve")) return serve();
    if (app.got_subcommand("probe")) return probe();
    if (app.got_subcommand("tap")) return tap();
    if (app.got_subcommand("record")) return record();
    if (app.got_subcommand("shares")) return shares();
  } catch (const zerohop::Error& e) {
    return zerohop::cli::reportError(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerohop: internal error: %s\n", e.what());
    return zerohop::cli::kExitFailure;
  }
  return zerohop::cli::kExitUsage;
}
