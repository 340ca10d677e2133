#pragma once
// One Opus encode of one sound source (libopus): 48 kHz, 5, 10 or 20 ms frames, bitrate, in-band FEC and
// expected loss settable while it runs, DTX optional. PCM blocks of any size go in; whole Opus packets
// come out, each stamped with the capture instant of the sound its first decoded sample plays (the
// encoder's lookahead taken out: see OpusAudioEncoder::encode).
// Thread-safety: thread-bound (the encode thread). Owns its libopus encoder (move-only).

#include <cstdint>
#include <memory>
#include <vector>

#include "audio/audio_frame.hpp"

struct OpusEncoder;  // libopus

namespace zerohop::audio {

struct OpusSettings {
  std::uint32_t channels = 1;             ///< 1 or 2
  /// 10 or 20; or 5: CELT alone in its low-delay mode (lookahead 2.5 ms, not 6.5), so no in-band FEC
  std::uint32_t frameMs = 20;
  std::uint32_t bitrateBps = 64'000;      ///< 6'000 .. 510'000
  bool inbandFec = true;                  ///< LBRR: a loss is concealed from the next packet
  std::uint32_t expectedLossPercent = 0;  ///< 0..100; FEC spends bits only when this is above 0
  bool dtx = false;                       ///< send almost nothing during silence
};

struct OpusPacket {
  std::vector<std::uint8_t> data;
  /// Capture instant of the sound the packet's first decoded sample plays: the instant of the first
  /// input sample it was made from, less the encoder's lookahead (6.5 ms).
  std::int64_t captureNs = 0;
  std::uint32_t frames = 0;    ///< sample frames it carries (960 for 20 ms)
  std::uint64_t sequence = 0;  ///< packet counter
};

class OpusAudioEncoder {
 public:
  /// Throws Error kInvalidArgument (bad settings, named) or kDevice (libopus refused, its words).
  explicit OpusAudioEncoder(const OpusSettings& settings);
  ~OpusAudioEncoder();
  OpusAudioEncoder(OpusAudioEncoder&&) noexcept;
  OpusAudioEncoder& operator=(OpusAudioEncoder&&) noexcept;

  /// Appends `block` (its channel count must be the encoder's) and returns the packets now complete.
  /// Packet times advance by the samples encoded, slewed toward the blocks' stamps (at most 5 us a
  /// block: a device clock's drift, not its jitter); a block more than 5 ms from where the samples say
  /// it should be (blocks dropped upstream) restarts them from that block. Each packet is stamped with
  /// its first input sample's instant minus lookaheadNs(): the instant its decoded sound was captured.
  std::vector<OpusPacket> encode(const AudioFrame& block);

  void setBitrate(std::uint32_t bps);
  void setExpectedLoss(std::uint32_t percent);
  void setInbandFec(bool on);
  void setDtx(bool on);

  /// libopus's algorithmic delay (OPUS_GET_LOOKAHEAD): decoded sound comes out this many sample frames
  /// after the input it represents; 312 (6.5 ms) at 48 kHz in VOIP mode, 120 (2.5 ms) with 5 ms frames
  /// (low-delay mode). Fixed for the encoder's life.
  std::uint32_t lookaheadFrames() const noexcept { return lookaheadFrames_; }
  std::int64_t lookaheadNs() const noexcept { return framesToNs(lookaheadFrames_); }

  const OpusSettings& settings() const noexcept { return settings_; }
  std::uint32_t frameSize() const noexcept { return settings_.frameMs * (kSampleRate / 1000); }

 private:
  struct Deleter {
    void operator()(OpusEncoder* e) const noexcept;
  };
  void control(int request, std::int32_t value, const char* what);

  OpusSettings settings_;
  std::unique_ptr<OpusEncoder, Deleter> enc_;
  std::uint32_t lookaheadFrames_ = 0;
  std::vector<std::int16_t> pending_;  // interleaved samples not yet a whole packet
  std::int64_t pendingNs_ = 0;  // capture instant of pending_'s first sample (the next one's when empty)
  bool timed_ = false;          // pendingNs_ was set from a block
  std::uint64_t sequence_ = 0;
};

}  // namespace zerohop::audio
