#include "capture/reconnecting_source.hpp"

#include <algorithm>
#include <thread>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::capture_detail {
namespace {

bool cameraGone(const Error& e) {
  return e.code() == Errc::kNotFound || e.code() == Errc::kUnavailable;
}

}  // namespace

ReconnectingSource::ReconnectingSource(const SourceSpec& spec, const SourceOptions& options,
                                       ReconnectPolicy policy)
    : spec_(spec), options_(options), policy_(policy), delay_(policy.firstDelay) {
  session_ = openV4l2Source(spec_, options_);
  info_ = session_->info();
}

SourceInfo ReconnectingSource::info() const {
  std::lock_guard lock(mutex_);
  return info_;
}

SourceCounters ReconnectingSource::counters() const {
  std::lock_guard lock(mutex_);
  SourceCounters c = past_;
  if (session_) {
    const SourceCounters now = session_->counters();
    c.frames += now.frames;
    c.drops += now.drops;
    c.errors += now.errors;
    c.stalls += now.stalls;
  }
  return c;
}

bool ReconnectingSource::requestKeyframe() {
  std::lock_guard lock(mutex_);
  return session_ && session_->requestKeyframe();
}

void ReconnectingSource::lose(const Error& why) {
  log::warn("v4l2 ", spec_.path, ": camera lost (", why.what(), "); reconnecting with back-off up to ",
            policy_.maxDelay.count(), " ms");
  std::unique_ptr<FrameSource> old;
  {
    std::lock_guard lock(mutex_);
    const SourceCounters c = session_->counters();
    past_.frames += c.frames;
    past_.drops += c.drops;
    past_.errors += c.errors;
    past_.stalls += c.stalls + 1;  // the outage itself
    old = std::move(session_);
  }
  old.reset();  // stops streaming; buffers live on while leases hold them
  delay_ = policy_.firstDelay;
  nextAttempt_ = std::chrono::steady_clock::now() + delay_;
}

bool ReconnectingSource::tryReopen() {
  if (std::chrono::steady_clock::now() < nextAttempt_) return false;
  try {
    auto fresh = openV4l2Source(spec_, options_);
    log::info("v4l2 ", spec_.path, ": camera is back, capture resumed");
    std::lock_guard lock(mutex_);
    info_ = fresh->info();
    session_ = std::move(fresh);
    delay_ = policy_.firstDelay;
    return true;
  } catch (const Error& e) {
    if (!cameraGone(e)) throw;
    log::debug("v4l2 ", spec_.path, ": still gone (", e.what(), "), next try in ", delay_.count(), " ms");
    nextAttempt_ = std::chrono::steady_clock::now() + delay_;
    delay_ = std::min(delay_ * 2, policy_.maxDelay);
    return false;
  }
}

std::optional<FrameLease> ReconnectingSource::next(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!session_ && !tryReopen()) {
      const auto wake = std::min(deadline, nextAttempt_);
      std::this_thread::sleep_until(wake);
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      continue;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    try {
      return session_->next(std::max(left, std::chrono::milliseconds(0)));
    } catch (const Error& e) {
      if (!cameraGone(e)) throw;
      lose(e);
    }
  }
}

}  // namespace zerohop::capture_detail

namespace zerohop {

std::unique_ptr<FrameSource> openReconnectingV4l2Source(const SourceSpec& spec, const SourceOptions& options,
                                                        ReconnectPolicy policy) {
  return std::make_unique<capture_detail::ReconnectingSource>(spec, options, policy);
}

}  // namespace zerohop
