#include "camemu/emulated_file.hpp"

#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "camemu/emulated_controls.hpp"
#include "camemu/frame_synth.hpp"
#include "camemu/real_libc.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop::camemu {
namespace {

constexpr std::uint32_t kMaxBuffers = 32;
constexpr std::uint32_t kCapabilities = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;

std::uint32_t pageAlign(std::uint32_t v) {
  const auto page = static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE));
  return (v + page - 1) / page * page;
}

// The mem_offset cookie of MMAP buffer `index` (what QUERYBUF reports and mmap() takes).
std::uint32_t offsetOf(std::uint32_t index) {
  return index << 24;
}

const char* describe(PixelFormat f) {
  switch (f) {
    case PixelFormat::kYUYV:
      return "YUYV 4:2:2";
    case PixelFormat::kUYVY:
      return "UYVY 4:2:2";
    case PixelFormat::kNV12:
      return "Y/CbCr 4:2:0";
    case PixelFormat::kMJPEG:
      return "Motion-JPEG";
    case PixelFormat::kH264:
      return "H.264";
    default:
      return "unknown";
  }
}

void fillPix(v4l2_pix_format& pix, const WireFormat& w) {
  std::memset(&pix, 0, sizeof pix);
  pix.width = w.width;
  pix.height = w.height;
  pix.pixelformat = formatFourcc(w.format);
  pix.field = V4L2_FIELD_NONE;
  pix.bytesperline = w.bytesPerLine;
  pix.sizeimage = w.sizeImage;
  pix.colorspace = V4L2_COLORSPACE_SRGB;  // what uvcvideo reports for camera YUV and MJPEG
  pix.priv = V4L2_PIX_FMT_PRIV_MAGIC;     // set by the V4L2 core for drivers with V4L2_CAP_EXT_PIX_FORMAT
}

}  // namespace

EmulatedFile::EmulatedFile(EmulatedCamera& camera, int flags)
    : camera_(camera), generation_(camera.generation()) {
  int efdFlags = EFD_SEMAPHORE;
  if (flags & O_NONBLOCK) efdFlags |= EFD_NONBLOCK;
  if (flags & O_CLOEXEC) efdFlags |= EFD_CLOEXEC;
  clientFd_ = ::eventfd(0, efdFlags);
  if (clientFd_ < 0) throwErrno("eventfd", errno, "emulated camera");
  // Our own reference to the same eventfd: the client may dup its descriptor and close the original.
  eventFd_ = static_cast<int>(::syscall(SYS_fcntl, clientFd_, F_DUPFD_CLOEXEC, 0));
  if (eventFd_ < 0) {
    const int err = errno;
    real::close(clientFd_);
    throwErrno("fcntl(F_DUPFD_CLOEXEC)", err, "emulated camera");
  }
}

EmulatedFile::~EmulatedFile() {
  streamoff();
  std::lock_guard lock(mutex_);
  freeBuffers();
  camera_.forget(this);
  real::close(eventFd_);  // clientFd_ is closed by the shim's close()
}

bool EmulatedFile::dead() const {
  return camera_.generation() != generation_;
}

void EmulatedFile::signal(std::uint64_t n) const noexcept {
  if (::write(eventFd_, &n, sizeof n) < 0) camera_.trace("eventfd write failed: %s", std::strerror(errno));
}

void EmulatedFile::drainSignals() const noexcept {
  pollfd p{eventFd_, POLLIN, 0};
  std::uint64_t v = 0;
  while (real::poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
    if (real::read(eventFd_, &v, sizeof v) < 0) break;
  }
}

short EmulatedFile::extraPollEvents() const {
  if (dead()) return POLLERR | POLLHUP;
  std::lock_guard lock(mutex_);
  return streaming_ ? 0 : POLLERR;
}

