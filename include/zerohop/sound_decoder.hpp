#pragma once
// SoundDecoder: the Opus packets of a sound share (NAME.opus: `serve --share NAME` with sound, a
// Pipeline's or a FrameStream's sound) as PCM a program can process: 48 kHz, signed 16-bit,
// interleaved, in the channel count you ask for (a stereo packet is mixed down for 1, a mono packet is
// copied to both sides for 2).
//
//   Subscriber("NAME.opus") -> next() -> frame bytes (one Opus packet) -> decode() -> PCM
//
// A packet that never came (a gap in the frames' sequence numbers, or frames the share dropped for a
// slow reader) is concealed: decode(nullptr, 0, ...) makes the sound libopus predicts for one packet of
// the last one's length, so the PCM stays continuous and each packet's capture time (its frame's
// FrameMeta capture stage) still starts its samples.
// C: zh_sound_decoder_create / zh_sound_decode (zerohop.h). Python: zerohop.SoundDecoder.
// Thread-safety: thread-bound (one decoder per reading thread; it keeps the stream's state).
// Ownership: owns its libopus decoder; movable.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "zerohop/export.h"

namespace zerohop {

class ZEROHOP_API SoundDecoder {
 public:
  static constexpr std::uint32_t kSampleRate = 48'000;
  /// The most sample frames one packet decodes to (120 ms, Opus's longest packet): room for this many
  /// always suffices.
  static constexpr std::size_t kMaxPacketFrames = 5'760;

  /// `channels`: 1 or 2, the PCM you get. Throws Error(kInvalidArgument) for another count. (Part of the
  /// stream build: a library built with ZEROHOP_WITH_MEDIA=OFF has neither it nor this header.)
  explicit SoundDecoder(std::uint32_t channels);
  ~SoundDecoder();
  SoundDecoder(SoundDecoder&&) noexcept;
  SoundDecoder& operator=(SoundDecoder&&) noexcept;

  /// Decodes one Opus packet into `pcm`, which has room for `maxFrames` sample frames (maxFrames x
  /// channels() values); returns the sample frames written (960 for a 20 ms packet). `packet` null or
  /// `bytes` 0: a lost packet, concealed (as long as the last packet; 20 ms before any). Throws
  /// Error(kInvalidArgument) for a packet that is not Opus, a null `pcm`, or too little room (the
  /// message says how many frames the packet needs).
  std::size_t decode(const std::uint8_t* packet, std::size_t bytes, std::int16_t* pcm, std::size_t maxFrames);

  std::uint32_t channels() const noexcept { return channels_; }
  /// Packets decoded, and lost packets concealed, since construction.
  std::uint64_t packetsDecoded() const noexcept { return decoded_; }
  std::uint64_t packetsConcealed() const noexcept { return concealed_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint32_t channels_ = 0;
  std::size_t lastFrames_ = 960;  // the last packet's length, what a lost one is concealed as
  std::uint64_t decoded_ = 0;
  std::uint64_t concealed_ = 0;
};

}  // namespace zerohop
