#include "passthrough_pictures.hpp"

extern "C" {
#include <libavutil/frame.h>
}

#include <ctime>
#include <utility>

#include "core/latency_stats.hpp"
#include "rtsp/h264_cpu_decoder.hpp"
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
constexpr const char* kDecoderName = "libavcodec H.264 (CPU)";

std::int64_t threadCpuNs() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

PassthroughPictures::PassthroughPictures(const SourceInfo& source, Publisher* framesShare, Hooks hooks)
    : source_(source),
      framesShare_(framesShare),
      hooks_(std::move(hooks)),
      copier_(makeCpuConverter()),
      queue_(kQueueUnits) {
  rtsp::H264CpuDecoder probe;  // throws kUnsupported where this FFmpeg has no H.264 decoder
  status_.available = true;
  status_.decoder = kDecoderName;
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
    stopDecoding();
  } else if (unit && !unusable_) {
    picture = decodeWanted(unit);
  }
  if (picture && framesShare_) share(*picture);
  if (hooks_.picture) hooks_.picture(picture);
}

void PassthroughPictures::breakChain() {
  gop_.clear();
  decoder_.reset();  // a new decoder at the next IDR: nothing of the broken chain is referred to again
}

void PassthroughPictures::stopDecoding() {
  decoder_.reset();
  decoded_.reset();
}

const Frame* PassthroughPictures::decodeWanted(const EncodedUnitPtr& unit) {
  if (!decoder_) {
    // A start: the units since the last IDR bring a new decoder to this one (gop_ ends with it).
    if (gop_.empty() || gop_.back() != unit) return nullptr;  // waiting for an IDR
    decoder_ = std::make_unique<rtsp::H264CpuDecoder>();
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
  try {
    decoded_ = decoder_->decode(unit.bytes.data(), unit.bytes.size());
  } catch (const Error& e) {
    decoded_.reset();
    decoder_.reset();
    {
      std::lock_guard lock(mutex_);
      ++status_.errors;
      if (e.code() == Errc::kUnsupported) {  // not 8-bit 4:2:0: no later unit decodes either
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
  {
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
    } else if (decoded_) {
      ++status_.pictures;
    }
  }
  if (!decoded_ || catchUp) return nullptr;
  Frame& f = picture_;
  f = Frame{};
  f.format = PixelFormat::kI420;
  f.memory = MemoryKind::kHost;
  f.width = static_cast<std::uint32_t>(decoded_->width);
  f.height = static_cast<std::uint32_t>(decoded_->height);
  f.planeCount = 3;
  for (int i = 0; i < 3; ++i) {
    f.data[i] = decoded_->data[i];
    f.pitch[i] = static_cast<std::uint32_t>(decoded_->linesize[i]);
    f.bytesUsed += static_cast<std::size_t>(decoded_->linesize[i]) * (i == 0 ? f.height : (f.height + 1) / 2);
  }
  f.capacity = f.bytesUsed;
  f.sequence = unit.sequence;
  f.keyframe = unit.keyframe;
  f.wallClockMs = unit.wallClockMs;
  f.times = unit.times;
  f.times.mark(Stage::kConvert, end);
  return &picture_;
}

void PassthroughPictures::share(const Frame& picture) {
  if (picture.width != source_.width || picture.height != source_.height) {
    if (!shareSizeWarned_) {
      shareSizeWarned_ = true;
      log::warn(source_.description, ": its H.264 decodes to ", picture.width, "x", picture.height,
                " while its stream said ", source_.width, "x", source_.height,
                "; the frame share is made for the latter and gets none of these pictures");
    }
    return;
  }
  WriteSlot slot = framesShare_->acquireWrite();
  Frame frame = slot.frame();
  copier_->convert(picture, frame);
  frame.sequence = picture.sequence;
  frame.keyframe = picture.keyframe;
  frame.wallClockMs = picture.wallClockMs;
  frame.times = picture.times;
  framesShare_->commit(std::move(slot), frame);
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
