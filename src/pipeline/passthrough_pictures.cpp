#include "passthrough_pictures.hpp"

#include <ctime>
#include <utility>

#include "core/latency_stats.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

// Units waiting for the pictures thread: 3 s at 30 fps, room for a start's catch-up. Beyond it the decode
// is slower than the camera: the oldest unit goes, and the chain with it.
constexpr std::size_t kQueueUnits = 90;
constexpr std::size_t kDecodeWindow = 300;
constexpr std::int64_t kLogGapNs =
    60'000'000'000;  // one line a minute about errors, and about falling behind

std::int64_t threadCpuNs() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

PassthroughPictures::PassthroughPictures(const SourceInfo& source, Publisher* framesShare,
                                         DecoderFactory makeDecoder, Hooks hooks)
    : source_(source),
      framesShare_(framesShare),
      makeDecoder_(std::move(makeDecoder)),
      hooks_(std::move(hooks)),
      queue_(kQueueUnits) {
  status_.decoder = makeDecoder_()->name();  // throws where none can be made
  status_.available = true;
  decodeMs_.reserve(kDecodeWindow);
  thread_ = std::thread([this] { run(); });
}

PassthroughPictures::~PassthroughPictures() {
  stop();
}

void PassthroughPictures::offer(EncodedUnitPtr unit) noexcept {
  queue_.push(Item{std::move(unit), ++offered_});  // full: the oldest goes (the thread sees the gap)
}

void PassthroughPictures::stop() noexcept {
  queue_.close();
  if (thread_.joinable()) thread_.join();
}

void PassthroughPictures::run() noexcept {
  while (!queue_.closed()) {
    auto item = queue_.pop(100ms);
    if (!item) continue;
    try {
      handle(*item);
    } catch (const std::exception& e) {  // the share's slot, a hook: this unit's picture is lost alone
      log::warn("passthrough pictures: ", e.what());
    }
    std::lock_guard lock(mutex_);
    status_.decodeCpuNs = threadCpuNs();
  }
}

void PassthroughPictures::handle(const Item& item) {
  const bool gap = item.number != lastNumber_ + 1;
  lastNumber_ = item.number;
  if (gap) {
    const std::int64_t now = monotonicNs();
    if (decoder_) {
      {
        std::lock_guard lock(mutex_);
        ++status_.behind;
      }
      if (lastBehindLogNs_ == 0 || now - lastBehindLogNs_ >= kLogGapNs) {
        lastBehindLogNs_ = now;
        log::warn(source_.description,
                  ": decoding its H.264 beside the passthrough is slower than the camera; "
                  "its pictures stop until the next IDR (/stats passthrough_decode.behind; at most one such "
                  "line a minute)");
      }
    }
    breakChain();
  }
  const EncodedUnitPtr& unit = item.unit;
  if (!unit) {
    breakChain();
  } else if (unit->keyframe) {
    gop_.clear();
    gop_.push_back(unit);
  } else if (!gop_.empty()) {
    if (gop_.size() < kMaxCatchUpUnits) {
      gop_.push_back(unit);
    } else {
      gop_.clear();  // too long to catch up on: a start waits for the next IDR
    }
  }
  const bool readers = framesShare_ && framesShare_->stats().readersConnected > 0;
  const bool wanted = readers || (hooks_.wanted && hooks_.wanted());
  if (wanted != running_) {
    running_ = wanted;
    std::lock_guard lock(mutex_);
    status_.running = wanted;
  }
  const Frame* picture = nullptr;
  if (!wanted) {
    decoder_.reset();
  } else if (unit && !unusable_) {
    picture = decodeWanted(unit);
  }
  if (hooks_.picture) hooks_.picture(picture);
}

const Frame* PassthroughPictures::hostPicture() {
  return decoder_ ? decoder_->hostPicture() : nullptr;
}

void PassthroughPictures::breakChain() {
  gop_.clear();
  decoder_.reset();  // a new decoder at the next IDR: nothing of the broken chain is referred to again
}

const Frame* PassthroughPictures::decodeWanted(const EncodedUnitPtr& unit) {
  if (!decoder_) {
    // A start: the units since the last IDR bring a new decoder to this one (gop_ ends with it).
    if (gop_.empty() || gop_.back() != unit) return nullptr;  // waiting for an IDR
    try {
      decoder_ = makeDecoder_();
    } catch (const Error& e) {  // the device went away, out of memory: no pictures, the viewers unaffected
      unusable_ = true;
      log::error(
          source_.description, ": no decoder for its pictures beside the passthrough (", e.what(),
          "); the frame share, VP8 viewers and the lower rungs get none; H.264 viewers are not affected");
      return nullptr;
    }
    {
      std::lock_guard lock(mutex_);
      ++status_.starts;
    }
    for (std::size_t i = 0; i + 1 < gop_.size() && decoder_; ++i) decodeOne(*gop_[i], true);
  }
  const Frame* picture = decoder_ ? decodeOne(*unit, false) : nullptr;
  if (!decoder_) gop_.clear();  // refused: the pictures wait for the next IDR
  return picture;
}

const Frame* PassthroughPictures::decodeOne(const EncodedUnit& unit, bool catchUp) {
  const std::int64_t start = monotonicNs();
  const Frame* picture = nullptr;
  try {
    picture = decoder_->decode(unit, !catchUp);
  } catch (const Error& e) {
    decoder_.reset();
    {
      std::lock_guard lock(mutex_);
      ++status_.errors;
      if (e.code() == Errc::kUnsupported) {  // the stream itself: no later unit decodes either
        status_.available = false;
        status_.unavailableReason = e.what();
      }
    }
    if (e.code() == Errc::kUnsupported) {
      unusable_ = true;
      log::error(
          source_.description, ": its pictures cannot be decoded beside the passthrough (", e.what(),
          "); the frame share, VP8 viewers and the lower rungs get none; H.264 viewers are not affected");
      return nullptr;
    }
    if (lastErrorLogNs_ == 0 || start - lastErrorLogNs_ >= kLogGapNs) {
      lastErrorLogNs_ = start;
      log::warn(source_.description, ": its H.264 could not be decoded beside the passthrough (", e.what(),
                "); its pictures wait for the next IDR (at most one such line a minute)");
    }
    return nullptr;
  }
  const std::int64_t end = monotonicNs();
  std::lock_guard lock(mutex_);
  const double ms = static_cast<double>(end - start) / 1e6;
  if (decodeMs_.size() < kDecodeWindow) {
    decodeMs_.push_back(ms);
  } else {
    decodeMs_[decodeNext_] = ms;
  }
  decodeNext_ = (decodeNext_ + 1) % kDecodeWindow;
  if (catchUp) {
    ++status_.caughtUpUnits;
  } else if (picture) {
    ++status_.pictures;
  }
  return picture;
}

PassthroughDecodeStatus PassthroughPictures::status() const {
  std::lock_guard lock(mutex_);
  PassthroughDecodeStatus s = status_;
  const Percentiles p = percentiles(decodeMs_);
  s.decodeMsP50 = p.p50Ms;
  s.decodeMsP99 = p.p99Ms;
  return s;
}

}  // namespace zerohop
