// RtspSource (rtsp_source.hpp): an RTSP camera's H.264 access units as source frames.
#include "rtsp/rtsp_source.hpp"

#include <gst/gst.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>
#include <unordered_map>
#include <variant>

#include "gpupath/nvdec_source.hpp"
#include "rtsp/decoded_source.hpp"
#include "rtsp/gst_support.hpp"
#include "rtsp/parameter_sets.hpp"
#include "rtsp/rtsp_connection.hpp"
#include "rtsp/rtsp_session.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace rtsp {
namespace {

constexpr double kAssumedFps = 30;
// Above this a stated rate is a broken VUI, not a camera's (seen: 1000000000/1 from an encoder given a
// variable-rate input); it is treated as no rate at all.
constexpr double kMaxPlausibleFps = 1000;

Errc errcOf(FailureKind kind) {
  switch (kind) {
    case FailureKind::kNotFound:
      return Errc::kNotFound;
    case FailureKind::kNoUsableStream:
      return Errc::kUnsupported;
    default:
      return Errc::kUnavailable;
  }
}

std::string seconds(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(d.count()) / 1000.0);
  return text;
}

// A unit h264parse / h265parse marked as no delta unit: an IDR (with its parameter sets before it,
// config-interval=-1).
bool isIdr(const ArrivedUnit& unit) {
  GstBuffer* buffer = gst_sample_get_buffer(unit.sample.get());
  return buffer && !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
}

}  // namespace

/// The GstSamples behind outstanding FrameLeases, mapped for reading; releasing a lease unmaps and
/// drops its sample. Thread-safe.
class RtspSource::Leases final : public SlotOwner {
 public:
  struct Held {
    std::uint32_t id = 0;
    std::uint8_t* data = nullptr;
    std::size_t size = 0;
  };

  /// Maps the sample's buffer and keeps both; throws Error if the buffer cannot be mapped.
  Held hold(SamplePtr sample) {
    Entry entry;
    entry.sample = std::move(sample);
    GstBuffer* buffer = gst_sample_get_buffer(entry.sample.get());
    if (!buffer || !gst_buffer_map(buffer, &entry.map, GST_MAP_READ))
      throw Error(Errc::kInternal, "gst_buffer_map failed on an RTSP access unit");
    Held held{0, entry.map.data, entry.map.size};
    std::lock_guard lock(mutex_);
    held.id = next_++;
    held_.emplace(held.id, std::move(entry));
    return held;
  }

  void releaseSlot(std::uint32_t slot) noexcept override {
    Entry dropped;
    {
      std::lock_guard lock(mutex_);
      auto it = held_.find(slot);
      if (it == held_.end()) return;
      dropped = std::move(it->second);
      held_.erase(it);
    }
    gst_buffer_unmap(gst_sample_get_buffer(dropped.sample.get()), &dropped.map);
  }

  ~Leases() override {
    for (auto& [id, entry] : held_) gst_buffer_unmap(gst_sample_get_buffer(entry.sample.get()), &entry.map);
  }

 private:
  struct Entry {
    SamplePtr sample;
    GstMapInfo map{};
  };
  std::mutex mutex_;
  std::uint32_t next_ = 0;
  std::unordered_map<std::uint32_t, Entry> held_;
};

RtspSource::RtspSource(const RtspUrl& url, RtspPolicy policy)
    : url_(url),
      name_(url.masked()),
      policy_(policy),
      leases_(std::make_shared<Leases>()),
      connection_(RtspConnection::forPicture(url)) {
  try {
    open();
  } catch (...) {
    connection_->releasePicture();
    throw;
  }
}

