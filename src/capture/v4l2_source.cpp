#include "capture/v4l2_source.hpp"

#include <linux/videodev2.h>
#include <poll.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>

#include "capture/enumerate.hpp"
#include "capture/mode_selection.hpp"
#include "core/payload_check.hpp"
#include "core/setting_log.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::capture_detail {
namespace {

constexpr std::uint32_t kStallIntervals = 3;

CaptureMemory chooseMemory(const SourceSpec& spec, const SourceOptions& options) {
  if (auto it = spec.options.find("memory"); it != spec.options.end()) {
    return it->second == "userptr" ? CaptureMemory::kUserptr : CaptureMemory::kMmap;
  }
  return options.allocatorFactory ? CaptureMemory::kUserptr : CaptureMemory::kMmap;
}

// The device's present mode (what an unstated preference falls back to).
ModeRequest currentMode(const V4l2Device& device) {
  ModeRequest m;
  v4l2_format fmt{};
  fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  if (device.tryIoctl(VIDIOC_G_FMT, &fmt) == 0) {
    m.format = formatFromFourcc(fmt.fmt.pix.pixelformat).value_or(PixelFormat::kUnknown);
    m.width = fmt.fmt.pix.width;
    m.height = fmt.fmt.pix.height;
  }
  v4l2_streamparm parm{};
  parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  if (device.tryIoctl(VIDIOC_G_PARM, &parm) == 0 && parm.parm.capture.timeperframe.numerator) {
    m.fps = static_cast<double>(parm.parm.capture.timeperframe.denominator) /
            parm.parm.capture.timeperframe.numerator;
  }
  return m;
}

// The layout of the driver's format: its bytesperline, planes packed one after the other.
ImageLayout layoutFromDriver(PixelFormat format, const v4l2_pix_format& pix) {
  ImageLayout l = computeLayout(format, pix.width, pix.height);
  if (isCompressed(format)) {
    l.planes[0] = PlaneLayout{0, pix.sizeimage, 1, pix.sizeimage};
    l.totalBytes = pix.sizeimage;
    return l;
  }
  const std::uint32_t pitch = std::max(pix.bytesperline, l.planes[0].widthBytes);
  std::uint32_t offset = 0;
  for (std::uint32_t i = 0; i < l.planeCount; ++i) {
    // Chroma planes scale the luma pitch the way the format scales the width (NV12: same, I420: half).
    const std::uint32_t p = i == 0 ? pitch : pitch * l.planes[i].widthBytes / l.planes[0].widthBytes;
    l.planes[i].offset = offset;
    l.planes[i].pitch = p;
    offset += p * l.planes[i].rows;
  }
  l.totalBytes = std::max<std::size_t>(offset, pix.sizeimage);
  return l;
}

// True if the camera offers the (enabled) force-key-frame button control.
bool offersKeyframeControl(const V4l2Device& device) {
  v4l2_queryctrl q{};
  q.id = V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME;
  return device.tryIoctl(VIDIOC_QUERYCTRL, &q) == 0 && !(q.flags & V4L2_CTRL_FLAG_DISABLED);
}

std::string fpsText(double fps) {
  std::ostringstream os;
  os << fps;
  return os.str();
}

}  // namespace

