#include "audio/opus_encoder.hpp"

#include <opus/opus.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::audio {
namespace {

// The largest packet libopus makes: 1275 bytes a frame, at most 3 frames (RFC 6716 3.2.5); 4000 is its own
// advice.
constexpr int kMaxPacketBytes = 4000;
constexpr std::int64_t kResyncNs = 5'000'000;
// Within kResyncNs the stamps are slewed toward the device's: a 64th of the error a block, at most
// 5 us a block (500 ppm at 10 ms blocks, ten times a poor card's drift). A card's clock drifting from
// CLOCK_MONOTONIC then moves the stamps smoothly instead of by a 5 ms jump every minute or two (which a
// receiver hears as 5 ms of sound lost or repeated), while a device's stamp jitter reaches them only
// as its average.
constexpr std::int64_t kSlewDivisor = 64;
constexpr std::int64_t kMaxSlewNs = 5'000;

[[noreturn]] void opusFailed(const char* call, int rc) {
  throw Error(Errc::kDevice, std::string(call) + " failed: " + opus_strerror(rc));
}

void check(const OpusSettings& s) {
  if (s.channels != 1 && s.channels != 2)
    throw Error(Errc::kInvalidArgument,
                "opus: " + std::to_string(s.channels) + " channels; Opus here takes 1 or 2");
  if (s.frameMs != 5 && s.frameMs != 10 && s.frameMs != 20)
    throw Error(Errc::kInvalidArgument,
                "opus: " + std::to_string(s.frameMs) + " ms frames; give 5, 10 or 20");
  if (s.bitrateBps < 6'000 || s.bitrateBps > 510'000)
    throw Error(Errc::kInvalidArgument,
                "opus: bitrate " + std::to_string(s.bitrateBps) + " b/s is outside 6000..510000");
  if (s.expectedLossPercent > 100)
    throw Error(Errc::kInvalidArgument,
                "opus: expected loss " + std::to_string(s.expectedLossPercent) + " % is outside 0..100");
}

}  // namespace

void OpusAudioEncoder::Deleter::operator()(OpusEncoder* e) const noexcept {
  opus_encoder_destroy(e);
}

OpusAudioEncoder::OpusAudioEncoder(const OpusSettings& settings) : settings_(settings) {
  check(settings_);
  int rc = OPUS_OK;
  // Frames under 10 ms are CELT's alone (SILK, and with it in-band FEC, needs 10 ms), so there the
  // low-delay application costs nothing more and takes 4 ms off the lookahead (2.5 ms against 6.5 ms).
  const int application =
      settings_.frameMs < 10 ? OPUS_APPLICATION_RESTRICTED_LOWDELAY : OPUS_APPLICATION_VOIP;
  enc_.reset(opus_encoder_create(static_cast<opus_int32>(kSampleRate), static_cast<int>(settings_.channels),
                                 application, &rc));
  if (rc != OPUS_OK || !enc_) opusFailed("opus_encoder_create", rc);
  control(OPUS_SET_BITRATE_REQUEST, static_cast<std::int32_t>(settings_.bitrateBps), "OPUS_SET_BITRATE");
  control(OPUS_SET_INBAND_FEC_REQUEST, settings_.inbandFec ? 1 : 0, "OPUS_SET_INBAND_FEC");
  control(OPUS_SET_PACKET_LOSS_PERC_REQUEST, static_cast<std::int32_t>(settings_.expectedLossPercent),
          "OPUS_SET_PACKET_LOSS_PERC");
  control(OPUS_SET_DTX_REQUEST, settings_.dtx ? 1 : 0, "OPUS_SET_DTX");
  // Live sound: the encoder's own lookahead is all the delay it adds; complexity 5 keeps it a few % of a
  // core.
  control(OPUS_SET_COMPLEXITY_REQUEST, 5, "OPUS_SET_COMPLEXITY");
  // The lookahead depends only on the sample rate and the application, both fixed here.
  opus_int32 lookahead = 0;
  if (const int lrc = opus_encoder_ctl(enc_.get(), OPUS_GET_LOOKAHEAD(&lookahead)); lrc != OPUS_OK)
    opusFailed("opus_encoder_ctl(OPUS_GET_LOOKAHEAD)", lrc);
  lookaheadFrames_ = static_cast<std::uint32_t>(lookahead);
}

OpusAudioEncoder::~OpusAudioEncoder() = default;
OpusAudioEncoder::OpusAudioEncoder(OpusAudioEncoder&&) noexcept = default;
OpusAudioEncoder& OpusAudioEncoder::operator=(OpusAudioEncoder&&) noexcept = default;