void RtspSource::open() {
  startSession();
  const std::int64_t deadline = monotonicNs() + std::chrono::nanoseconds(policy_.openTimeout).count();
  while (!pending_) {
    auto got = session_->wait(deadline);
    if (const auto* failure = std::get_if<SessionFailure>(&got))
      throw Error(errcOf(failure->kind), name_ + ": " + failure->message);
    if (std::holds_alternative<std::monostate>(got)) {
      const std::string offered = session_->offered();
      throw Error(Errc::kUnavailable,
                  name_ + ": no IDR within " + seconds(policy_.openTimeout) + " s of connecting (" +
                      (offered.empty() ? std::string("the camera did not describe its streams")
                                       : "the camera offers " + offered) +
                      "); check the address and the camera's keyframe interval, or try ?protocols=tcp if UDP "
                      "is blocked on the way");
    }
    auto& unit = std::get<ArrivedUnit>(got);
    if (isIdr(unit)) pending_ = std::make_unique<ArrivedUnit>(std::move(unit));
  }
  lastUnitNs_ = monotonicNs();
  lastIdrNs_ = lastUnitNs_;
  offered_ = session_->offered();
  codec_ = session_->videoCodec();
  // An H.265 camera's units have no PixelFormat of their own: only the decoder (openRtspSource) takes them.
  info_.format = codec_ == VideoCodec::kH264 ? PixelFormat::kH264 : PixelFormat::kUnknown;
  info_.memory = MemoryKind::kHost;
  if (GstCaps* caps = gst_sample_get_caps(pending_->sample.get())) {
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    gint width = 0, height = 0, num = 0, den = 1;
    gst_structure_get_int(s, "width", &width);
    gst_structure_get_int(s, "height", &height);
    if (gst_structure_get_fraction(s, "framerate", &num, &den) && num > 0 && den > 0)
      info_.fps = double(num) / den;
    info_.width = static_cast<std::uint32_t>(std::max(width, 0));
    info_.height = static_cast<std::uint32_t>(std::max(height, 0));
  }
  const char* codec = videoCodecName(codec_);
  if (info_.width == 0 || info_.height == 0)
    throw Error(Errc::kProtocol,
                name_ + ": the camera's " + codec + " has no readable size (no SPS before its first frame)");
  if (info_.fps <= 0 || info_.fps > kMaxPlausibleFps) {
    log::warn(name_, ": the camera's ", codec, " states ",
              info_.fps <= 0 ? std::string("no frame rate")
                             : "an implausible frame rate (" + std::to_string(info_.fps) + ")",
              "; assuming ", kAssumedFps, " fps");
    info_.fps = kAssumedFps;
  }
  info_.description = "RTSP camera " + name_ + (codec_ == VideoCodec::kH264 ? " h264 " : " h265 ") +
                      std::to_string(info_.width) + "x" + std::to_string(info_.height) + "@" +
                      std::to_string(static_cast<int>(std::lround(info_.fps))) + " over " + url_.protocols;
}

RtspSource::~RtspSource() {
  connection_->releasePicture();
}

void RtspSource::startSession() {
  session_ = connection_->open();
  sessionDropsSeen_ = 0;
  sessionUnits_ = 0;
  lastUnitNs_ = monotonicNs();  // a connection that brings nothing for stallTimeout is dropped too
  lastIdrNs_ = lastUnitNs_;
}

void RtspSource::countSessionDrops() {
  const std::uint64_t dropped = session_->dropped();
  drops_.fetch_add(dropped - sessionDropsSeen_, std::memory_order_relaxed);
  sessionDropsSeen_ = dropped;
}

void RtspSource::lose(const SessionFailure& failure) {
  connection_->close(session_, failure);  // stops the pipeline; samples still leased stay valid
  session_.reset();
  if (!outage_) {
    outage_ = true;
    stalls_.fetch_add(1, std::memory_order_relaxed);
    delay_ = policy_.firstRetry;
  } else {
    delay_ = std::min(delay_ * 2, policy_.maxRetry);
  }
  const bool unauthorized = failure.kind == FailureKind::kUnauthorized;
  const auto wait = unauthorized ? policy_.unauthorizedRetry : delay_;
  nextAttemptNs_ = monotonicNs() + std::chrono::nanoseconds(wait).count();
  log::warn(
      name_, ": ", failure.message, "; next try in ", seconds(wait), " s",
      unauthorized ? " (not sooner: fast retries with wrong credentials can lock the camera's account)" : "");
}

std::optional<FrameLease> RtspSource::next(std::chrono::milliseconds timeout) {
  const std::int64_t deadline = monotonicNs() + std::chrono::nanoseconds(timeout).count();
  const std::int64_t stallNs = std::chrono::nanoseconds(policy_.stallTimeout).count();
  for (;;) {
    if (pending_) {
      ArrivedUnit unit = std::move(*pending_);
      pending_.reset();
      return deliver(std::move(unit));
    }
    if (!session_) {
      const std::int64_t now = monotonicNs();
      if (now < nextAttemptNs_) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(deadline, nextAttemptNs_) - now));
        if (monotonicNs() >= deadline) return std::nullopt;
        continue;
      }
      startSession();
    }
    auto got = session_->wait(std::min(deadline, lastUnitNs_ + stallNs));
    countSessionDrops();
    if (auto* unit = std::get_if<ArrivedUnit>(&got)) {
      lastUnitNs_ = monotonicNs();
      // A connection starts at the camera's next IDR: what comes before it cannot be decoded.
      const bool idr = isIdr(*unit);
      if (sessionUnits_ == 0 && !idr) continue;
      if (idr) {
        lastIdrNs_ = lastUnitNs_;
      } else if (lastUnitNs_ - lastIdrNs_ >= std::chrono::nanoseconds(policy_.idrTimeout).count()) {
        lose(
            {FailureKind::kStalled,
             "no IDR for " + seconds(policy_.idrTimeout) +
                 " s (its keyframes are lost on the way or further apart than that: set the camera's I-frame "
                 "interval to 1-2 s); reconnecting (a new connection starts at the camera's next IDR)"});
        continue;
      }
      if (outage_) {
        outage_ = false;
        log::info(name_, ": camera is back, frames flow again");
      }
      return deliver(std::move(*unit));
    }
    if (const auto* failure = std::get_if<SessionFailure>(&got)) {
      lose(*failure);
      continue;
    }
    if (monotonicNs() - lastUnitNs_ >= stallNs) {
      lose({FailureKind::kStalled,
            "no access unit for " + seconds(policy_.stallTimeout) + " s (camera gone or network down)"});
      continue;
    }
    return std::nullopt;
  }
}

