#include "audio/audio_track.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "audio/alsa_source.hpp"
#include "audio/fec_loss.hpp"
#include "audio/tone_source.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::audio {

std::unique_ptr<AudioSource> openAudioSource(const std::string& spec, std::uint32_t blockFrames) {
  if (blockFrames == 0) blockFrames = 480;
  if (spec == "test") {
    ToneSettings tone;
    tone.periodFrames = blockFrames;
    return std::make_unique<ToneSource>(tone);
  }
  if (spec.rfind("alsa:", 0) == 0 && spec.size() > 5) {
    AlsaSettings settings;
    settings.device = spec.substr(5);
    settings.periodFrames = blockFrames;
    return openAlsaSource(settings);
  }
  throw Error(Errc::kInvalidArgument, "audio source '" + spec +
                                          "': give test (the tone that clicks at the A/V marker) or "
                                          "alsa:DEVICE (alsa:default, alsa:hw:1,0, alsa:plughw:1,0; zerohop probe lists them)");
}

namespace {
// The encoder takes the source's channel count.
OpusSettings forSource(OpusSettings opus, const AudioSource& source) {
  opus.channels = source.info().channels;
  return opus;
}

// One Opus packet for the receivers: every packet decodes on its own (keyframe); its capture instant on
// the clock video frames carry, and the wall clock of that instant.
EncodedUnitPtr opusUnit(std::vector<std::uint8_t>&& bytes, std::uint64_t sequence, std::int64_t captureNs) {
  auto unit = std::make_shared<EncodedUnit>();
  unit->codec = Codec::kOpus;
  unit->bytes = std::move(bytes);
  unit->keyframe = true;
  unit->sequence = sequence;
  unit->ptsNs = captureNs;
  unit->wallClockMs = (realtimeNs() - (monotonicNs() - captureNs)) / 1'000'000;
  return unit;
}
}  // namespace

AudioTrack::AudioTrack(std::unique_ptr<AudioSource> source, OpusSettings opus, Deliver deliver)
    : source_(std::move(source)), encoder_(forSource(opus, *source_)), deliver_(std::move(deliver)) {
  stats_.source = source_->info().name;
  stats_.expectedLossPercent = encoder_.settings().expectedLossPercent;
}

AudioTrack::~AudioTrack() { stop(); }

void AudioTrack::start() {
  if (captureThread_.joinable()) return;
  {
    std::lock_guard lock(statsMutex_);
    stats_.running = true;
  }
  encodeThread_ = std::thread([this] { encode(); });
  captureThread_ = std::thread([this] { capture(); });
}

void AudioTrack::stop() noexcept {
  stop_.store(true);
  if (captureThread_.joinable()) captureThread_.join();
  queue_.close();
  if (encodeThread_.joinable()) encodeThread_.join();
  std::lock_guard lock(statsMutex_);
  stats_.running = false;
}

AudioTrackStats AudioTrack::stats() const {
  AudioTrackStats s;
  {
    std::lock_guard lock(statsMutex_);
    s = stats_;
  }
  s.capture = source_->counters();  // thread-safe (audio_source.hpp)
  s.queueDrops = queue_.dropped();
  return s;
}

void AudioTrack::followLoss(std::int64_t nowNs) {
  if (!lossProbe_ || nowNs - lossCheckedNs_ < 1'000'000'000) return;
  lossCheckedNs_ = nowNs;
  smoothedLoss_ = nextFecLoss(smoothedLoss_, lossProbe_());  // fec_loss.hpp: one report reads a short window
  const std::uint32_t percent = fecLossPercent(smoothedLoss_, kMaxExpectedLossPercent);
  if (percent == encoder_.settings().expectedLossPercent) return;
  encoder_.setExpectedLoss(percent);
  log::debug("audio ", stats_.source, ": in-band FEC set for ", percent, " % loss");
  std::lock_guard lock(statsMutex_);
  stats_.expectedLossPercent = percent;
}

void AudioTrack::pass(AudioFrame&& packet) {
  if (passSequence_ == 0)
    log::info("audio ", stats_.source, ": its Opus packets go to the receivers as they came (",
              packet.durationNs() / 1'000'000, " ms each; not decoded, not encoded again)");
  deliver_(opusUnit(std::move(packet.opus), passSequence_++, packet.captureNs));
  std::lock_guard lock(statsMutex_);
  ++stats_.packets;
  ++stats_.passed;
}

void AudioTrack::capture() {
  using namespace std::chrono_literals;
  while (!stop_.load()) {
    try {
      if (auto block = source_->next(100ms)) queue_.push(std::move(*block));
    } catch (const Error& e) {
      log::error("audio ", stats_.source, ": ", e.what(), "; the sound stops, the picture goes on");
      std::lock_guard lock(statsMutex_);
      ++stats_.failures;
      stats_.lastError = e.what();
      stats_.running = false;
      return;
    }
  }
}

void AudioTrack::encode() {
  using namespace std::chrono_literals;
  for (;;) {
    auto block = queue_.pop(100ms);
    if (!block) {
      if (queue_.closed()) return;
      continue;
    }
    if (!block->opus.empty()) {
      pass(std::move(*block));
      continue;
    }
    const std::int64_t t0 = monotonicNs();
    followLoss(t0);
    std::vector<OpusPacket> packets;
    try {
      packets = encoder_.encode(*block);
    } catch (const Error& e) {
      log::error("audio ", stats_.source, ": ", e.what());
      std::lock_guard lock(statsMutex_);
      ++stats_.failures;
      stats_.lastError = e.what();
      continue;
    }
    const std::int64_t spent = monotonicNs() - t0;
    for (OpusPacket& p : packets) deliver_(opusUnit(std::move(p.data), p.sequence, p.captureNs));
    std::lock_guard lock(statsMutex_);
    stats_.packets += packets.size();
    // The encode time per packet: blocks of 10 ms make a packet every second block.
    encodeNsWindow_ += static_cast<double>(spent);
    encodeWindowCount_ += static_cast<unsigned>(packets.size());
    if (encodeWindowCount_ >= 50) {
      stats_.encodeMsPerFrame = encodeNsWindow_ / encodeWindowCount_ / 1e6;
      encodeNsWindow_ = 0;
      encodeWindowCount_ = 0;
    }
  }
}

}  // namespace zerohop::audio