V4l2Source::V4l2Source(const SourceSpec& spec, const SourceOptions& options) {
  V4l2Device device = V4l2Device::open(spec.path);
  v4l2_capability cap{};
  device.ioctl(VIDIOC_QUERYCAP, &cap, "VIDIOC_QUERYCAP");
  const std::uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
  const std::string card = reinterpret_cast<const char*>(cap.card);
  if (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING)) {
    throw Error(Errc::kUnsupported,
                spec.path + " (" + card + ") is not a streaming video capture node" +
                    " (a UVC camera's second node carries metadata; try the other /dev/videoN)");
  }

  // Negotiate: nearest offered mode, then whatever the driver makes of it.
  const auto offered = enumerateFormats(device);
  const ModeRequest request{spec.format, spec.width, spec.height, spec.fps};
  const ChosenMode mode = chooseMode(offered, request, currentMode(device));
  v4l2_format fmt{};
  fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  fmt.fmt.pix.pixelformat = mode.format->fourcc;
  fmt.fmt.pix.width = mode.width;
  fmt.fmt.pix.height = mode.height;
  fmt.fmt.pix.field = V4L2_FIELD_NONE;
  device.ioctl(VIDIOC_S_FMT, &fmt, "VIDIOC_S_FMT");
  const auto got = formatFromFourcc(fmt.fmt.pix.pixelformat);
  if (!got || fmt.fmt.pix.width != mode.width || fmt.fmt.pix.height != mode.height) {
    log::warnAbout(setting::kSource, "v4l2 ", spec.path, ": driver set ", fourccString(fmt.fmt.pix.pixelformat), " ",
              fmt.fmt.pix.width, "x", fmt.fmt.pix.height, " when asked for ",
              fourccString(mode.format->fourcc), " ", mode.width, "x", mode.height);
    if (!got)
      throw Error(Errc::kUnsupported, "driver of " + spec.path + " chose format " +
                                          fourccString(fmt.fmt.pix.pixelformat) +
                                          ", which zerohop cannot read");
  }
  double fps = mode.fps;
  if (fps > 0) {
    v4l2_streamparm parm{};
    parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (device.tryIoctl(VIDIOC_G_PARM, &parm) == 0 &&
        (parm.parm.capture.capability & V4L2_CAP_TIMEPERFRAME)) {
      parm.parm.capture.timeperframe.numerator = 1000;
      parm.parm.capture.timeperframe.denominator = static_cast<std::uint32_t>(std::lround(fps * 1000));
      device.ioctl(VIDIOC_S_PARM, &parm, "VIDIOC_S_PARM");
      const auto& t = parm.parm.capture.timeperframe;
      if (t.numerator) fps = static_cast<double>(t.denominator) / t.numerator;
    }
  }
  if (!mode.exact) {
    log::warnAbout(setting::kSource, "v4l2 ", spec.path,
                   ": the camera cannot do exactly what was asked; using the nearest mode (",
              mode.differs, ")");
  }
  layout_ = layoutFromDriver(*got, fmt.fmt.pix);
  periodNs_ = fps > 0 ? static_cast<std::int64_t>(1e9 / fps) : 33'333'333;

  // Buffers.
  const CaptureMemory memory = chooseMemory(spec, options);
  std::unique_ptr<FrameAllocator> allocator;
  if (memory == CaptureMemory::kUserptr) {
    allocator = options.allocatorFactory ? options.allocatorFactory() : makeHostAllocator();
  }
  queue_ = std::make_shared<CaptureQueue>(std::move(device), memory, std::max(2u, options.bufferCount),
                                          layout_.totalBytes, std::move(allocator));
  queue_->start();

  info_.format = *got;
  info_.width = layout_.width;
  info_.height = layout_.height;
  info_.fps = fps;
  info_.memory = queue_->memoryKind();
  // What UVC cameras send: BT.601; JPEG (JFIF) is full range, raw YUV and H.264 limited range.
  info_.color =
      ColorDesc{ColorMatrix::kBt601, *got == PixelFormat::kMJPEG ? ColorRange::kFull : ColorRange::kLimited};
  info_.description = spec.path + " (" + card + ") " + std::string(formatName(*got)) + " " +
                      std::to_string(info_.width) + "x" + std::to_string(info_.height) + "@" + fpsText(fps) +
                      " " + captureMemoryName(memory);
  log::info("v4l2 capture: ", info_.description, ", ", queue_->bufferCount(), " buffers");
  if (*got == PixelFormat::kH264) {
    keyframeControl_ = offersKeyframeControl(queue_->device());
    log::info("v4l2 ", spec.path, keyframeControl_ ? ": keyframes on request (V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME)"
                                                   : ": no keyframe control (V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME): "
                                                     "IDRs only when the camera sends them");
  }
}

bool V4l2Source::requestKeyframe() {
  if (!keyframeControl_) return false;
  v4l2_control c{};
  c.id = V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME;
  c.value = 1;
  if (const int err = queue_->device().tryIoctl(VIDIOC_S_CTRL, &c); err != 0) {
    if (!keyframeFailureLogged_.exchange(true)) {
      log::warn("v4l2 ", queue_->device().path(), ": VIDIOC_S_CTRL(V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME) failed: ",
                std::strerror(err));
    }
    return false;
  }
  return true;
}

V4l2Source::~V4l2Source() {
  // Stop the camera writing into buffers; leases still alive keep the queue (and memory) valid.
  if (queue_) queue_->stop();
}