void RtspSource::noteClock(const CaptureTime& t) {
  origin_.store(t.clock == CaptureClock::kCamera ? CaptureOrigin::kCamera : CaptureOrigin::kArrival,
                std::memory_order_relaxed);
  const auto kind = static_cast<std::size_t>(t.clock);
  if (clockLogged_[kind]) return;
  clockLogged_[kind] = true;
  switch (t.clock) {
    case CaptureClock::kArrival:
      log::info(name_, ": capture times are arrival times until the camera's first RTCP sender report");
      break;
    case CaptureClock::kCamera:
      log::info(name_,
                ": capture times now come from the camera's clock (RTCP sender reports); frames arrive ",
                static_cast<double>(t.cameraBehindNs) / 1e6, " ms after capture");
      break;
    case CaptureClock::kCameraClockOff:
      log::warn(name_, ": the camera's clock is ", std::fabs(static_cast<double>(t.cameraBehindNs)) / 1e9,
                " s ", t.cameraBehindNs > 0 ? "behind" : "ahead of",
                " this host's, so capture times are arrival times; "
                "set the camera and this host to NTP for latency measured from the camera");
      break;
  }
}

FrameLease RtspSource::deliver(ArrivedUnit&& unit) {
  GstBuffer* buffer = gst_sample_get_buffer(unit.sample.get());
  if (!buffer) throw Error(Errc::kInternal, name_ + ": an access unit without a buffer");
  const GstReferenceTimestampMeta* ntp = gst_buffer_get_reference_timestamp_meta(buffer, ntpCaps());
  const CaptureTime t =
      captureTimeOf(ntp ? ntp->timestamp : 0, unit.arrivalMonotonicNs, unit.arrivalRealtimeNs);
  noteClock(t);
  Frame f;
  f.format = info_.format;
  f.width = info_.width;
  f.height = info_.height;
  if (GstCaps* caps = gst_sample_get_caps(unit.sample.get())) {  // a camera reconfigured since: its new size
    gint width = 0, height = 0;
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    if (gst_structure_get_int(s, "width", &width) && gst_structure_get_int(s, "height", &height) &&
        width > 0 && height > 0) {
      f.width = static_cast<std::uint32_t>(width);
      f.height = static_cast<std::uint32_t>(height);
    }
  }
  f.memory = MemoryKind::kHost;
  f.planeCount = 1;
  f.keyframe = !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  // A discontinuity inside a connection is RTP packets lost on the way (the depayloader marks it).
  if (sessionUnits_++ > 0 && GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DISCONT))
    drops_.fetch_add(1, std::memory_order_relaxed);
  const Leases::Held held = leases_->hold(std::move(unit.sample));
  f.data[0] = held.data;
  f.bytesUsed = held.size;
  f.capacity = held.size;
  f.sequence = sequence_++;
  f.times.mark(Stage::kCapture, t.monotonicNs);
  f.times.mark(Stage::kIngest, unit.arrivalMonotonicNs);
  f.wallClockMs = t.realtimeNs / 1'000'000;
  frames_.fetch_add(1, std::memory_order_relaxed);
  return FrameLease(leases_, held.id, f);
}

SourceCounters RtspSource::counters() const {
  SourceCounters c;
  c.frames = frames_.load(std::memory_order_relaxed);
  c.drops = drops_.load(std::memory_order_relaxed);
  c.stalls = stalls_.load(std::memory_order_relaxed);
  c.captureOrigin = origin_.load(std::memory_order_relaxed);
  return c;
}

