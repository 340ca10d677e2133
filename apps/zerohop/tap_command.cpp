// zerohop tap NAME: attach to a share published by `serve --share NAME` (or any zerohop::Publisher)
// and print one line per frame: sequence, format, size, and how old the frame is. With --timecode it
// also reads the pixel timecode the test and emulated cameras draw (from device frames too, where the
// CLI is built with CUDA), so a script can check the pictures themselves, not only that frames came.
#include <signal.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"
#include "zerohop/timecode.hpp"
#ifdef ZEROHOP_CLI_HAS_GPU
#include "gpu/device_timecode.hpp"
#endif

namespace zerohop::cli {
namespace {

struct TapOptions {
  std::string name;
  std::uint64_t count = 0;  // 0 = until interrupted
  bool json = false;
  double timeoutSeconds = 5;
  double waitSeconds = 0;  // --wait: for NAME to be published (or its dead publisher to restart)
  bool timecode = false;
  int device = -1;                 // --device: the reader's CUDA device; -1 = the ring's
  std::string deviceAccess = "auto";  // --device-access auto|copy
};

std::optional<Timecode> frameTimecode(const Frame& f) {
#ifdef ZEROHOP_CLI_HAS_GPU
  return gpu::readFrameTimecode(f);
#else
  if (f.memory == MemoryKind::kDevice)
    throw Error(Errc::kUnsupported, "--timecode on a device share needs a zerohop built with CUDA");
  return readTimecode(f);
#endif
}

// What --timecode saw: every frame's timecode readable, and each one's sequence after the previous.
struct TimecodeTally {
  std::uint64_t read = 0;
  std::uint64_t unreadable = 0;
  std::uint64_t outOfOrder = 0;
  std::optional<std::uint32_t> last;

