// RtspAudioSource (rtsp_audio_source.hpp): the audio stream of the camera's RTSP session.
#include "rtsp/rtsp_audio_source.hpp"

#include <algorithm>
#include <string>
#include <thread>
#include <variant>

#include "audio/opus_packet.hpp"
#include "rtsp/rtsp_connection.hpp"
#include "rtsp/rtsp_session.hpp"
#include "rtsp/rtsp_source.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::rtsp {

RtspAudioSource::RtspAudioSource(const RtspUrl& url, RtspAudioPolicy policy, Connection connection)
    : url_(url), name_(url.masked()), policy_(policy) {
  if (connection == kBesideThePicture) {
    connection_ = RtspConnection::forSound(url_);
    lastBlockNs_ = monotonicNs();
  } else {
    // Throws for a missing element, before serve starts.
    startSession(std::make_shared<RtspSession>(
        url_, SessionStreams{.video = false, .audio = true, .passOpus = policy_.passOpus}));
  }
}

RtspAudioSource::~RtspAudioSource() {
  if (connection_) connection_->releaseSound();
}

audio::AudioSourceInfo RtspAudioSource::info() const {
  return {name_, 1, 960};
}

audio::AudioSourceCounters RtspAudioSource::counters() const {
  audio::AudioSourceCounters c;
  c.blocks = blocks_.load();
  c.overruns = dropped_.load();
  c.errors = errors_.load();
  c.reopens = reopens_.load();
  return c;
}

void RtspAudioSource::startSession(std::shared_ptr<RtspSession> session) {
  session_ = std::move(session);
  sessionDelivered_ = false;
  arrivalAnchored_ = false;
  stallSaid_ = false;
  lastBlockNs_ = monotonicNs();
}

std::optional<audio::AudioFrame> RtspAudioSource::next(std::chrono::milliseconds timeout) {
  const std::int64_t deadline = monotonicNs() + std::chrono::nanoseconds(timeout).count();
  const std::int64_t stallNs = std::chrono::nanoseconds(policy_.stallTimeout).count();
  while (monotonicNs() < deadline) {
    if (!session_ && connection_) {
      // Beside the picture: the sound of the picture's next connection (the picture reconnects).
      if (auto next = connection_->awaitSession(generation_, deadline)) startSession(std::move(next));
      continue;
    }
    if (!session_) {
      const std::int64_t now = monotonicNs();
      if (now < nextAttemptNs_) {
        // Waiting for the next attempt (the capture thread's own time: nothing else waits on it).
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(deadline, nextAttemptNs_) - now));
        continue;
      }
      startSession(std::make_shared<RtspSession>(
          url_, SessionStreams{.video = false, .audio = true, .passOpus = policy_.passOpus}));
    }
    const std::uint64_t droppedBefore = session_->audioDropped();
    auto got = session_->waitAudio(stallSaid_ ? deadline : std::min(deadline, lastBlockNs_ + stallNs));
    dropped_ += session_->audioDropped() - droppedBefore;
    if (auto* block = std::get_if<ArrivedBlock>(&got)) return deliver(std::move(*block));
    SessionFailure failure;
    if (auto* f = std::get_if<SessionFailure>(&got)) {
      failure = std::move(*f);
    } else if (!stallSaid_ && monotonicNs() - lastBlockNs_ >= stallNs) {
      failure = {FailureKind::kStalled,
                 "no sound from the camera for " + std::to_string(policy_.stallTimeout.count()) + " ms"};
      if (connection_) {
        // The connection is the picture's too: the sound's silence does not drop it.
        stallSaid_ = true;
        ++errors_;
        log::warn("audio ", name_, ": ", failure.message,
                  " while its connection is up; waiting for it (the picture goes on)");
        continue;
      }
    } else {
      continue;  // the deadline: the loop ends
    }
    session_.reset();
    // The sound's own faults end it; beside the picture, the connection's are the picture's to handle.
    if (failure.kind == FailureKind::kNoUsableAudio)
      throw Error(
          failure.message.find("no audio stream") != std::string::npos ? Errc::kNotFound : Errc::kUnsupported,
          failure.message);
    if (!connection_ && failure.kind == FailureKind::kUnauthorized)
      throw Error(Errc::kUnavailable, failure.message);
    if (!connection_ && failure.kind == FailureKind::kNotFound) throw Error(Errc::kNotFound, failure.message);
    ++errors_;
    if (connection_) {
      // The picture says each failed attempt; the sound says the loss once.
      if (!outage_)
        log::warn("audio ", name_, ": ", failure.message,
                  "; the sound comes back with the camera's next connection (the picture reconnects)");
      outage_ = true;
      continue;
    }
    outage_ = true;
    delay_ = delay_.count() == 0 ? policy_.firstRetry : std::min(policy_.maxRetry, delay_ * 2);
    nextAttemptNs_ = monotonicNs() + std::chrono::nanoseconds(delay_).count();
    log::warn("audio ", name_, ": ", failure.message, "; trying again in ", delay_.count(),
              " ms (the picture goes on)");
  }
  return std::nullopt;
}