namespace {

// The ioctls this device implements (everything else is ENOTTY, checked before the argument).
bool implemented(unsigned long request) {
  switch (request) {
    case VIDIOC_QUERYCAP:
    case VIDIOC_ENUM_FMT:
    case VIDIOC_G_FMT:
    case VIDIOC_TRY_FMT:
    case VIDIOC_S_FMT:
    case VIDIOC_ENUM_FRAMESIZES:
    case VIDIOC_ENUM_FRAMEINTERVALS:
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM:
    case VIDIOC_ENUMINPUT:
    case VIDIOC_G_INPUT:
    case VIDIOC_S_INPUT:
    case VIDIOC_REQBUFS:
    case VIDIOC_QUERYBUF:
    case VIDIOC_QBUF:
    case VIDIOC_DQBUF:
    case VIDIOC_STREAMON:
    case VIDIOC_STREAMOFF:
    case VIDIOC_EXPBUF:
    case VIDIOC_CREATE_BUFS:
    case VIDIOC_G_PRIORITY:
    case VIDIOC_S_PRIORITY:
      return true;
    default:
      return isControlIoctl(request);
  }
}

// Ioctls the V4L2 core refuses (EBUSY) to a file whose priority is below another's.
bool priorityChecked(unsigned long request) {
  switch (request) {
    case VIDIOC_S_FMT:
    case VIDIOC_S_PARM:
    case VIDIOC_S_INPUT:
    case VIDIOC_S_PRIORITY:
    case VIDIOC_S_CTRL:
    case VIDIOC_S_EXT_CTRLS:
    case VIDIOC_REQBUFS:
    case VIDIOC_CREATE_BUFS:
    case VIDIOC_STREAMON:
    case VIDIOC_STREAMOFF:
      return true;
    default:
      return false;
  }
}

// Ioctls vb2 refuses (EBUSY) to a file that does not own the queue.
bool queueOwned(unsigned long request) {
  switch (request) {
    case VIDIOC_REQBUFS:
    case VIDIOC_CREATE_BUFS:
    case VIDIOC_QBUF:
    case VIDIOC_DQBUF:
    case VIDIOC_STREAMON:
    case VIDIOC_STREAMOFF:
    case VIDIOC_EXPBUF:
      return true;
    default:
      return false;
  }
}

}  // namespace