  void add(const std::optional<Timecode>& tc) {
    if (!tc) {
      ++unreadable;
      return;
    }
    ++read;
    if (last) {
      const std::uint32_t step = (tc->sequence - *last) & kTimecodeSeqMask;
      if (step == 0 || step > kTimecodeSeqMask / 2) ++outOfOrder;
    }
    last = tc->sequence;
  }
};

volatile sig_atomic_t gInterrupted = 0;
void onInterrupt(int) { gInterrupted = 1; }

int runTap(const TapOptions& o) {
  SubscribeOptions so;
  so.waitForPublisher = std::chrono::milliseconds(static_cast<long>(o.waitSeconds * 1000));
  so.device = o.device;
  so.deviceAccess = o.deviceAccess == "copy" ? SubscribeOptions::DeviceAccess::kCopy : SubscribeOptions::DeviceAccess::kAuto;
  Subscriber sub(o.name, so);
  const auto& info = sub.info();
  std::fprintf(stderr, "attached to '%s' (publisher pid %d, %u slots, %s memory, %s)\n", info.name.c_str(),
               static_cast<int>(info.publisherPid), info.slots, memoryKindName(info.memory),
               info.encoded ? "encoded units" : "images");
  if (info.memory == MemoryKind::kDevice) {
    const std::string why = info.deviceAccessReason.empty() ? "" : " (" + info.deviceAccessReason + ")";
    std::fprintf(stderr, "ring on GPU %d, read on GPU %d: %s%s\n", info.ringDevice, info.readerDevice,
                 info.deviceAccess.c_str(), why.c_str());
  } else if (o.device >= 0 || o.deviceAccess != "auto") {
    std::fprintf(stderr, "note: '%s' is a host share: --device and --device-access apply to device shares only\n",
                 info.name.c_str());
  }
  if (o.timecode && info.encoded)
    throw Error(Errc::kInvalidArgument, "--timecode reads pictures, and '" + info.name +
                                            "' carries encoded units: tap the frame share instead");
  struct sigaction sa{};
  sa.sa_handler = onInterrupt;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const auto timeout = std::chrono::milliseconds(static_cast<long>(o.timeoutSeconds * 1000));
  std::uint64_t shown = 0;
  TimecodeTally tally;
  while (!gInterrupted && (o.count == 0 || shown < o.count)) {
    auto f = sub.next(timeout);
    if (!f) throw Error(Errc::kTimeout, "no frame from '" + o.name + "' within " + std::to_string(o.timeoutSeconds) + " s");
    const Frame& fr = f->frame();
    const std::int64_t now = monotonicNs();
    const double sincePublish = static_cast<double>(now - f->publishNs()) / 1e6;
    const double sinceCapture = fr.captureNs() ? static_cast<double>(now - fr.captureNs()) / 1e6 : 0.0;
    std::optional<Timecode> tc;
    if (o.timecode) {
      tc = frameTimecode(fr);
      tally.add(tc);
    }
    const bool valid = f->valid();
    std::string tcText;
    if (o.json) {
      if (o.timecode) {
        tcText = tc ? ",\"timecode_seq\":" + std::to_string(tc->sequence) + ",\"timecode_ms\":" +
                          std::to_string(tc->wallClockMs)
                    : std::string(",\"timecode_seq\":null,\"timecode_ms\":null");
      }
      std::printf(
          "{\"seq\":%llu,\"format\":\"%s\",\"width\":%u,\"height\":%u,\"bytes\":%zu,\"keyframe\":%s,"
          "\"capture_to_read_ms\":%.3f,\"publish_to_read_ms\":%.3f,\"valid\":%s%s}\n",
          static_cast<unsigned long long>(fr.sequence), std::string(formatName(fr.format)).c_str(), fr.width,
          fr.height, fr.bytesUsed, fr.keyframe ? "true" : "false", sinceCapture, sincePublish,
          valid ? "true" : "false", tcText.c_str());
    } else {
      if (o.timecode) tcText = tc ? "  timecode " + std::to_string(tc->sequence) : std::string("  no timecode");
      std::printf("seq %8llu  %-5s %ux%u  %8zu bytes%s  capture->read %7.2f ms  publish->read %6.3f ms%s%s\n",
                  static_cast<unsigned long long>(fr.sequence), std::string(formatName(fr.format)).c_str(),
                  fr.width, fr.height, fr.bytesUsed, fr.keyframe && info.encoded ? " key" : "", sinceCapture,
                  sincePublish, valid ? "" : "  (overwritten while read)", tcText.c_str());
    }
    std::fflush(stdout);
    ++shown;
  }
  const auto st = sub.stats();
  std::fprintf(stderr, "%llu frames, %llu missed, %llu overruns\n", static_cast<unsigned long long>(st.frames),
               static_cast<unsigned long long>(st.missed), static_cast<unsigned long long>(st.overruns));
  if (!o.timecode) return 0;
  std::fprintf(stderr, "timecodes: %llu read, %llu unreadable, %llu out of order\n",
               static_cast<unsigned long long>(tally.read), static_cast<unsigned long long>(tally.unreadable),
               static_cast<unsigned long long>(tally.outOfOrder));
  if (tally.unreadable == 0 && tally.outOfOrder == 0) return 0;
  std::fprintf(stderr,
               "error: %s: the pictures are damaged or out of order, or the source draws no timecode (only the "
               "test camera and zerohop-camemu do)\n",
               tally.unreadable ? "frames without a readable timecode" : "timecodes out of order");
  return 1;
}

}  // namespace

Runner addTapCommand(CLI::App& app) {
  auto o = std::make_shared<TapOptions>();
  auto* cmd = app.add_subcommand(
      "tap", "Read frames another process shares (serve --share NAME) in place and print one line per frame");
  cmd->add_option("name", o->name, "share name (NAME for frames, NAME.h264 for encoded access units)")->required();
  cmd->add_option("--count", o->count, "stop after this many frames (default: until Ctrl-C)");
  cmd->add_flag("--json", o->json, "one JSON object per line");
  cmd->add_flag("--timecode", o->timecode,
                 "read the pixel timecode of every frame (test camera, zerohop-camemu; device frames too) and "
                 "exit 1 unless every one is readable and in order");
  cmd->add_option("--timeout", o->timeoutSeconds, "seconds to wait for a frame before giving up")->capture_default_str();
  cmd->add_option("--wait", o->waitSeconds,
                  "seconds to wait for NAME to be published: not yet started, or killed and restarting "
                  "(its socket file left behind); 0: give up at once")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--device", o->device,
                  "device shares: the CUDA device (ordinal) that reads the frames; another GPU than the ring's "
                  "reads over peer access where the GPUs allow it, else through one device-to-device copy a "
                  "frame (default: the ring's own GPU)")
      ->check(CLI::Range(0, 1023));
  cmd->add_option("--device-access", o->deviceAccess,
                  "device shares: auto (in place, or peer access, else a copy) or copy (always one "
                  "device-to-device copy into this reader's buffer; tests the fallback on one GPU)")
      ->check(CLI::IsMember({"auto", "copy"}))
      ->capture_default_str();
  return [o] { return runTap(*o); };
}

}  // namespace zerohop::cli
