#include "camemu/emulated_camera.hpp"

#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop::camemu {

EmulatedCamera::EmulatedCamera(EmuConfig config)
    : config_(std::move(config)),
      modes_(config_),
      format_(wireFormat(config_.format, config_.width, config_.height)),
      rate_(config_.fps) {}

CameraRig::CameraRig(const std::vector<EmuConfig>& configs) {
  cameras_.reserve(configs.size());
  for (const EmuConfig& c : configs) cameras_.push_back(std::make_unique<EmulatedCamera>(c));
}

CameraRig& CameraRig::instance() {
  static CameraRig* rig = [] {
    try {
      return new CameraRig(camerasFromEnvironment());
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::_Exit(2);  // a misconfigured emulator must not pretend to be a camera
    }
  }();
  return *rig;
}

EmulatedCamera* CameraRig::find(std::string_view path) const noexcept {
  for (const auto& camera : cameras_) {
    if (camera->matches(path)) return camera.get();
  }
  return nullptr;
}

unsigned long EmulatedCamera::deviceNumber() const noexcept {
  unsigned minor = 0;
  std::size_t i = config_.devicePath.size();
  while (i > 0 && config_.devicePath[i - 1] >= '0' && config_.devicePath[i - 1] <= '9') --i;
  for (; i < config_.devicePath.size(); ++i)
    minor = minor * 10 + static_cast<unsigned>(config_.devicePath[i] - '0');
  return makedev(81, minor);
}

WireFormat EmulatedCamera::format() const {
  std::lock_guard lock(mutex_);
  return format_;
}

void EmulatedCamera::setFormat(const WireFormat& wire) {
  std::lock_guard lock(mutex_);
  format_ = wire;
}

std::uint32_t EmulatedCamera::rate() const {
  std::lock_guard lock(mutex_);
  return rate_;
}

void EmulatedCamera::setRate(std::uint32_t fps) {
  std::lock_guard lock(mutex_);
  rate_ = fps;
}

bool EmulatedCamera::present() const {
  std::lock_guard lock(mutex_);
  return !unplugged_ || (replugAtNs_ != 0 && monotonicNs() >= replugAtNs_);
}

std::uint64_t EmulatedCamera::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

bool EmulatedCamera::unplugOnce() {
  std::lock_guard lock(mutex_);
  if (unplugged_) return false;
  unplugged_ = true;
  ++generation_;
  // The device that comes back is a new one: files of the old one no longer own its queue.
  queueOwner_ = nullptr;
  priorities_.clear();
  const auto ms = config_.faults.replugMs;
  replugAtNs_ = ms < 0 ? 0 : monotonicNs() + std::max<std::int64_t>(ms, 1) * 1'000'000;
  return true;
}

namespace {
constexpr std::uint32_t kDefaultPriority = 2;  // V4L2_PRIORITY_DEFAULT (interactive)
}  // namespace

bool EmulatedCamera::mayUseQueue(const void* file) const {
  std::lock_guard lock(mutex_);
  return queueOwner_ == nullptr || queueOwner_ == file;
}

void EmulatedCamera::setQueueOwner(const void* file, std::uint32_t count) {
  std::lock_guard lock(mutex_);
  queueOwner_ = count ? file : nullptr;
}

bool EmulatedCamera::queueBusy() const {
  std::lock_guard lock(mutex_);
  return queueOwner_ != nullptr;
}

void EmulatedCamera::forget(const void* file) {
  std::lock_guard lock(mutex_);
  if (queueOwner_ == file) queueOwner_ = nullptr;
  priorities_.erase(file);
}

std::uint32_t EmulatedCamera::maxPriority() const {
  std::lock_guard lock(mutex_);
  std::uint32_t m = kDefaultPriority;
  for (const auto& [f, p] : priorities_) m = std::max(m, p);
  return m;
}

bool EmulatedCamera::priorityAllows(const void* file) const {
  std::lock_guard lock(mutex_);
  const auto mine = priorities_.count(file) ? priorities_.at(file) : kDefaultPriority;
  for (const auto& [f, p] : priorities_) {
    if (f != file && p > mine) return false;
  }
  return true;
}

void EmulatedCamera::setPriority(const void* file, std::uint32_t prio) {
  std::lock_guard lock(mutex_);
  priorities_[file] = prio;
}

void EmulatedCamera::trace(const char* fmt, ...) const noexcept {
  if (!config_.verbose) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "camemu[%d] %s: %s\n", static_cast<int>(getpid()), config_.devicePath.c_str(), line);
}

}  // namespace zerohop::camemu