void OpusAudioEncoder::control(int request, std::int32_t value, const char* what) {
  const int rc = opus_encoder_ctl(enc_.get(), request, static_cast<opus_int32>(value));
  if (rc != OPUS_OK) opusFailed((std::string("opus_encoder_ctl(") + what + ")").c_str(), rc);
}

void OpusAudioEncoder::setBitrate(std::uint32_t bps) {
  OpusSettings s = settings_;
  s.bitrateBps = bps;
  check(s);
  control(OPUS_SET_BITRATE_REQUEST, static_cast<std::int32_t>(bps), "OPUS_SET_BITRATE");
  settings_ = s;
}

void OpusAudioEncoder::setExpectedLoss(std::uint32_t percent) {
  OpusSettings s = settings_;
  s.expectedLossPercent = percent;
  check(s);
  control(OPUS_SET_PACKET_LOSS_PERC_REQUEST, static_cast<std::int32_t>(percent), "OPUS_SET_PACKET_LOSS_PERC");
  settings_ = s;
}

void OpusAudioEncoder::setInbandFec(bool on) {
  control(OPUS_SET_INBAND_FEC_REQUEST, on ? 1 : 0, "OPUS_SET_INBAND_FEC");
  settings_.inbandFec = on;
}

void OpusAudioEncoder::setDtx(bool on) {
  control(OPUS_SET_DTX_REQUEST, on ? 1 : 0, "OPUS_SET_DTX");
  settings_.dtx = on;
}

std::vector<OpusPacket> OpusAudioEncoder::encode(const AudioFrame& block) {
  if (block.channels != settings_.channels) {
    throw Error(Errc::kInvalidArgument, "opus: a block of " + std::to_string(block.channels) +
                                            " channels reached an encoder made for " +
                                            std::to_string(settings_.channels));
  }
  const auto pendingFrames = static_cast<std::int64_t>(pending_.size() / settings_.channels);
  const std::int64_t expectedNs = pendingNs_ + framesToNs(pendingFrames);
  // Packet times follow the sample count, so the jitter of a device's stamps (its delay is read in
  // whole periods on some cards) does not reach them, slewed toward the stamps' average (drift). More
  // than 5 ms off (half a 10 ms block): blocks were dropped upstream or the clock jumped; start again
  // from this block, keeping the samples pending.
  const std::int64_t errorNs = block.captureNs - expectedNs;
  if (!timed_ || std::llabs(errorNs) > kResyncNs) {
    pendingNs_ = block.captureNs - framesToNs(pendingFrames);
    timed_ = true;
  } else {
    pendingNs_ += std::clamp(errorNs / kSlewDivisor, -kMaxSlewNs, kMaxSlewNs);
  }
  pending_.insert(pending_.end(), block.samples.begin(), block.samples.end());

  // The stamp's sign. libopus delays what it decodes by its lookahead L (312 sample frames at 48 kHz:
  // 2.5 ms of CELT overlap + 4 ms of delay compensation): decoded from the stream's start, output sample
  // n is input sample n - L (the first L are start-up, what an Ogg Opus file's pre-skip drops). A packet
  // made from input samples k..k+N-1 therefore decodes to input samples k-L..k+N-1-L, and a receiver
  // plays its first decoded sample at the packet's RTP timestamp, which the sender reports map to this
  // stamp. So the stamp is the capture instant of input sample k-L: input time minus L. Stamped with
  // input sample k's instant, every sound would play L (6.5 ms) late against the picture.
  std::vector<OpusPacket> out;
  const std::size_t perPacket = static_cast<std::size_t>(frameSize()) * settings_.channels;
  std::size_t used = 0;
  while (pending_.size() - used >= perPacket) {
    OpusPacket p;
    p.data.resize(kMaxPacketBytes);
    const opus_int32 n = opus_encode(enc_.get(), pending_.data() + used, static_cast<int>(frameSize()),
                                     p.data.data(), kMaxPacketBytes);
    if (n < 0) opusFailed("opus_encode", n);
    p.data.resize(static_cast<std::size_t>(n));
    p.frames = frameSize();
    p.captureNs = pendingNs_ - lookaheadNs();
    p.sequence = sequence_++;
    pendingNs_ += framesToNs(frameSize());
    used += perPacket;
    out.push_back(std::move(p));
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(used));
  return out;
}

}  // namespace zerohop::audio
