#pragma once
// One emulated camera of a process: its settings, its mode table, the format every open file
// shares (as a V4L2 device's format is per device, not per file), and whether it is plugged in.
// CameraRig holds all of a process's cameras (/dev/video0..N), each with its own state and faults.
// An unplug bumps the generation: files opened before it are dead (ENODEV) forever, and while it
// lasts the device node is gone (open/stat: ENOENT), as with a real USB camera.
// Thread-safety: thread-safe (one mutex); config() and modes() are immutable.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "camemu/camemu_config.hpp"
#include "camemu/mode_table.hpp"

namespace zerohop::camemu {

class EmulatedCamera {
 public:
  explicit EmulatedCamera(EmuConfig config);

  const EmuConfig& config() const noexcept { return config_; }
  const ModeTable& modes() const noexcept { return modes_; }
  /// True if `path` names this camera's device node.
  bool matches(std::string_view path) const noexcept { return path == config_.devicePath; }
  /// The device number reported by stat (major 81, minor from the node name's digits).
  unsigned long deviceNumber() const noexcept;

  WireFormat format() const;
  void setFormat(const WireFormat& wire);
  std::uint32_t rate() const;
  void setRate(std::uint32_t fps);

  /// False while unplugged (the node is gone).
  bool present() const;
  std::uint64_t generation() const;
  /// Unplugs now (once per process; later calls return false). Replugs after config().faults.replugMs.
  bool unplugOnce();

  // vb2 semantics: one capture queue per device, owned by the file that allocated its buffers;
  // every other file gets EBUSY for queue ioctls until the owner frees them or closes.
  /// True if `file` may use the queue (no owner, or it is the owner).
  bool mayUseQueue(const void* file) const;
  /// Records the owner after a successful REQBUFS (`count` 0 gives the queue up).
  void setQueueOwner(const void* file, std::uint32_t count);
  /// True when some file has buffers allocated (S_FMT then answers EBUSY).
  bool queueBusy() const;
  /// A file is going away: drops its ownership and its priority.
  void forget(const void* file);

  // V4L2 priorities (VIDIOC_G/S_PRIORITY), as the V4L2 core keeps them per device.
  /// The highest priority any open file holds.
  std::uint32_t maxPriority() const;
  /// False (EBUSY) when another file holds a higher priority than `file`.
  bool priorityAllows(const void* file) const;
  void setPriority(const void* file, std::uint32_t prio);

  /// True if this camera offers V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME: launched as H.264 with the
  /// control enabled (a UVC 1.5 camera's encoding unit). Fixed for the process.
  bool offersKeyframeControl() const noexcept {
    return config_.keyframeControl && config_.format == PixelFormat::kH264;
  }
  /// The control was written: the next H.264 frame the camera encodes is an IDR.
  void requestKeyframe() noexcept { keyframeRequested_.store(true); }
  /// Takes (clears) a pending keyframe request.
  bool takeKeyframeRequest() noexcept { return keyframeRequested_.exchange(false); }

  void trace(const char* fmt, ...) const noexcept __attribute__((format(printf, 2, 3)));

 private:
  EmuConfig config_;
  ModeTable modes_;
  mutable std::mutex mutex_;
  WireFormat format_;
  std::uint32_t rate_;
  std::uint64_t generation_ = 0;
  bool unplugged_ = false;
  std::int64_t replugAtNs_ = 0;  // 0 = never replugs
  const void* queueOwner_ = nullptr;
  std::map<const void*, std::uint32_t> priorities_;
  std::atomic<bool> keyframeRequested_{false};  // files that changed theirs from the default
};

/// The process's emulated cameras, one per configured device path, created from the environment
/// (camerasFromEnvironment) on first use and never destroyed (clients may close() during exit).
/// Thread-safety: thread-safe; the set of cameras is fixed after construction.
class CameraRig {
 public:
  explicit CameraRig(const std::vector<EmuConfig>& configs);
  /// The process's rig; a malformed environment ends the process with the reason (exit status 2).
  static CameraRig& instance();

  /// The camera whose device node is `path`, or nullptr.
  EmulatedCamera* find(std::string_view path) const noexcept;
  const std::vector<std::unique_ptr<EmulatedCamera>>& cameras() const noexcept { return cameras_; }

 private:
  std::vector<std::unique_ptr<EmulatedCamera>> cameras_;
};

}  // namespace zerohop::camemu
