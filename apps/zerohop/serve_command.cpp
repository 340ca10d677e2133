#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "listen_address.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/nvenc.hpp"
#include "zerohop/pipeline.hpp"

namespace zerohop::cli {
namespace {

struct ServeOptions {
  std::string source = "test:1280x720@30";
  std::string listen = "127.0.0.1:8080";
  std::uint32_t bitrateKbps = 2500;
  std::uint32_t keyint = 120;
  std::string encoder = "auto";
  std::string preset = "superfast";
  std::string gpu = "auto";
  std::uint32_t maxViewers = 16;
  std::string webRoot;
  std::string share;
  std::string whepToken;
  double statusInterval = 0;  // 0 = every second on a terminal, every 10 s otherwise
};

// Blocks SIGINT/SIGTERM in this thread before any other thread exists, so every thread inherits
// the mask and the main thread alone receives them through sigtimedwait.
sigset_t blockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// --encoder nvenc|auto: the NVENC decision makeEncoder would make (probeNvenc). The pipeline
// converts to host I420 today and NVENC takes device NV12, so even where NVENC works serve uses x264
// and says so; only --encoder nvenc fails, within seconds, naming NVENC and the cause.
void resolveNvenc(const ServeOptions& o) {
  if (o.gpu == "off") {
    if (o.encoder == "nvenc") throw Error(Errc::kInvalidArgument, "--encoder nvenc needs the GPU; drop --gpu off");
    log::info("encoder auto: x264, because of --gpu off");
    return;
  }
  const int device = o.gpu == "auto" ? 0 : std::atoi(o.gpu.c_str());
  const NvencAvailability nvenc = probeNvenc(device);
  if (!nvenc.available) {
    if (o.encoder == "nvenc") throw Error(Errc::kUnavailable, "NVENC: " + nvenc.reason + "; use --encoder x264");
    log::info("encoder auto: x264, because NVENC is unavailable: ", nvenc.reason);
    return;
  }
  const std::string notWired = "NVENC works here (" + describe(nvenc) +
                               ") but serve's pipeline feeds the encoder host I420 frames and the device NV12 "
                               "path to NVENC is not wired in yet";
  if (o.encoder == "nvenc") throw Error(Errc::kUnsupported, "--encoder nvenc: " + notWired + "; use --encoder x264 (or auto)");
  log::info("encoder auto: x264, because ", notWired);
}

int runServe(const ServeOptions& o) {
  PipelineConfig config;
  config.source = parseSourceSpec(o.source);
  const auto listen = parseListenAddress(o.listen);
  config.stream.host = listen.host;
  config.stream.port = listen.port;
  config.stream.maxViewers = o.maxViewers;
  config.stream.webRoot = o.webRoot;
  config.shareName = o.share;
  config.stream.whepToken = o.whepToken;
  if (o.whepToken.empty() && config.stream.host != "127.0.0.1" && config.stream.host != "::1" &&
      config.stream.host != "localhost") {
    log::warn("listening on ", config.stream.host, " without --whep-token: anyone who can reach it can watch");
  }
  if (o.encoder != "x264") resolveNvenc(o);
  if (o.gpu != "off" && o.gpu != "auto") {
    log::warn("--gpu ", o.gpu, ": the GPU data path is not wired into serve yet; using the CPU path");
  }
  config.encoder.encoder = "x264";
  config.encoder.bitrateKbps = o.bitrateKbps;
  config.encoder.keyframeIntervalFrames = o.keyint;
  config.encoder.preset = o.preset;

  const sigset_t stopSignals = blockStopSignals();
  Pipeline pipeline(std::move(config));
  pipeline.start();
  std::printf("open %s%s\n", pipeline.url().c_str(), o.whepToken.empty() ? "" : ("?token=" + o.whepToken).c_str());
  std::fflush(stdout);

  const bool tty = isatty(STDERR_FILENO) != 0;
  const double interval = o.statusInterval > 0 ? o.statusInterval : (tty ? 1.0 : 10.0);
  double sinceStatus = 0;
  int exitCode = kExitOk;
  for (;;) {
    timespec wait{0, 250'000'000};
    const int sig = sigtimedwait(&stopSignals, nullptr, &wait);
    if (sig == SIGINT || sig == SIGTERM) {
      if (tty) std::fprintf(stderr, "\n");
      log::info("stopping (", sig == SIGINT ? "SIGINT" : "SIGTERM", ")");
      break;
    }
    if (auto failure = pipeline.failure(); !failure.empty()) {
      std::fprintf(stderr, "%szerohop: error: %s\n", tty ? "\n" : "", failure.c_str());
      exitCode = kExitFailure;
      break;
    }
    sinceStatus += 0.25;
    if (sinceStatus + 1e-9 >= interval) {
      sinceStatus = 0;
      if (tty) {
        std::fprintf(stderr, "\r\033[K%s", pipeline.statusLine().c_str());
      } else {
        std::fprintf(stderr, "%s\n", pipeline.statusLine().c_str());
      }
      std::fflush(stderr);
    }
  }
  pipeline.stop();
  return exitCode;
}

}  // namespace

Runner addServeCommand(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto* cmd = app.add_subcommand("serve", "Stream a camera to browsers over WebRTC (WHEP) and serve the viewer page");
  cmd->add_option("--source", o->source,
                  "test[:WxH[@FPS]][?format=yuyv|uyvy] (built-in test camera) or "
                  "v4l2:/dev/videoN[?format=..&size=WxH&fps=N&memory=mmap|userptr]")
      ->capture_default_str();
  cmd->add_option("--listen", o->listen, "HOST:PORT for the viewer page, WHEP (/whep) and /stats")->capture_default_str();
  cmd->add_option("--bitrate", o->bitrateKbps, "H.264 bitrate in kbit/s (CBR, one-frame VBV)")
      ->check(CLI::Range(100u, 100000u))
      ->capture_default_str();
  cmd->add_option("--keyint", o->keyint, "frames between periodic keyframes (0: only when a viewer asks)")
      ->capture_default_str();
  cmd->add_option("--encoder", o->encoder, "auto, x264 or nvenc")
      ->check(CLI::IsMember({"auto", "x264", "nvenc"}))
      ->capture_default_str();
  cmd->add_option("--preset", o->preset, "x264 preset (ultrafast..medium)")->capture_default_str();
  cmd->add_option("--gpu", o->gpu, "auto, off or a CUDA device number")->capture_default_str();
  cmd->add_option("--max-viewers", o->maxViewers, "viewers past this get 503")->capture_default_str();
  cmd->add_option("--web-root", o->webRoot, "serve the viewer page from this folder instead of the built-in copy");
  cmd->add_option("--share", o->share,
                  "publish every converted frame as share NAME and every H.264 access unit as NAME.h264, "
                  "for other processes (zerohop tap NAME, zerohop::Subscriber)");
  cmd->add_option("--whep-token", o->whepToken,
                  "require 'Authorization: Bearer TOKEN' on WHEP requests (open the page as /?token=TOKEN)");
  cmd->add_option("--status-interval", o->statusInterval, "seconds between status lines (default 1 on a terminal, 10 otherwise)");
  return [o] { return runServe(*o); };
}

}  // namespace zerohop::cli