const char* V4l2Source::defect(const DequeuedBuffer& buf) const {
  if (buf.error) return "driver flagged the buffer V4L2_BUF_FLAG_ERROR";
  if (buf.bytesUsed == 0) return "empty buffer";
  if (layout_.format == PixelFormat::kMJPEG) return core_detail::mjpegDefect(queue_->data(buf.index), buf.bytesUsed);
  if (layout_.format == PixelFormat::kH264) return core_detail::annexBDefect(queue_->data(buf.index), buf.bytesUsed);
  if (!isCompressed(layout_.format) && buf.bytesUsed < layout_.planes[0].widthBytes * layout_.height) {
    return "short raw frame";
  }
  return nullptr;
}

void V4l2Source::countStall(std::int64_t now) {
  if (!stalled_ && lastFrameNs_ != 0 && now - lastFrameNs_ > kStallIntervals * periodNs_) {
    stalled_ = true;
    ++stalls_;
    log::warn("v4l2 ", queue_->device().path(), ": no frame for ", (now - lastFrameNs_) / 1'000'000,
              " ms (stall)");
  }
}

std::optional<FrameLease> V4l2Source::next(std::chrono::milliseconds timeout) {
  const std::int64_t deadline =
      monotonicNs() + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  if (lastFrameNs_ == 0) lastFrameNs_ = monotonicNs();
  for (;;) {
    auto buf = queue_->dequeue();
    if (!buf) {
      const std::int64_t now = monotonicNs();
      countStall(now);
      if (now >= deadline) return std::nullopt;
      pollfd p{queue_->device().fd(), POLLIN, 0};
      const int wait = static_cast<int>(std::min<std::int64_t>((deadline - now + 999'999) / 1'000'000,
                                                               kStallIntervals * periodNs_ / 1'000'000 + 1));
      const int r = ::poll(&p, 1, wait);
      if (r < 0 && errno != EINTR) throwErrno("poll", errno, queue_->device().path());
      // POLLERR/POLLHUP: the next DQBUF reports why (ENODEV when unplugged).
      if (r > 0 && (p.revents & (POLLERR | POLLHUP)) && !(p.revents & POLLIN)) {
        if (auto late = queue_->dequeue()) {
          buf = late;
        } else {
          throw Error(Errc::kUnavailable,
                      "poll(" + queue_->device().path() +
                          ") reported an error and no frame: the camera stopped or was disconnected");
        }
      } else {
        continue;
      }
    }
    // Sequence gaps are frames the driver never delivered to us.
    if (haveSequence_) {
      const std::uint32_t step = buf->sequence - lastSequence_;  // wraps correctly at 2^32
      if (step > 1) drops_ += step - 1;
      sequence_ += step;
    } else {
      sequence_ = buf->sequence;
      haveSequence_ = true;
    }
    lastSequence_ = buf->sequence;
    if (const char* why = defect(*buf)) {
      const auto n = ++errors_;
      if (n <= 10 || n % 100 == 0) {
        log::warn("v4l2 ", queue_->device().path(), ": dropped frame ", buf->sequence, ": ", why, " (", n,
                  " so far)");
      }
      queue_->requeue(buf->index);
      continue;
    }
    const std::int64_t now = monotonicNs();
    Frame f;
    bindLayout(f, layout_, queue_->data(buf->index), queue_->memoryKind());
    f.color = info_.color;
    f.capacity = queue_->capacity(buf->index);
    f.bytesUsed = buf->bytesUsed;
    f.sequence = sequence_;
    // Raw and MJPEG frames stand alone; H.264 says which are IDRs (V4L2_BUF_FLAG_KEYFRAME).
    f.keyframe = layout_.format != PixelFormat::kH264 || buf->keyframe;
    const std::int64_t captureNs = buf->monotonic && buf->timestampNs > 0 ? buf->timestampNs : now;
    f.times.mark(Stage::kCapture, captureNs);
    f.times.mark(Stage::kIngest, now);
    f.wallClockMs = (realtimeNs() - (now - captureNs)) / 1'000'000;
    lastFrameNs_ = now;
    stalled_ = false;
    ++frames_;
    return FrameLease(queue_, buf->index, f);
  }
}

SourceCounters V4l2Source::counters() const {
  SourceCounters c;
  c.frames = frames_.load();
  c.drops = drops_.load();
  c.errors = errors_.load();
  c.stalls = stalls_.load();
  return c;
}

}  // namespace zerohop::capture_detail

namespace zerohop {

std::unique_ptr<FrameSource> openV4l2Source(const SourceSpec& spec, const SourceOptions& options) {
  return std::make_unique<capture_detail::V4l2Source>(spec, options);
}

}  // namespace zerohop
