#pragma once
// One open() of the emulated device: the V4L2 ioctl state machine of a capture queue (REQBUFS,
// QUERYBUF, QBUF, DQBUF, STREAMON/OFF, EXPBUF) plus the device ioctls answered from the camera.
//
// The descriptor the client holds is a real eventfd (EFD_SEMAPHORE, with the client's O_NONBLOCK):
// its counter equals the number of filled buffers waiting for DQBUF, so poll/select/epoll on it
// behave natively and a blocking DQBUF is a blocking read(). While streaming, a producer thread
// fills the oldest queued buffer at each frame tick (the emulator's "kernel copy": MMAP buffers
// are memfds, USERPTR buffers are the client's memory) and stamps it with CLOCK_MONOTONIC.
// Thread-safety: thread-safe; ioctl() may be called from any thread (e.g. QBUF from the thread
// releasing a frame while another blocks in DQBUF). Owns the eventfd, the memfds and the thread.

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "camemu/emulated_camera.hpp"

struct v4l2_buffer;
struct v4l2_requestbuffers;
struct v4l2_create_buffers;
struct v4l2_format;

namespace zerohop::camemu {

class FrameSynth;

class EmulatedFile {
 public:
  /// Opens the device with the open() `flags`. Throws Error (the shim turns it into errno).
  EmulatedFile(EmulatedCamera& camera, int flags);
  ~EmulatedFile();
  EmulatedFile(const EmulatedFile&) = delete;
  EmulatedFile& operator=(const EmulatedFile&) = delete;

  /// The descriptor handed to the client (it may dup and close it; the file keeps its own).
  int clientFd() const noexcept { return clientFd_; }
  /// The camera this file opened.
  EmulatedCamera& camera() const noexcept { return camera_; }
  /// Handles one ioctl; returns 0 or -errno.
  int ioctl(unsigned long request, void* arg);
  /// mmap() of an MMAP buffer by its mem_offset; returns MAP_FAILED with errno set on failure.
  void* mmap(void* addr, std::size_t length, int prot, int flags, off_t offset);
  /// Extra poll events the eventfd cannot express: POLLERR|POLLHUP once the camera is unplugged,
  /// POLLERR when not streaming (as vb2 does).
  short extraPollEvents() const;
  /// read(): the device has no read() I/O (no V4L2_CAP_READWRITE).
  int read() const { return -EINVAL; }

 private:
  enum class BufState { kDequeued, kQueued, kDone };
  struct Buffer {
    BufState state = BufState::kDequeued;
    int memFd = -1;               // MMAP: the storage
    std::uint8_t* map = nullptr;  // MMAP: the emulator's own mapping
    std::uint32_t length = 0;     // MMAP: page-aligned size; USERPTR: the client's length
    unsigned long userptr = 0;    // USERPTR: the client's memory
    std::uint32_t bytesUsed = 0;
    std::uint32_t flags = 0;  // V4L2_BUF_FLAG_ERROR when injected
    std::uint32_t sequence = 0;
    std::int64_t timestampNs = 0;
  };

  bool dead() const;
  int querycap(void* arg) const;
  int enumFmt(void* arg) const;
  int tryFmt(v4l2_format& fmt) const;
  int reqbufs(v4l2_requestbuffers& req);
  int createBufs(v4l2_create_buffers& create);
  /// Appends `count` buffers of `bytes` each (memory_ decides MMAP or USERPTR); 0 or -errno.
  int addBuffers(std::uint32_t count, std::uint32_t bytes);
  int querybuf(v4l2_buffer& b) const;
  int qbuf(v4l2_buffer& b);
  int dqbuf(v4l2_buffer& b);
  int streamon();
  void streamoff();
  int expbuf(void* arg) const;
  void fillBuffer(const Buffer& buf, std::uint32_t index, v4l2_buffer& b) const;
  void freeBuffers();
  void signal(std::uint64_t n) const noexcept;
  void drainSignals() const noexcept;
  void produce();
  void deliver(std::uint64_t sequence, std::int64_t tickNs);
  bool sleepUntil(std::int64_t ns);  // false when asked to stop

  EmulatedCamera& camera_;
  const std::uint64_t generation_;
  int clientFd_ = -1;  // the client's descriptor; the shim's close() closes it
  int eventFd_ = -1;   // our own duplicate of it (same eventfd), valid until we are destroyed
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Buffer> buffers_;
  std::uint32_t memory_ = 0;  // V4L2_MEMORY_* of the current buffers
  std::deque<std::uint32_t> queued_;
  std::deque<std::uint32_t> done_;
  bool streaming_ = false;
  bool stop_ = false;
  bool stalled_ = false;
  std::unique_ptr<FrameSynth> synth_;
  std::uint32_t synthRate_ = 0;  // the rate synth_ was made for (H.264 rate control)
  std::thread producer_;
};

}  // namespace zerohop::camemu
