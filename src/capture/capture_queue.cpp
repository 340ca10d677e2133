#include "capture/capture_queue.hpp"

#include <linux/videodev2.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::capture_detail {
namespace {

std::uint32_t v4l2Memory(CaptureMemory m) {
  return m == CaptureMemory::kMmap ? V4L2_MEMORY_MMAP : V4L2_MEMORY_USERPTR;
}

std::size_t pageAlign(std::size_t v) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (v + page - 1) / page * page;
}

}  // namespace

const char* captureMemoryName(CaptureMemory memory) noexcept {
  return memory == CaptureMemory::kMmap ? "mmap" : "userptr";
}

CaptureQueue::CaptureQueue(V4l2Device device, CaptureMemory memory, std::uint32_t count,
                           std::size_t bufferBytes, std::unique_ptr<FrameAllocator> allocator)
    : device_(std::move(device)), memory_(memory), allocator_(std::move(allocator)) {
  if (memory_ == CaptureMemory::kUserptr && !allocator_) {
    throw Error(Errc::kInvalidArgument, "V4L2 USERPTR capture needs an allocator");
  }
  v4l2_requestbuffers req{};
  req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  req.memory = v4l2Memory(memory_);
  req.count = count;
  if (const int err = device_.tryIoctl(VIDIOC_REQBUFS, &req); err != 0) {
    if (err == EINVAL) {
      throw Error(Errc::kUnsupported, "VIDIOC_REQBUFS(" + device_.path() + ", " + captureMemoryName(memory_) +
                                          ") failed: the driver does not support " +
                                          captureMemoryName(memory_) + " buffers (try memory=mmap)");
    }
    device_.fail("VIDIOC_REQBUFS", err);
  }
  requested_ = true;
  if (req.count < 2) {
    releaseBuffers();
    throw Error(Errc::kUnavailable, "VIDIOC_REQBUFS(" + device_.path() + ") granted " +
                                        std::to_string(req.count) + " buffers; capture needs at least 2");
  }
  buffers_.resize(req.count);
  try {
    for (std::uint32_t i = 0; i < req.count; ++i) {
      if (memory_ == CaptureMemory::kMmap) {
        v4l2_buffer b{};
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = i;
        device_.ioctl(VIDIOC_QUERYBUF, &b, "VIDIOC_QUERYBUF");
        void* p = ::mmap(nullptr, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, device_.fd(), b.m.offset);
        if (p == MAP_FAILED) throwErrno("mmap", errno, device_.path() + " buffer " + std::to_string(i));
        buffers_[i] = {static_cast<std::uint8_t*>(p), b.length};
      } else {
        const std::size_t bytes = pageAlign(bufferBytes);
        buffers_[i] = {static_cast<std::uint8_t*>(allocator_->allocate(bytes)), bytes};
      }
    }
  } catch (...) {
    releaseBuffers();
    throw;
  }
}

CaptureQueue::~CaptureQueue() {
  stop();
  releaseBuffers();
}

MemoryKind CaptureQueue::memoryKind() const noexcept {
  return memory_ == CaptureMemory::kMmap ? MemoryKind::kHost : allocator_->kind();
}

void CaptureQueue::releaseBuffers() noexcept {
  if (memory_ == CaptureMemory::kMmap) {
    for (auto& b : buffers_) {
      if (b.data && ::munmap(b.data, b.length) != 0)
        log::warn("munmap(", device_.path(), ") failed: ", std::strerror(errno));
      b.data = nullptr;
    }
  }
  if (requested_) {  // the driver lets go of USERPTR memory here, so free it only afterwards
    v4l2_requestbuffers req{};
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = v4l2Memory(memory_);
    const int err = device_.tryIoctl(VIDIOC_REQBUFS, &req);
    if (err != 0 && err != ENODEV)
      log::warn("VIDIOC_REQBUFS(", device_.path(), ", 0) failed: ", std::strerror(err));
    requested_ = false;
  }
  if (memory_ == CaptureMemory::kUserptr) {
    for (auto& b : buffers_) {
      if (b.data) allocator_->deallocate(b.data, b.length);
      b.data = nullptr;
    }
  }
  buffers_.clear();
}

void CaptureQueue::queue(std::uint32_t index) {
  v4l2_buffer b{};
  b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  b.memory = v4l2Memory(memory_);
  b.index = index;
  if (memory_ == CaptureMemory::kUserptr) {
    b.m.userptr = reinterpret_cast<unsigned long>(buffers_[index].data);
    b.length = static_cast<std::uint32_t>(buffers_[index].length);
  }
  device_.ioctl(VIDIOC_QBUF, &b, "VIDIOC_QBUF");
}

void CaptureQueue::start() {
  std::lock_guard lock(mutex_);
  if (streaming_) return;
  for (std::uint32_t i = 0; i < buffers_.size(); ++i) queue(i);
  int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  device_.ioctl(VIDIOC_STREAMON, &type, "VIDIOC_STREAMON");
  streaming_ = true;
}

void CaptureQueue::stop() noexcept {
  std::lock_guard lock(mutex_);
  if (!streaming_) return;
  streaming_ = false;
  int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  const int err = device_.tryIoctl(VIDIOC_STREAMOFF, &type);
  if (err != 0 && err != ENODEV)
    log::warn("VIDIOC_STREAMOFF(", device_.path(), ") failed: ", std::strerror(err));
}

std::optional<DequeuedBuffer> CaptureQueue::dequeue() {
  v4l2_buffer b{};
  b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  b.memory = v4l2Memory(memory_);
  if (const int err = device_.tryIoctl(VIDIOC_DQBUF, &b); err != 0) {
    if (err == EAGAIN) return std::nullopt;
    device_.fail("VIDIOC_DQBUF", err);
  }
  DequeuedBuffer d;
  d.index = b.index;
  d.bytesUsed = b.bytesused;
  d.flags = b.flags;
  d.sequence = b.sequence;
  d.timestampNs = std::int64_t{b.timestamp.tv_sec} * 1'000'000'000 + std::int64_t{b.timestamp.tv_usec} * 1000;
  d.monotonic = (b.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
  d.error = (b.flags & V4L2_BUF_FLAG_ERROR) != 0;
  d.keyframe = (b.flags & V4L2_BUF_FLAG_KEYFRAME) != 0;
  if (d.index >= buffers_.size()) {
    throw Error(Errc::kDevice, "VIDIOC_DQBUF(" + device_.path() + ") returned buffer " +
                                   std::to_string(d.index) + " of " + std::to_string(buffers_.size()));
  }
  return d;
}

void CaptureQueue::requeue(std::uint32_t index) {
  std::lock_guard lock(mutex_);
  if (streaming_) queue(index);
}

void CaptureQueue::releaseSlot(std::uint32_t slot) noexcept {
  try {
    requeue(slot);
  } catch (const Error& e) {
    log::warn("re-queue of capture buffer ", slot, " failed: ", e.what());
  }
}

}  // namespace zerohop::capture_detail