int EmulatedFile::ioctl(unsigned long request, void* arg) {
  if (dead()) return -ENODEV;
  if (!implemented(request)) return -ENOTTY;
  if (!arg) return -EFAULT;
  if (priorityChecked(request) && !camera_.priorityAllows(this)) return -EBUSY;
  if (queueOwned(request) && !camera_.mayUseQueue(this)) return -EBUSY;
  if (isControlIoctl(request)) return controlIoctl(camera_, request, arg);
  try {
    switch (request) {
      case VIDIOC_G_PRIORITY:
        *static_cast<std::uint32_t*>(arg) = camera_.maxPriority();
        return 0;
      case VIDIOC_S_PRIORITY: {
        const auto prio = *static_cast<std::uint32_t*>(arg);
        if (prio > V4L2_PRIORITY_RECORD) return -EINVAL;
        camera_.setPriority(this, prio == V4L2_PRIORITY_UNSET ? std::uint32_t{V4L2_PRIORITY_DEFAULT} : prio);
        return 0;
      }
      case VIDIOC_QUERYCAP:
        return querycap(arg);
      case VIDIOC_ENUM_FMT:
        return enumFmt(arg);
      case VIDIOC_G_FMT: {
        auto& fmt = *static_cast<v4l2_format*>(arg);
        if (fmt.type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
        fillPix(fmt.fmt.pix, camera_.format());
        return 0;
      }
      case VIDIOC_TRY_FMT:
        return tryFmt(*static_cast<v4l2_format*>(arg));
      case VIDIOC_S_FMT: {
        auto& fmt = *static_cast<v4l2_format*>(arg);
        if (int r = tryFmt(fmt); r != 0) return r;
        std::lock_guard lock(mutex_);
        if (!buffers_.empty() || streaming_ || camera_.queueBusy()) return -EBUSY;
        const auto f = formatFromFourcc(fmt.fmt.pix.pixelformat);
        camera_.setFormat(wireFormat(*f, fmt.fmt.pix.width, fmt.fmt.pix.height));
        camera_.trace("S_FMT %s %ux%u", std::string(formatName(*f)).c_str(), fmt.fmt.pix.width,
                      fmt.fmt.pix.height);
        return 0;
      }
      case VIDIOC_ENUM_FRAMESIZES: {
        auto& fs = *static_cast<v4l2_frmsizeenum*>(arg);
        const auto f = formatFromFourcc(fs.pixel_format);
        if (!f || !camera_.modes().offers(*f) || fs.index >= camera_.modes().sizes().size()) return -EINVAL;
        const auto& s = camera_.modes().sizes()[fs.index];
        fs.type = V4L2_FRMSIZE_TYPE_DISCRETE;
        fs.discrete.width = s.width;
        fs.discrete.height = s.height;
        std::memset(fs.reserved, 0, sizeof fs.reserved);
        return 0;
      }
      case VIDIOC_ENUM_FRAMEINTERVALS: {
        auto& fi = *static_cast<v4l2_frmivalenum*>(arg);
        const auto f = formatFromFourcc(fi.pixel_format);
        const auto& sizes = camera_.modes().sizes();
        if (!f || !camera_.modes().offers(*f) ||
            std::find(sizes.begin(), sizes.end(), FrameSize{fi.width, fi.height}) == sizes.end() ||
            fi.index >= camera_.modes().rates().size()) {
          return -EINVAL;
        }
        fi.type = V4L2_FRMIVAL_TYPE_DISCRETE;
        fi.discrete.numerator = 1;
        fi.discrete.denominator = camera_.modes().rates()[fi.index];
        std::memset(fi.reserved, 0, sizeof fi.reserved);
        return 0;
      }
      case VIDIOC_G_PARM:
      case VIDIOC_S_PARM: {
        auto& p = *static_cast<v4l2_streamparm*>(arg);
        if (p.type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
        if (request == VIDIOC_S_PARM) {
          const auto& tpf = p.parm.capture.timeperframe;
          const double fps = (tpf.numerator == 0 || tpf.denominator == 0)
                                 ? camera_.modes().rates().front()
                                 : static_cast<double>(tpf.denominator) / tpf.numerator;
          camera_.setRate(camera_.modes().nearestRate(fps));
        }
        std::memset(&p.parm.capture, 0, sizeof p.parm.capture);
        p.parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
        p.parm.capture.timeperframe.numerator = 1;
        p.parm.capture.timeperframe.denominator = camera_.rate();
        return 0;
      }
      case VIDIOC_ENUMINPUT: {
        auto& in = *static_cast<v4l2_input*>(arg);
        if (in.index != 0) return -EINVAL;
        const auto index = in.index;
        std::memset(&in, 0, sizeof in);
        in.index = index;
        std::snprintf(reinterpret_cast<char*>(in.name), sizeof in.name, "Camera 1");
        in.type = V4L2_INPUT_TYPE_CAMERA;
        return 0;
      }
      case VIDIOC_G_INPUT:
        *static_cast<int*>(arg) = 0;
        return 0;
      case VIDIOC_S_INPUT:
        return *static_cast<int*>(arg) == 0 ? 0 : -EINVAL;
      case VIDIOC_REQBUFS:
        return reqbufs(*static_cast<v4l2_requestbuffers*>(arg));
      case VIDIOC_CREATE_BUFS:
        return createBufs(*static_cast<v4l2_create_buffers*>(arg));
      case VIDIOC_QUERYBUF:
        return querybuf(*static_cast<v4l2_buffer*>(arg));
      case VIDIOC_QBUF:
        return qbuf(*static_cast<v4l2_buffer*>(arg));
      case VIDIOC_DQBUF:
        return dqbuf(*static_cast<v4l2_buffer*>(arg));
      case VIDIOC_STREAMON:
        if (*static_cast<int*>(arg) != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
        return streamon();
      case VIDIOC_STREAMOFF:
        if (*static_cast<int*>(arg) != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
        streamoff();
        return 0;
      case VIDIOC_EXPBUF:
        return expbuf(arg);
      default:
        return -ENOTTY;
    }
  } catch (const Error& e) {
    camera_.trace("ioctl failed: %s", e.what());
    return -EIO;
  }
}

int EmulatedFile::querycap(void* arg) const {
  auto& cap = *static_cast<v4l2_capability*>(arg);
  std::memset(&cap, 0, sizeof cap);
  std::snprintf(reinterpret_cast<char*>(cap.driver), sizeof cap.driver, "zerohop-camemu");
  // Camera 0 keeps the one-camera names; each further camera is a device of its own (bus_info is
  // what v4l2-ctl --list-devices groups nodes by).
  const unsigned index = static_cast<std::uint8_t>(camera_.config().index);  // < kMaxCameras
  if (index == 0) {
    std::snprintf(reinterpret_cast<char*>(cap.card), sizeof cap.card, "zerohop emulated camera");
    std::snprintf(reinterpret_cast<char*>(cap.bus_info), sizeof cap.bus_info, "platform:zerohop-camemu");
  } else {
    std::snprintf(reinterpret_cast<char*>(cap.card), sizeof cap.card, "zerohop emulated camera %u", index);
    std::snprintf(reinterpret_cast<char*>(cap.bus_info), sizeof cap.bus_info, "platform:zerohop-camemu-%u",
                  index);
  }
  cap.version = (6u << 16) | (1u << 8);  // KERNEL_VERSION(6, 1, 0)
  cap.device_caps = kCapabilities | V4L2_CAP_EXT_PIX_FORMAT;
  cap.capabilities = cap.device_caps | V4L2_CAP_DEVICE_CAPS;
  return 0;
}

int EmulatedFile::enumFmt(void* arg) const {
  auto& f = *static_cast<v4l2_fmtdesc*>(arg);
  const auto& formats = camera_.modes().formats();
  if (f.type != V4L2_BUF_TYPE_VIDEO_CAPTURE || f.index >= formats.size()) return -EINVAL;
  const PixelFormat pf = formats[f.index];
  const auto index = f.index;
  const auto type = f.type;
  std::memset(&f, 0, sizeof f);
  f.index = index;
  f.type = type;
  f.flags = isCompressed(pf) ? V4L2_FMT_FLAG_COMPRESSED : 0;
  std::snprintf(reinterpret_cast<char*>(f.description), sizeof f.description, "%s", describe(pf));
  f.pixelformat = formatFourcc(pf);
  return 0;
}

int EmulatedFile::tryFmt(v4l2_format& fmt) const {
  if (fmt.type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
  auto f = formatFromFourcc(fmt.fmt.pix.pixelformat);
  // An unknown format is not an error: the driver answers with one it has (uvcvideo: the first).
  if (!f || !camera_.modes().offers(*f)) f = camera_.modes().formats().front();
  const FrameSize s = camera_.modes().nearestSize(fmt.fmt.pix.width, fmt.fmt.pix.height);
  fillPix(fmt.fmt.pix, wireFormat(*f, s.width, s.height));
  return 0;
}

void EmulatedFile::freeBuffers() {
  for (auto& b : buffers_) {
    if (b.map) ::munmap(b.map, b.length);
    if (b.memFd >= 0) real::close(b.memFd);
  }
  buffers_.clear();
  queued_.clear();
  done_.clear();
}

constexpr std::uint32_t kBufferCaps =
    // Buffers are memfds: a mapping outlives REQBUFS(0), which is what ORPHANED_BUFS promises.
    V4L2_BUF_CAP_SUPPORTS_MMAP | V4L2_BUF_CAP_SUPPORTS_USERPTR | V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS;

int EmulatedFile::addBuffers(std::uint32_t count, std::uint32_t bytes) {
  const auto first = static_cast<std::uint32_t>(buffers_.size());
  buffers_.resize(first + count);
  for (std::uint32_t i = first; i < first + count; ++i) {
    Buffer& b = buffers_[i];
    if (memory_ != V4L2_MEMORY_MMAP) {
      b.length = bytes;  // what QUERYBUF reports: the least a USERPTR buffer must hold
      continue;
    }
    b.length = pageAlign(bytes);
    b.memFd = ::memfd_create("zerohop-camemu-buffer", MFD_CLOEXEC);
    void* p = MAP_FAILED;
    if (b.memFd >= 0 && ::ftruncate(b.memFd, b.length) == 0) {
      p = real::mmap(nullptr, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, b.memFd, 0);
    }
    if (p == MAP_FAILED) {
      const int err = errno;
      for (std::uint32_t j = first; j < buffers_.size(); ++j) {
        if (buffers_[j].map) ::munmap(buffers_[j].map, buffers_[j].length);
        if (buffers_[j].memFd >= 0) real::close(buffers_[j].memFd);
      }
      buffers_.resize(first);
      return -err;
    }
    b.map = static_cast<std::uint8_t*>(p);
  }
  return 0;
}

int EmulatedFile::reqbufs(v4l2_requestbuffers& req) {
  if (req.type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
  if (req.memory != V4L2_MEMORY_MMAP && req.memory != V4L2_MEMORY_USERPTR)
    return -EINVAL;  // no DMABUF import
  std::lock_guard lock(mutex_);
  if (streaming_) return -EBUSY;
  freeBuffers();
  std::memset(req.reserved, 0, sizeof req.reserved);
  req.capabilities = kBufferCaps;
  req.flags = 0;
  memory_ = req.memory;
  camera_.setQueueOwner(this, req.count);
  if (req.count == 0) return 0;
  const std::uint32_t count = std::min(req.count, kMaxBuffers);
  if (const int err = addBuffers(count, camera_.format().sizeImage); err != 0) {
    camera_.setQueueOwner(this, 0);
    return err;
  }
  req.count = count;
  camera_.trace("REQBUFS %u %s buffers", count, req.memory == V4L2_MEMORY_MMAP ? "mmap" : "userptr");
  return 0;
}

int EmulatedFile::createBufs(v4l2_create_buffers& c) {
  if (c.format.type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
  if (c.memory != V4L2_MEMORY_MMAP && c.memory != V4L2_MEMORY_USERPTR) return -EINVAL;
  std::lock_guard lock(mutex_);
  std::memset(c.reserved, 0, sizeof c.reserved);
  c.capabilities = kBufferCaps;
  c.flags = 0;
  if (!buffers_.empty() && c.memory != memory_) return -EINVAL;
  c.index = static_cast<std::uint32_t>(buffers_.size());
  if (c.count == 0) return 0;  // a query: which capabilities, where the next index would be
  // As a driver's queue_setup: the buffers must hold a frame of the current format.
  const std::uint32_t need = camera_.format().sizeImage;
  if (c.format.fmt.pix.sizeimage < need) return -EINVAL;
  if (buffers_.size() >= kMaxBuffers) return -ENOBUFS;
  memory_ = c.memory;
  const std::uint32_t count =
      std::min<std::uint32_t>(c.count, kMaxBuffers - static_cast<std::uint32_t>(buffers_.size()));
  if (const int err = addBuffers(count, c.format.fmt.pix.sizeimage); err != 0) return err;
  camera_.setQueueOwner(this, static_cast<std::uint32_t>(buffers_.size()));
  c.count = count;
  return 0;
}

void EmulatedFile::fillBuffer(const Buffer& buf, std::uint32_t index, v4l2_buffer& b) const {
  std::memset(&b, 0, sizeof b);
  b.index = index;
  b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  b.memory = memory_;
  b.field = V4L2_FIELD_NONE;
  b.flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF | buf.flags;
  if (buf.state == BufState::kQueued) b.flags |= V4L2_BUF_FLAG_QUEUED;
  if (buf.state == BufState::kDone) b.flags |= V4L2_BUF_FLAG_DONE;
  if (memory_ == V4L2_MEMORY_MMAP) {
    b.flags |= V4L2_BUF_FLAG_MAPPED;
    b.m.offset = offsetOf(index);
  } else {
    b.m.userptr = buf.userptr;
  }
  b.length = buf.length;
  b.bytesused = buf.bytesUsed;
  b.sequence = buf.sequence;
  b.timestamp.tv_sec = static_cast<time_t>(buf.timestampNs / 1'000'000'000);
  b.timestamp.tv_usec = static_cast<suseconds_t>((buf.timestampNs % 1'000'000'000) / 1000);
}

int EmulatedFile::querybuf(v4l2_buffer& b) const {
  std::lock_guard lock(mutex_);
  if (b.type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b.index >= buffers_.size()) return -EINVAL;
  fillBuffer(buffers_[b.index], b.index, b);
  return 0;
}

int EmulatedFile::qbuf(v4l2_buffer& b) {
  std::lock_guard lock(mutex_);
  if (b.type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b.memory != memory_ || b.index >= buffers_.size())
    return -EINVAL;
  Buffer& buf = buffers_[b.index];
  if (buf.state != BufState::kDequeued) return -EINVAL;
  if (memory_ == V4L2_MEMORY_USERPTR) {
    if (b.m.userptr == 0 || b.length < camera_.format().sizeImage) return -EINVAL;
    // The kernel pins the pages (get_user_pages) and fails with EFAULT if they are not mapped.
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const std::uintptr_t start = b.m.userptr & ~(page - 1);
    if (::msync(reinterpret_cast<void*>(start), b.m.userptr + b.length - start, MS_ASYNC) != 0)
      return -EFAULT;
    buf.userptr = b.m.userptr;
    buf.length = b.length;
  }
  buf.state = BufState::kQueued;
  buf.flags = 0;
  buf.bytesUsed = 0;
  queued_.push_back(b.index);
  fillBuffer(buf, b.index, b);
  return 0;
}

int EmulatedFile::dqbuf(v4l2_buffer& b) {
  {
    std::lock_guard lock(mutex_);
    if (b.type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b.memory != memory_) return -EINVAL;
    if (!streaming_) return -EINVAL;
  }
  // The eventfd counts filled buffers: a read takes one, blocking or not as the client opened us.
  std::uint64_t one = 0;
  if (real::read(eventFd_, &one, sizeof one) < 0) return -errno;
  if (dead()) {
    signal(1);  // keep the descriptor readable for everyone else who polls it
    return -ENODEV;
  }
  std::lock_guard lock(mutex_);
  if (done_.empty()) return -EAGAIN;  // STREAMOFF raced with us
  const std::uint32_t index = done_.front();
  done_.pop_front();
  Buffer& buf = buffers_[index];
  buf.state = BufState::kDequeued;
  fillBuffer(buf, index, b);
  return 0;
}

int EmulatedFile::streamon() {
  std::unique_lock lock(mutex_);
  if (buffers_.empty()) return -EINVAL;
  if (streaming_) return 0;
  const WireFormat wire = camera_.format();
  if (!synth_ || !(synth_->wire() == wire) || synthRate_ != camera_.rate()) {
    synthRate_ = camera_.rate();
    synth_.reset();
    synth_ = std::make_unique<FrameSynth>(wire, camera_.rate(), camera_.config().h264HeadersEveryIdr);
  }
  streaming_ = true;
  stop_ = false;
  producer_ = std::thread([this] { produce(); });
  camera_.trace("STREAMON %s %ux%u@%u", std::string(formatName(wire.format)).c_str(), wire.width, wire.height,
                camera_.rate());
  return 0;
}

void EmulatedFile::streamoff() {
  std::unique_lock lock(mutex_);
  stop_ = true;
  wake_.notify_all();
  lock.unlock();
  if (producer_.joinable()) producer_.join();
  lock.lock();
  streaming_ = false;
  // vb2: STREAMOFF returns every buffer to user space, filled or not, streaming or not.
  for (auto& b : buffers_) b.state = BufState::kDequeued;
  queued_.clear();
  done_.clear();
  drainSignals();
}

int EmulatedFile::expbuf(void* arg) const {
  auto& e = *static_cast<v4l2_exportbuffer*>(arg);
  std::lock_guard lock(mutex_);
  if (!camera_.config().expbuf) return -ENOTTY;
  if (e.type != V4L2_BUF_TYPE_VIDEO_CAPTURE || memory_ != V4L2_MEMORY_MMAP || e.index >= buffers_.size() ||
      e.plane != 0 || (e.flags & ~(O_CLOEXEC | O_ACCMODE)) != 0) {
    return -EINVAL;
  }
  // A memfd stands in for the DMA-BUF a real driver exports: mmap-able, shareable, same bytes.
  const int fd = ::fcntl(buffers_[e.index].memFd, (e.flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
  if (fd < 0) return -errno;
  e.fd = fd;
  return 0;
}

void* EmulatedFile::mmap(void* addr, std::size_t length, int prot, int flags, off_t offset) {
  if (dead()) {
    errno = ENODEV;
    return MAP_FAILED;
  }
  std::lock_guard lock(mutex_);
  const auto index = static_cast<std::uint32_t>(offset >> 24);
  if (memory_ != V4L2_MEMORY_MMAP || (offset & 0xffffff) != 0 || index >= buffers_.size() ||
      length > buffers_[index].length || !(flags & MAP_SHARED)) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  return real::mmap(addr, length, prot, flags, buffers_[index].memFd, 0);
}

}  // namespace zerohop::camemu