std::optional<audio::AudioFrame> RtspAudioSource::deliver(ArrivedBlock&& block) {
  lastBlockNs_ = block.arrivalMonotonicNs;
  stallSaid_ = false;
  if (!sessionDelivered_) {
    sessionDelivered_ = true;
    if (outage_) {
      ++reopens_;
      log::info("audio ", name_, ": the camera's sound is back");
    }
    outage_ = false;
    delay_ = std::chrono::milliseconds(0);
  }
  audio::AudioFrame frame;
  frame.channels = 1;
  if (!block.opus.empty()) {
    frame.opusFrames = audio::opusPacketFrames(block.opus.data(), block.opus.size());
    if (frame.opusFrames == 0) {
      ++errors_;  // not an Opus packet: the receivers would not decode it either
      return std::nullopt;
    }
    frame.opus = std::move(block.opus);
  } else {
    frame.samples = std::move(block.samples);
  }
  frame.sequence = sequence_++;
  const std::int64_t duration = frame.durationNs();
  const CaptureTime t = captureTimeOf(block.ntpNs, block.arrivalMonotonicNs, block.arrivalRealtimeNs);
  if (t.clock == CaptureClock::kCamera) {
    frame.captureNs = t.monotonicNs;  // the camera's clock at the block's RTP time
  } else if (block.ptsNs >= 0) {
    // Before the first sender report: the block's RTP time (the pipeline's timestamps follow the
    // camera's RTP clock alone, buffer-mode none: contiguous blocks) placed by the least delayed block
    // so far, so no block seems captured after it arrived, and a backlog after a stall (late arrivals)
    // leaves the placement alone. The first blocks come in a burst: the placement settles on them.
    const std::int64_t offset = block.arrivalMonotonicNs - duration - block.ptsNs;
    if (!arrivalAnchored_ || offset < arrivalOffsetNs_) arrivalOffsetNs_ = offset;
    arrivalAnchored_ = true;
    frame.captureNs = block.ptsNs + arrivalOffsetNs_;
  } else {
    frame.captureNs = block.arrivalMonotonicNs - duration;
  }
  clock_.store(t.clock);
  const auto k = static_cast<std::size_t>(t.clock);
  if (!clockLogged_[k]) {
    clockLogged_[k] = true;
    log::info("audio ", name_, ": capture time ",
              t.clock == CaptureClock::kCamera ? "from the camera's clock (RTCP sender reports), as its video"
              : t.clock == CaptureClock::kArrival
                  ? "from the arrival until the camera's first sender report"
                  : "from the arrival: the camera's clock is out of step with this host's");
  }
  ++blocks_;
  return frame;
}

std::unique_ptr<audio::AudioSource> openRtspAudioSource(const SourceSpec& spec) {
  if (spec.kind != "rtsp")
    throw Error(Errc::kInvalidArgument,
                "audio \"rtsp\" is an IP camera's own sound: its source must be rtsp://...");
  return std::make_unique<RtspAudioSource>(rtspUrlOf(spec), RtspAudioPolicy{},
                                           RtspAudioSource::kBesideThePicture);
}

}  // namespace zerohop::rtsp
