// zerohop record NAME.h264 --out FILE.mp4|.mkv: write the H.264 share of `serve --share NAME` to
// fragmented MP4 or Matroska (src/record), from the next keyframe, with capture-time timestamps,
// optionally rotating files; a progress line a second on stderr; Ctrl-C (or SIGTERM) closes the file.
// When the camera has sound (serve --audio: the NAME.opus share beside it), its Opus packets go in
// the same files, on the same timeline. Both shares are waited on with poll(), on their descriptors.
// Reading the shares costs the publisher nothing: any number of recorders, no effect on viewers.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "commands.hpp"
#include "record/recorder.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop::cli {
namespace {

struct RecordOptions {
  std::string name;
  std::string out;
  double segmentSeconds = 0;
  std::uint64_t segmentBytes = 0;
  double seconds = 0;  // 0 = until interrupted
  double timeoutSeconds = 5;
  bool noSound = false;
};

volatile sig_atomic_t gInterrupted = 0;
void onInterrupt(int) {
  gInterrupted = 1;
}

void printProgress(const RecordOptions& o, const record::RecorderStats& s, const SubscriberStats& sub,
                   bool sound, bool last) {
  char soundText[64] = "";
  if (sound) std::snprintf(soundText, sizeof soundText, ", %llu sound packets", static_cast<unsigned long long>(s.audioPackets));
  std::fprintf(stderr, "record %s -> %s: %.1f s, %llu frames (%llu key)%s, %.2f MB, %u file%s, %llu missed%s\n",
               o.name.c_str(), s.currentPath.empty() ? o.out.c_str() : s.currentPath.c_str(),
               static_cast<double>(s.recordedNs) / 1e9, static_cast<unsigned long long>(s.units),
               static_cast<unsigned long long>(s.keyframes), soundText,
               static_cast<double>(s.bytes + s.audioBytes) / 1e6, s.files, s.files == 1 ? "" : "s",
               static_cast<unsigned long long>(sub.missed + s.discontinuities),
               last           ? ", done"
               : s.files == 0 ? ", waiting for a keyframe"
                              : "");
}

/// The sound share beside NAME.h264 (serve --share NAME with --audio publishes NAME.opus); null when
/// there is none (a camera without sound) or --no-sound.
std::unique_ptr<Subscriber> openSound(const RecordOptions& o) {
  const std::string suffix = ".h264";
  if (o.noSound || o.name.size() <= suffix.size() || o.name.compare(o.name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return nullptr;
  const std::string name = o.name.substr(0, o.name.size() - suffix.size()) + ".opus";
  try {
    auto sound = std::make_unique<Subscriber>(name);
    if (sound->info().layout.format != PixelFormat::kOpus) return nullptr;
    return sound;
  } catch (const Error& e) {
    if (e.code() == Errc::kNotFound) return nullptr;
    throw;
  }
}

/// Every Opus packet `sound` has ready, into the recorder. A sound share that went away ends the sound
/// (said once); the pictures go on.
void readSound(std::unique_ptr<Subscriber>& sound, record::Recorder& recorder, std::vector<std::uint8_t>& bytes) {
  try {
    while (auto f = sound->next(std::chrono::milliseconds(0))) {
      const Frame& fr = f->frame();
      bytes.assign(fr.data[0], fr.data[0] + fr.bytesUsed);
      const std::int64_t captureNs = fr.captureNs() != 0 ? fr.captureNs() : f->publishNs();
      const bool valid = f->valid();
      f->release();
      if (valid) recorder.writeAudio({bytes.data(), bytes.size(), captureNs});
    }
  } catch (const Error& e) {
    if (e.code() != Errc::kUnavailable) throw;
    std::fprintf(stderr, "the sound share went away (%s): recording the pictures alone from here\n", e.what());
    sound.reset();
  }
}

int runRecord(const RecordOptions& o) {
  record::containerForPath(o.out);  // the file name, checked before attaching to anything
  Subscriber sub(o.name);
  if (!sub.info().encoded) {
    throw Error(Errc::kInvalidArgument, "share '" + o.name + "' holds images, not H.264: record '" + o.name +
                                            ".h264' (what serve --share " + o.name + " publishes beside it)");
  }
  if (sub.info().layout.format != PixelFormat::kH264) {
    throw Error(Errc::kInvalidArgument, "share '" + o.name + "' holds " +
                                            std::string(formatName(sub.info().layout.format)) +
                                            ", not H.264: record the .h264 share beside it (its sound comes along)");
  }
  auto sound = openSound(o);
  record::Recorder recorder({o.out, o.segmentSeconds, o.segmentBytes, sound != nullptr});
  std::fprintf(stderr, "attached to '%s' (publisher pid %d)%s; waiting for a keyframe\n",
               sub.info().name.c_str(), static_cast<int>(sub.info().publisherPid),
               sound ? (" and its sound '" + sound->info().name + "'").c_str() : ", no sound share beside it");
  struct sigaction sa {};
  sa.sa_handler = onInterrupt;  // no SA_RESTART: a wait in next() returns and the loop sees the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const auto timeoutNs = static_cast<std::int64_t>(o.timeoutSeconds * 1e9);
  std::int64_t lastUnitNs = monotonicNs();
  std::int64_t lastProgressNs = lastUnitNs;
  std::uint64_t lastIndex = 0;
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> soundBytes;
  const bool withSound = sound != nullptr;
  bool idle = true;  // the last turn read no picture: wait before the next
  while (!gInterrupted) {
    if (sound) {
      // Both descriptors; a signal ends the wait (EINTR) and the loop sees the flag. Pictures already
      // waiting in the ring are read first, one a turn, without waiting.
      if (idle) {
        pollfd fds[2] = {{sub.pollFd(), POLLIN, 0}, {sound->pollFd(), POLLIN, 0}};
        ::poll(fds, 2, 200);
      }
      readSound(sound, recorder, soundBytes);
    }
    auto f = sub.next(std::chrono::milliseconds(sound ? 0 : 200));
    idle = !f;
    const std::int64_t now = monotonicNs();
    if (now - lastProgressNs >= 1'000'000'000) {
      printProgress(o, recorder.stats(), sub.stats(), withSound, false);
      lastProgressNs = now;
    }
    if (!f) {
      if (now - lastUnitNs > timeoutNs) {
        throw Error(Errc::kTimeout,
                    "no H.264 from '" + o.name + "' within " + std::to_string(o.timeoutSeconds) + " s");
      }
      continue;
    }
    lastUnitNs = now;
    if (lastIndex != 0 && f->publishIndex() != lastIndex + 1) recorder.discontinuity();
    lastIndex = f->publishIndex();
    const Frame& fr = f->frame();
    // Copied out and checked before muxing: a unit the publisher overwrote while it was read is torn.
    bytes.assign(fr.data[0], fr.data[0] + fr.bytesUsed);
    if (!f->valid()) {
      recorder.discontinuity();
      continue;
    }
    record::RecordUnit unit;
    unit.data = bytes.data();
    unit.size = bytes.size();
    unit.keyframe = fr.keyframe;
    unit.captureNs = fr.captureNs() != 0 ? fr.captureNs() : f->publishNs();
    unit.wallClockMs = fr.wallClockMs;
    unit.width = fr.width;
    unit.height = fr.height;
    f->release();
    recorder.write(unit);
    if (o.seconds > 0) {
      // Within half a frame of the target counts: capture times are not exact multiples of the period.
      const auto s = recorder.stats();
      if (s.recordedNs + s.frameIntervalNs / 2 >= static_cast<std::int64_t>(o.seconds * 1e9)) break;
    }
  }
  if (sound) readSound(sound, recorder, soundBytes);  // what came with the last picture
  recorder.finish();
  printProgress(o, recorder.stats(), sub.stats(), withSound, true);
  return 0;
}

}  // namespace

Runner addRecordCommand(CLI::App& app) {
  auto o = std::make_shared<RecordOptions>();
  auto* cmd = app.add_subcommand(
      "record",
      "Record the H.264 a server shares (serve --share NAME publishes NAME.h264), and its sound (NAME.opus) "
      "when the camera has one, to MP4 or Matroska");
  cmd->add_option("name", o->name, "encoded share to read, e.g. cam0.h264")->required();
  cmd->add_option(
         "--out", o->out,
         "FILE.mp4 (fragmented MP4) or FILE.mkv (Matroska); with rotation FILE-0000.mp4, FILE-0001.mp4, ...")
      ->required();
  cmd->add_option("--segment-seconds", o->segmentSeconds,
                  "start a new file at the first keyframe after this long")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--segment-bytes", o->segmentBytes,
                  "start a new file at the first keyframe after this many bytes");
  cmd->add_option("--seconds", o->seconds, "stop after recording this long (default: until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeout", o->timeoutSeconds, "seconds without a unit from the share before giving up")
      ->capture_default_str();
  cmd->add_flag("--no-sound", o->noSound,
                "record the pictures alone, even when the camera's sound is shared beside them (NAME.opus)");
  return [o] { return runRecord(*o); };
}

}  // namespace zerohop::cli
