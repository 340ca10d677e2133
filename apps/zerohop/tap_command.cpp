// zerohop tap NAME: attach to a share published by `serve --share NAME` (or any zerohop::Publisher)
// and print one line per frame: sequence, format, size, and how old the frame is.
#include <signal.h>

#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop::cli {
namespace {

struct TapOptions {
  std::string name;
  std::uint64_t count = 0;  // 0 = until interrupted
  bool json = false;
  double timeoutSeconds = 5;
};

volatile sig_atomic_t gInterrupted = 0;
void onInterrupt(int) { gInterrupted = 1; }

int runTap(const TapOptions& o) {
  Subscriber sub(o.name);
  const auto& info = sub.info();
  std::fprintf(stderr, "attached to '%s' (publisher pid %d, %u slots, %s memory, %s)\n", info.name.c_str(),
               static_cast<int>(info.publisherPid), info.slots, memoryKindName(info.memory),
               info.encoded ? "encoded units" : "images");
  struct sigaction sa{};
  sa.sa_handler = onInterrupt;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const auto timeout = std::chrono::milliseconds(static_cast<long>(o.timeoutSeconds * 1000));
  std::uint64_t shown = 0;
  while (!gInterrupted && (o.count == 0 || shown < o.count)) {
    auto f = sub.next(timeout);
    if (!f) throw Error(Errc::kTimeout, "no frame from '" + o.name + "' within " + std::to_string(o.timeoutSeconds) + " s");
    const Frame& fr = f->frame();
    const std::int64_t now = monotonicNs();
    const double sincePublish = static_cast<double>(now - f->publishNs()) / 1e6;
    const double sinceCapture = fr.captureNs() ? static_cast<double>(now - fr.captureNs()) / 1e6 : 0.0;
    const bool valid = f->valid();
    if (o.json) {
      std::printf(
          "{\"seq\":%llu,\"format\":\"%s\",\"width\":%u,\"height\":%u,\"bytes\":%zu,\"keyframe\":%s,"
          "\"capture_to_read_ms\":%.3f,\"publish_to_read_ms\":%.3f,\"valid\":%s}\n",
          static_cast<unsigned long long>(fr.sequence), std::string(formatName(fr.format)).c_str(), fr.width,
          fr.height, fr.bytesUsed, fr.keyframe ? "true" : "false", sinceCapture, sincePublish,
          valid ? "true" : "false");
    } else {
      std::printf("seq %8llu  %-5s %ux%u  %8zu bytes%s  capture->read %7.2f ms  publish->read %6.3f ms%s\n",
                  static_cast<unsigned long long>(fr.sequence), std::string(formatName(fr.format)).c_str(),
                  fr.width, fr.height, fr.bytesUsed, fr.keyframe && info.encoded ? " key" : "", sinceCapture,
                  sincePublish, valid ? "" : "  (overwritten while read)");
    }
    std::fflush(stdout);
    ++shown;
  }
  const auto st = sub.stats();
  std::fprintf(stderr, "%llu frames, %llu missed, %llu overruns\n", static_cast<unsigned long long>(st.frames),
               static_cast<unsigned long long>(st.missed), static_cast<unsigned long long>(st.overruns));
  return 0;
}

}  // namespace

Runner addTapCommand(CLI::App& app) {
  auto o = std::make_shared<TapOptions>();
  auto* cmd = app.add_subcommand(
      "tap", "Read frames another process shares (serve --share NAME) in place and print one line per frame");
  cmd->add_option("name", o->name, "share name (NAME for frames, NAME.h264 for encoded access units)")->required();
  cmd->add_option("--count", o->count, "stop after this many frames (default: until Ctrl-C)");
  cmd->add_flag("--json", o->json, "one JSON object per line");
  cmd->add_option("--timeout", o->timeoutSeconds, "seconds to wait for a frame before giving up")->capture_default_str();
  return [o] { return runTap(*o); };
}

}  // namespace zerohop::cli
