#pragma once
// Where sound comes from: the test tone, an ALSA capture device, (later) the program's own PCM.
// Thread-safety: next() is thread-bound (the capture thread); counters() and info() are thread-safe.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "audio/audio_frame.hpp"

namespace zerohop::audio {

struct AudioSourceInfo {
  std::string name;  ///< "test", "alsa:hw:1,0", ...
  std::uint32_t channels = 1;
  std::uint32_t periodFrames = 480;  ///< sample frames a block (480: 10 ms)
};

struct AudioSourceCounters {
  std::uint64_t blocks = 0;    ///< blocks delivered
  std::uint64_t overruns = 0;  ///< capture overruns (ALSA EPIPE): samples lost, stream restarted
  std::uint64_t errors = 0;    ///< other recovered faults (suspend, short reads)
  std::uint64_t reopens = 0;   ///< times the device came back after it was lost (ENODEV)
};

class AudioSource {
 public:
  virtual ~AudioSource() = default;
  virtual AudioSourceInfo info() const = 0;
  /// The next block, waiting at most `timeout`; nullopt on timeout. Throws zerohop::Error on a fault
  /// it cannot recover from (kUnavailable when the device is gone).
  virtual std::optional<AudioFrame> next(std::chrono::milliseconds timeout) = 0;
  virtual AudioSourceCounters counters() const = 0;
};

}  // namespace zerohop::audio