RtspUrl rtspUrlOf(const SourceSpec& spec) {
  RtspUrl url = parseRtspUrl(spec.path);
  auto option = [&](const char* key) -> const std::string* {
    auto it = spec.options.find(key);
    return it == spec.options.end() ? nullptr : &it->second;
  };
  if (const auto* v = option("user")) url.user = *v;
  if (const auto* v = option("password")) url.password = *v;
  if (const auto* v = option("protocols")) url.protocols = *v;
  if (const auto* v = option("latency")) url.latencyMs = static_cast<std::uint32_t>(std::stoul(*v));
  url.format = spec.format == PixelFormat::kI420 || spec.format == PixelFormat::kNV12 ? spec.format
                                                                                      : PixelFormat::kH264;
  return url;
}

}  // namespace rtsp

SourceSpec parseRtspSourceSpec(std::string_view text) {
  const rtsp::RtspUrl url = rtsp::parseRtspUrl(text);
  SourceSpec spec;
  spec.kind = "rtsp";
  spec.path = url.location();
  spec.format = url.format;
  if (!url.user.empty()) {
    spec.options["user"] = url.user;
    spec.options["password"] = url.password;
  }
  spec.options["protocols"] = url.protocols;
  spec.options["latency"] = std::to_string(url.latencyMs);
  return spec;
}

std::string rtspSourceString(const SourceSpec& spec) {
  return rtsp::rtspUrlOf(spec).masked();
}

std::unique_ptr<FrameSource> openRtspSource(const SourceSpec& spec, const SourceOptions& options) {
  const rtsp::RtspUrl url = rtsp::rtspUrlOf(spec);
  if (url.format == PixelFormat::kNV12) {
    // NVDEC's answer first: no camera connection for a decode that cannot run here.
    gpupath::requireNvdec(options.gpuDevice);
  }
  auto camera = std::make_unique<rtsp::RtspSource>(url);
  if (camera->codec() == rtsp::VideoCodec::kH265) {
    // WebRTC viewers take no H.265 as it is: the pictures are decoded (NVDEC into VRAM with format=nv12,
    // else libavcodec on the CPU) and the pipeline serves them as a raw camera's (encoded again for
    // viewers, shared as frames).
    const bool nvdec = url.format == PixelFormat::kNV12;
    log::info(url.masked(), ": the camera sends H.265, which WebRTC viewers cannot take as it is: decoded ",
              nvdec ? "by NVDEC into VRAM" : "on the CPU (libavcodec)", " and encoded again");
    if (nvdec) return gpupath::makeNvdecSource(std::move(camera), options.gpuDevice, GpuDecodeCodec::kH265);
    return std::make_unique<rtsp::DecodedH264Source>(std::move(camera), rtsp::VideoCodec::kH265);
  }
  if (url.format == PixelFormat::kI420) return std::make_unique<rtsp::DecodedH264Source>(std::move(camera));
  if (url.format == PixelFormat::kNV12) return gpupath::makeNvdecSource(std::move(camera), options.gpuDevice);
  return camera;
}

RtspCameraInfo probeRtspCamera(const SourceSpec& spec) {
  const rtsp::RtspUrl url = rtsp::rtspUrlOf(spec);
  {
    rtsp::SessionStreams describeOnly;
    describeOnly.play = false;
    rtsp::RtspSession session(url, describeOnly);
    const std::int64_t deadline = monotonicNs() + std::chrono::nanoseconds(rtsp::RtspPolicy{}.openTimeout).count();
    auto got = session.waitDescribed(deadline);
    if (const auto* failure = std::get_if<rtsp::SessionFailure>(&got))
      throw Error(rtsp::errcOf(failure->kind), url.masked() + ": " + failure->message);
    if (std::holds_alternative<std::monostate>(got))
      throw Error(Errc::kUnavailable, url.masked() + ": no answer to DESCRIBE within " +
                                          rtsp::seconds(rtsp::RtspPolicy{}.openTimeout) + " s of connecting");
    const auto& video = std::get<rtsp::DescribedVideo>(got);
    if (const auto stated = rtsp::statedVideo(video.codec, video.parameterSets)) {
      RtspCameraInfo info{session.offered(), {}, rtsp::videoCodecName(video.codec), false};
      info.video.format = video.codec == rtsp::VideoCodec::kH264 ? PixelFormat::kH264 : PixelFormat::kUnknown;
      info.video.width = stated->width;
      info.video.height = stated->height;
      info.video.fps = stated->fps > 0 ? stated->fps : video.sdpFramerate;
      if (info.video.fps > 0 && info.video.fps <= rtsp::kMaxPlausibleFps) return info;
    }
  }  // no SPS with a size and rate in the SDP: the first IDR's
  const rtsp::RtspSource source(url);
  return {source.offered(), source.info(), rtsp::videoCodecName(source.codec()), true};
}

}  // namespace zerohop
