#pragma once
// Device rings (CUDA VMM fds) into Vulkan: DeviceFrameImporter, its extensions and the GPU wait
// (ImportOptions::gpuWait). Part of zerohop/vulkan.hpp, which includes it at its end: include that one
// (it brings FrameBuffer, ImportOptions and the host-ring importer this builds on). docs/textures.md.

#include "zerohop/vulkan.hpp"

namespace zerohop::vulkan {

/// The device extensions the device-ring import needs (enable both at vkCreateDevice).
inline constexpr std::array<const char*, 2> kDeviceImportExtensions{VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME,
                                                                     VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME};

/// The device extensions of ImportOptions::gpuWait (enable them and the timelineSemaphore feature,
/// VkPhysicalDeviceTimelineSemaphoreFeatures or Vulkan 1.2's, at vkCreateDevice).
inline constexpr std::array<const char*, 3> kDeviceSemaphoreExtensions{
    VK_KHR_EXTERNAL_SEMAPHORE_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
    VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME};

/// True when `physicalDevice` offers kDeviceSemaphoreExtensions and timeline semaphores that export
/// as opaque fds (what ImportOptions::gpuWait needs). Needs a Vulkan 1.1 instance. Never throws.
inline bool deviceSemaphoreSupported(VkPhysicalDevice physicalDevice) noexcept {
  for (const char* extension : kDeviceSemaphoreExtensions)
    if (!deviceOffers(physicalDevice, {extension})) return false;
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &timeline;
  vkGetPhysicalDeviceFeatures2(physicalDevice, &features);
  if (timeline.timelineSemaphore != VK_TRUE) return false;
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkPhysicalDeviceExternalSemaphoreInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
  info.pNext = &type;
  info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkExternalSemaphoreProperties out{};
  out.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
  vkGetPhysicalDeviceExternalSemaphoreProperties(physicalDevice, &info, &out);
  return (out.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) != 0;
}

/// True when `physicalDevice` offers VK_KHR_external_memory_fd. Reentrant; never throws.
inline bool deviceImportSupported(VkPhysicalDevice physicalDevice) noexcept {
  return deviceOffers(physicalDevice, {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME});
}

/// Turns SharedFrames of a device ring (published by another process as CUDA VMM fds:
/// SharedFrame::deviceMemory()) into FrameBuffers, importing the ring's memory once per publisher
/// session (VkImportMemoryFdInfoKHR, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, on a dup() of the
/// reader's fd) and binding one VkBuffer per slot at slot x stride: no byte copied.
/// Ordering: with ImportOptions::gpuWait, import() never blocks: the importer's timeline semaphore
/// (exported as an opaque fd, imported into CUDA once: ReadySemaphore) is signalled by the GPU after
/// the frame's ready event (SharedFrame::signalWhenReady), and the renderer's submission waits on
/// FrameBuffer::waitSemaphore() at waitValue(). Without it (or where the semaphore is refused, said
/// once), import() waits on the host for the ready event (SharedFrame::waitReady, a
/// cudaEventSynchronize) before it returns, so the buffer holds the whole frame when the renderer submits.
/// Copy path: where the import is refused (the extension not enabled, a ring without a VMM fd:
/// legacy CUDA IPC or the publisher's own process, no memory type, or vkAllocateMemory refusing the
/// fd: Khronos does not promise that a fd CUDA exported imports into Vulkan; ImportOptions::forceCopy),
/// each frame is copied once THROUGH HOST MEMORY (SharedFrame::copyToHost: cudaMemcpy device to host,
/// into a host-visible buffer this importer allocates), counted in copiedBytes and said once (warn).
/// Unlike HostFrameImporter, a refusal for one reason is retried per ring: a ring without an fd does
/// not make the next ring's import fail.
/// Ownership: borrows the VkPhysicalDevice and VkDevice; owns the imported ring memory and the slots'
/// buffers (a ring left behind when the publisher restarts is kept until the importer is destroyed),
/// so it must outlive every FrameBuffer it returned (a FrameBuffer of the import path borrows them and
/// owns only the lease). Thread-bound (the render thread). Errors: zerohop::Error
/// (kInvalidArgument for a host or compressed frame, kDevice for a failed Vulkan or CUDA call on the
/// copy path).
class DeviceFrameImporter {
 public:
  /// `extensionEnabled`: kDeviceImportExtensions are enabled on `device` (false: every frame takes
  /// the copy path, said once).
  DeviceFrameImporter(VkPhysicalDevice physicalDevice, VkDevice device, bool extensionEnabled,
                      ImportOptions options = {})
      : physical_(physicalDevice), device_(device), options_(options) {
    vkGetPhysicalDeviceMemoryProperties(physical_, &memoryProps_);
    if (options_.forceCopy) {
      refuse("ImportOptions::forceCopy asked for the copy path");
    } else if (!extensionEnabled) {
      refuse(extensionNotEnabled(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, deviceImportSupported(physical_)));
    }
  }
  DeviceFrameImporter(const DeviceFrameImporter&) = delete;
  DeviceFrameImporter& operator=(const DeviceFrameImporter&) = delete;
  /// Frees the slots' buffers, then the imported ring memory. Only after every FrameBuffer it
  /// returned was released and the GPU work reading them completed.
  ~DeviceFrameImporter() {
    ready_ = ReadySemaphore();  // CUDA's import first: it waits for the signals it queued
    if (semaphore_ != VK_NULL_HANDLE) vkDestroySemaphore(device_, semaphore_, nullptr);
    if (producerSemaphore_ != VK_NULL_HANDLE) vkDestroySemaphore(device_, producerSemaphore_, nullptr);
    for (VkSemaphore s : retiredSemaphores_) vkDestroySemaphore(device_, s, nullptr);
    for (VkBuffer b : slotBuffers_)
      if (b != VK_NULL_HANDLE) vkDestroyBuffer(device_, b, nullptr);
    if (ringMemory_ != VK_NULL_HANDLE) vkFreeMemory(device_, ringMemory_, nullptr);
    for (const Retired& r : retired_) {
      for (VkBuffer b : r.buffers)
        if (b != VK_NULL_HANDLE) vkDestroyBuffer(device_, b, nullptr);
      vkFreeMemory(device_, r.memory, nullptr);
    }
  }

  /// Takes the lease; returns the frame as a buffer (the ring's memory, or copied once through the
  /// host). Blocks until the producer's write of the frame completed (see the class comment).
  FrameBuffer import(SharedFrame&& shared) {
    const Frame& f = shared.frame();
    if (f.memory != MemoryKind::kDevice)
      throw Error(Errc::kInvalidArgument,
                  "zerohop::vulkan::DeviceFrameImporter: the frame is in host memory (a host ring); "
                  "HostFrameImporter takes those");
    if (isCompressed(f.format) || f.planeCount == 0)
      throw Error(Errc::kInvalidArgument, std::string("zerohop::vulkan::DeviceFrameImporter: '") +
                                              std::string(formatName(f.format)) + "' frames are not images");
    const std::size_t span = imageSpan(f);
    FrameBuffer fb;
    if (forced_.empty() && tryImport(shared, span, fb)) {
      ++stats_.frames;
      ++stats_.imported;
      return fb;
    }
    copy(std::move(shared), span, fb);
    ++stats_.frames;
    ++stats_.copied;
    stats_.copiedBytes += span;
    return fb;
  }

  const ImportStats& stats() const noexcept { return stats_; }
  /// Why frames took the copy path (the first reason; empty while every frame was imported).
  const std::string& refusal() const noexcept { return refusal_; }
  /// ImportOptions::gpuWait: why the host waits instead (empty while the GPU waits, or not asked).
  const std::string& gpuWaitRefusal() const noexcept { return gpuWaitRefusal_; }
  /// True once a frame was handed over with the GPU wait (FrameBuffer::waitSemaphore set).
  bool gpuWaiting() const noexcept { return ready_ && gpuWaitRefusal_.empty(); }

  /// The publisher's NEXT frame as a buffer, before the frame exists: the ring slot it announced
  /// (Subscriber::upcoming()) and, as its waitSemaphore() at waitValue() (the frame's publish
  /// index), a timeline semaphore that the PUBLISHER's GPU signals once it wrote that frame (made
  /// here and handed over with Subscriber::signalOnPublish on first use and for each new publisher
  /// session). Submit the work that reads it now, waiting on that semaphore: no CPU and no other
  /// CUDA context then stand between the producer's work and the renderer's (docs/textures.md, "The
  /// next frame, submitted before it exists"). When that work completed, confirm() it. nullopt (read
  /// with import() as before) until a frame of this publisher session was imported in place (the
  /// ring's memory comes with it), when the publisher announced nothing, or where the semaphore
  /// cannot be made or the publisher cannot signal it (said once: upcomingRefusal()). The hand-over
  /// is one round trip to the publisher (at most SubscribeOptions::handshakeTimeout; a publisher that
  /// answered before but not now is stalled: nullopt until it publishes again). Needs what
  /// ImportOptions::gpuWait needs (kDeviceSemaphoreExtensions, timelineSemaphore).
  std::optional<FrameBuffer> upcoming(Subscriber& subscriber) {
    if (!lastRing_ || ringMemory_ == VK_NULL_HANDLE || !upcomingRefusal_.empty()) return std::nullopt;
    if (subscriber.info().sessionId != lastRing_->sessionId)
      return std::nullopt;  // import() one of the new session first
    if (!producerSemaphoreFor(subscriber)) return std::nullopt;
    const std::optional<UpcomingFrame> next = subscriber.upcoming();
    if (!next || next->publishIndex <= producerWaited_) return std::nullopt;
    DeviceRingMemory mem = *lastRing_;
    mem.slotOffset = next->slotOffset;
    const VkBuffer buffer = slotBuffer(mem, lastSlotSize_);
    if (buffer == VK_NULL_HANDLE) return std::nullopt;
    FrameBuffer fb;
    fb.device_ = device_;
    fb.buffer_ = buffer;
    fb.memory_ = VK_NULL_HANDLE;
    fb.ownsBuffer_ = false;
    fb.size_ = lastSlotSize_;
    fb.imported_ = true;
    fb.waitSemaphore_ = producerSemaphore_;
    fb.waitValue_ = next->publishIndex;
    fb.upcoming_ = *next;
    fb.frame_ = lastFrame_;  // the ring's format and size; the frame's own metadata comes with confirm()
    fb.frame_.data = {};
    fb.frame_.sequence = 0;
    setOffsets(lastFrame_, fb);
    producerWaited_ = next->publishIndex;
    return fb;
  }
  /// After the GPU work that read `fb` (from upcoming()) completed: true when the slot held that
  /// frame (fb then carries its lease and metadata, as import() would have returned it); false when
  /// the publisher wrote it elsewhere or overwrote it since (what was drawn is another frame: draw
  /// again from import(subscriber.next(...))). Never blocks.
  bool confirm(Subscriber& subscriber, FrameBuffer& fb) {
    std::optional<SharedFrame> shared = subscriber.confirm(fb.upcoming_);
    if (!shared) {
      ++upcomingMissed_;
      return false;
    }
    fb.frame_ = shared->frame();
    setOffsets(fb.frame_, fb);
    fb.shared_ = std::move(*shared);
    ++stats_.frames;
    ++stats_.imported;
    ++upcomingConfirmed_;
    cancelsInARow_ = 0;
    return true;
  }
  /// Releases a queue still waiting on `fb` (from upcoming()) when its frame does not come (the
  /// publisher stalled or went away): the host signals the semaphore to fb.waitValue(), the work
  /// runs on a stale slot (confirm() says false), and upcoming() hands the publisher a new semaphore
  /// (this one's values are the host's now) once it has published again: until then it gives nothing,
  /// without asking a stalled publisher (import() the next frame as usual); after two in a row with no
  /// frame confirmed between,
  /// upcoming() gives nothing more (upcomingRefusal()). Throws kDevice when Vulkan refuses.
  void cancel(FrameBuffer& fb) {
    if (fb.waitSemaphore_ == VK_NULL_HANDLE || fb.waitSemaphore_ != producerSemaphore_) return;
    const auto getValue =
        reinterpret_cast<PFN_vkGetSemaphoreCounterValue>(deviceProc("vkGetSemaphoreCounterValue"));
    const auto signal = reinterpret_cast<PFN_vkSignalSemaphore>(deviceProc("vkSignalSemaphore"));
    std::uint64_t now = 0;
    if (getValue == nullptr || signal == nullptr)
      throw Error(Errc::kDevice, "zerohop::vulkan: vkSignalSemaphore is not available (timeline semaphores)");
    VkResult r = getValue(device_, producerSemaphore_, &now);
    if (r == VK_SUCCESS && now < fb.waitValue_) {
      VkSemaphoreSignalInfo info{};
      info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
      info.semaphore = producerSemaphore_;
      info.value = fb.waitValue_;
      r = signal(device_, &info);
    }
    if (r != VK_SUCCESS)
      throw Error(Errc::kDevice, std::string("zerohop::vulkan: vkSignalSemaphore: ") + resultName(r));
    askAfter_ = fb.waitValue_;
    askAfterSession_ = producerSession_;
    producerSession_ = 0;  // a new semaphore for the next upcoming(), once the publisher published again
    // Twice in a row with no frame between: the publisher is not signalling (a failed signal is its
    // log line); stop asking rather than stall the renderer again and again.
    if (++cancelsInARow_ >= 2)
      refuseUpcoming("the publisher's signal did not come for two frames in a row (see its log)");
  }
  /// Why upcoming() gives nothing (empty while it may).
  const std::string& upcomingRefusal() const noexcept { return upcomingRefusal_; }
  /// upcoming() buffers confirm() found holding their frame, and those it did not.
  std::uint64_t upcomingConfirmed() const noexcept { return upcomingConfirmed_; }
  std::uint64_t upcomingMissed() const noexcept { return upcomingMissed_; }

 private:
  static std::size_t imageSpan(const Frame& f) noexcept {
    std::size_t end = 0;
    ImageLayout l{};
    try {
      l = computeLayout(f.format, f.width, f.height);
    } catch (...) {
    }
    for (std::uint32_t p = 0; p < f.planeCount; ++p) {
      const std::size_t planeEnd = static_cast<std::size_t>(f.data[p] - f.data[0]) +
                                   std::size_t{f.pitch[p]} * (p < l.planeCount ? l.planes[p].rows : f.height);
      if (planeEnd > end) end = planeEnd;
    }
    return end;
  }
  static void setOffsets(const Frame& f, FrameBuffer& fb) noexcept {
    for (std::uint32_t p = 0; p < f.planeCount && p < kMaxPlanes; ++p)
      fb.offsets_[p] = static_cast<VkDeviceSize>(f.data[p] - f.data[0]);
  }
  void refuse(std::string why) {
    if (refusal_.empty())
      log::warn("zerohop::vulkan: device frames are copied through host memory, not imported in place (", why,
                "); each frame costs one copy, counted in copiedBytes");
    if (refusal_.empty()) refusal_ = why;
    if (forced_.empty() && (options_.forceCopy || why.find("not enabled") != std::string::npos)) forced_ = why;
  }
  std::uint32_t pickType(std::uint32_t bits, VkMemoryPropertyFlags want) const noexcept {
    for (std::uint32_t i = 0; i < memoryProps_.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (memoryProps_.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
  }
  // A ring left behind (the publisher restarted) is kept until the destructor: FrameBuffers of it
  // may still be in flight on the GPU.
  void retireRing() {
    if (ringMemory_ != VK_NULL_HANDLE) retired_.push_back(Retired{ringMemory_, std::move(slotBuffers_)});
    slotBuffers_.clear();
    ringMemory_ = VK_NULL_HANDLE;
    ringFailed_ = false;
  }
  VkBuffer makeSlotBuffer(VkDeviceSize size, VkMemoryRequirements* req) {
    VkExternalMemoryBufferCreateInfo ext{};
    ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.pNext = &ext;
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer b = VK_NULL_HANDLE;
    const VkResult r = vkCreateBuffer(device_, &info, nullptr, &b);
    if (r != VK_SUCCESS) {
      refuse(std::string("vkCreateBuffer (external memory, opaque fd): ") + resultName(r));
      return VK_NULL_HANDLE;
    }
    vkGetBufferMemoryRequirements(device_, b, req);
    return b;
  }
  // Imports the ring once per (publisher session, fd); false (refused, said once) on any failure.
  bool importRing(const DeviceRingMemory& mem, VkDeviceSize slotSize, std::uint32_t slots) {
    if (ringMemory_ != VK_NULL_HANDLE && mem.sessionId == ringSession_ && mem.fd == ringFd_) return true;
    if (ringFailed_ && mem.sessionId == ringSession_ && mem.fd == ringFd_) return false;
    retireRing();
    ringSession_ = mem.sessionId;
    ringFd_ = mem.fd;
    ringFailed_ = true;  // until it succeeded
    VkMemoryRequirements req{};
    VkBuffer probe = makeSlotBuffer(slotSize, &req);
    if (probe == VK_NULL_HANDLE) return false;
    vkDestroyBuffer(device_, probe, nullptr);
    std::uint32_t type = pickType(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type == UINT32_MAX) type = pickType(req.memoryTypeBits, 0);
    if (type == UINT32_MAX) {
      refuse("no Vulkan memory type takes an opaque-fd buffer (memoryTypeBits " + std::to_string(req.memoryTypeBits) +
             ")");
      return false;
    }
    if (mem.slotStride % std::max<VkDeviceSize>(req.alignment, 1) != 0) {
      refuse("the ring's slot stride " + std::to_string(mem.slotStride) + " is not a multiple of the buffer alignment " +
             std::to_string(req.alignment));
      return false;
    }
    const int fd = ::fcntl(mem.fd, F_DUPFD_CLOEXEC, 0);  // Vulkan owns what it imports: give it a dup
    if (fd < 0) {
      refuse(std::string("fcntl(F_DUPFD_CLOEXEC) of the ring's memory fd: ") + std::strerror(errno));
      return false;
    }
    VkImportMemoryFdInfoKHR import{};
    import.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR;
    import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    import.fd = fd;
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.pNext = &import;
    alloc.allocationSize = mem.allocationBytes;
    alloc.memoryTypeIndex = type;
    const VkResult r = vkAllocateMemory(device_, &alloc, nullptr, &ringMemory_);
    if (r != VK_SUCCESS) {
      ::close(fd);  // ownership passes to Vulkan only on success
      ringMemory_ = VK_NULL_HANDLE;
      refuse(std::string("vkAllocateMemory (import of the ring's CUDA VMM fd, opaque fd): ") + resultName(r));
      return false;
    }
    slotBuffers_.assign(slots, VK_NULL_HANDLE);
    ringFailed_ = false;
    return true;
  }
  VkBuffer slotBuffer(const DeviceRingMemory& mem, VkDeviceSize slotSize) {
    const auto slot = static_cast<std::size_t>(mem.slotOffset / mem.slotStride);
    if (slot >= slotBuffers_.size()) slotBuffers_.resize(slot + 1, VK_NULL_HANDLE);
    if (slotBuffers_[slot] != VK_NULL_HANDLE) return slotBuffers_[slot];
    VkMemoryRequirements req{};
    VkBuffer b = makeSlotBuffer(slotSize, &req);
    if (b == VK_NULL_HANDLE) return VK_NULL_HANDLE;
    const VkResult r = vkBindBufferMemory(device_, b, ringMemory_, mem.slotOffset);
    if (r != VK_SUCCESS) {
      vkDestroyBuffer(device_, b, nullptr);
      refuse(std::string("vkBindBufferMemory (a slot of the imported ring): ") + resultName(r));
      return VK_NULL_HANDLE;
    }
    slotBuffers_[slot] = b;
    return b;
  }
  bool tryImport(SharedFrame& shared, std::size_t span, FrameBuffer& fb) {
    const std::optional<DeviceRingMemory> mem = shared.deviceMemory();
    if (!mem) {
      refuse("the ring has no memory fd to import (legacy CUDA IPC, or the publisher's own process: "
             "publish with ShareOptions::DeviceExport::kVmmFd from another process)");
      return false;
    }
    const VkDeviceSize slotSize = (std::max<std::size_t>(span, shared.frame().capacity) + 3) / 4 * 4;
    if (mem->slotStride == 0 || slotSize > mem->slotStride) {
      refuse("the ring's slot stride is smaller than a frame");
      return false;
    }
    const std::uint32_t slots = static_cast<std::uint32_t>(mem->allocationBytes / mem->slotStride);
    if (!importRing(*mem, slotSize, slots)) return false;
    const VkBuffer buffer = slotBuffer(*mem, slotSize);
    if (buffer == VK_NULL_HANDLE) return false;
    // The frame's planes sit at their offsets from the slot's start (data[0] is the slot's first byte
    // for the rings zerohop publishes: planeOffset[0] is 0).
    VkSemaphore wait = VK_NULL_HANDLE;
    std::uint64_t waitValue = 0;
    if (gpuWait(shared.frame().gpu.device)) {
      waitValue = ++signalled_;
      try {
        shared.signalWhenReady(ready_, waitValue);  // the GPU signals once the producer's write completed
        wait = semaphore_;
      } catch (const Error& e) {
        refuseGpuWait(std::string("SharedFrame::signalWhenReady: ") + e.what());
      }
    }
    if (wait == VK_NULL_HANDLE)
      shared.waitReady();  // the producer's write completed: the renderer may read at once
    const Frame& f = shared.frame();
    fb.device_ = device_;
    fb.buffer_ = buffer;
    fb.memory_ = VK_NULL_HANDLE;  // the importer's ring memory, borrowed
    fb.ownsBuffer_ = false;
    fb.size_ = slotSize;
    fb.imported_ = true;
    fb.waitSemaphore_ = wait;
    fb.waitValue_ = waitValue;
    fb.frame_ = f;
    setOffsets(f, fb);
    fb.shared_ = std::move(shared);
    lastRing_ = *mem;  // upcoming() binds the next slot of this ring before its frame exists
    lastSlotSize_ = slotSize;
    lastFrame_ = f;
    return true;
  }
  PFN_vkVoidFunction deviceProc(const char* name) const {
    PFN_vkVoidFunction f = vkGetDeviceProcAddr(device_, name);
    return f != nullptr ? f : vkGetDeviceProcAddr(device_, (std::string(name) + "KHR").c_str());
  }
  void refuseUpcoming(std::string why) {
    if (upcomingRefusal_.empty())
      log::warn("zerohop::vulkan: the next frame cannot be submitted before it exists (", why,
                "); import() each frame as it comes");
    upcomingRefusal_ = std::move(why);
  }
  // upcoming(): a timeline semaphore the publisher signals, one per publisher session (its publish
  // indices start at 1 again), handed over with Subscriber::signalOnPublish.
  bool producerSemaphoreFor(Subscriber& subscriber) {
    const std::uint64_t session = subscriber.info().sessionId;
    if (producerSemaphore_ != VK_NULL_HANDLE && producerSession_ == session) return true;
    if (askAfter_ != 0 && askAfterSession_ == session) {  // after a cancel(): not before the publisher
                                                          // published again (it may be stalled)
      const std::optional<UpcomingFrame> next = subscriber.upcoming();
      if (!next || next->publishIndex <= askAfter_) return false;
    }
    int fd = -1;
    std::string why;
    const VkSemaphore made = exportableTimeline(fd, why);
    if (made == VK_NULL_HANDLE) {
      refuseUpcoming(why);
      return false;
    }
    try {
      subscriber.signalOnPublish(fd);  // owns fd from here
    } catch (const Error& e) {
      vkDestroySemaphore(device_, made, nullptr);
      if (e.code() == Errc::kUnavailable && subscriber.connected()) {  // stalled: ask once it publishes again
        const std::optional<UpcomingFrame> next = subscriber.upcoming();
        askAfter_ = next ? next->publishIndex : 1;
        askAfterSession_ = session;
        log::warn("zerohop::vulkan: ", e.what());
        return false;
      }
      refuseUpcoming(std::string("Subscriber::signalOnPublish: ") + e.what());
      return false;
    }
    askAfter_ = 0;
    // A queue may still wait on the one it replaces: it is destroyed with the importer.
    if (producerSemaphore_ != VK_NULL_HANDLE) retiredSemaphores_.push_back(producerSemaphore_);
    producerSemaphore_ = made;
    producerSession_ = session;
    producerWaited_ = 0;
    return true;
  }
  // A timeline semaphore exported as an opaque fd (`fd`, the caller's): what CUDA imports. VK_NULL_HANDLE
  // with `why` where Vulkan cannot make or export it.
  VkSemaphore exportableTimeline(int& fd, std::string& why) {
    VkSemaphoreTypeCreateInfo type{};
    type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkExportSemaphoreCreateInfo exportInfo{};
    exportInfo.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
    exportInfo.pNext = &type;
    exportInfo.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkSemaphoreCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    info.pNext = &exportInfo;
    VkSemaphore made = VK_NULL_HANDLE;
    VkResult r = vkCreateSemaphore(device_, &info, nullptr, &made);
    if (r != VK_SUCCESS) {
      why = std::string("vkCreateSemaphore (timeline, exportable as an opaque fd): ") + resultName(r) +
            "; are kDeviceSemaphoreExtensions and the timelineSemaphore feature enabled?";
      return VK_NULL_HANDLE;
    }
    const auto getFd =
        reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(vkGetDeviceProcAddr(device_, "vkGetSemaphoreFdKHR"));
    if (getFd == nullptr) {
      vkDestroySemaphore(device_, made, nullptr);
      why = std::string(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) + " is not enabled on this VkDevice";
      return VK_NULL_HANDLE;
    }
    VkSemaphoreGetFdInfoKHR get{};
    get.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
    get.semaphore = made;
    get.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    r = getFd(device_, &get, &fd);
    if (r != VK_SUCCESS) {
      vkDestroySemaphore(device_, made, nullptr);
      why = std::string("vkGetSemaphoreFdKHR (opaque fd): ") + resultName(r);
      return VK_NULL_HANDLE;
    }
    return made;
  }
  void refuseGpuWait(std::string why) {
    if (gpuWaitRefusal_.empty())
      log::warn(
          "zerohop::vulkan: the render thread waits for each device frame's write (ImportOptions::gpuWait "
          "refused: ",
          why, ")");
    gpuWaitRefusal_ = std::move(why);
  }
  // ImportOptions::gpuWait: the timeline semaphore, made and imported into CUDA on the first frame.
  bool gpuWait(int cudaDevice) {
    if (!options_.gpuWait || !gpuWaitRefusal_.empty()) return false;
    if (ready_) {
      if (ready_.device() == cudaDevice) return true;
      refuseGpuWait("frames of CUDA device " + std::to_string(cudaDevice) + " after device " +
                    std::to_string(ready_.device()));
      return false;
    }
    int fd = -1;
    std::string why;
    semaphore_ = exportableTimeline(fd, why);
    if (semaphore_ == VK_NULL_HANDLE) {
      refuseGpuWait(why);
      return false;
    }
    try {
      ready_ = ReadySemaphore(fd, ReadySemaphore::Kind::kTimeline, cudaDevice);  // owns fd from here
    } catch (const Error& e) {
      refuseGpuWait(std::string("ReadySemaphore (the semaphore into CUDA): ") + e.what());
      return false;
    }
    return true;
  }
  void copy(SharedFrame&& shared, std::size_t span, FrameBuffer& fb) {
    const Frame& f = shared.frame();
    const VkDeviceSize size = (span + 3) / 4 * 4;
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkResult r = vkCreateBuffer(device_, &info, nullptr, &buffer);
    if (r != VK_SUCCESS) throw Error(Errc::kDevice, std::string("vkCreateBuffer: ") + resultName(r));
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device_, buffer, &req);
    const std::uint32_t type = pickType(
        req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    r = type == UINT32_MAX ? VK_ERROR_FEATURE_NOT_PRESENT : vkAllocateMemory(device_, &alloc, nullptr, &memory);
    void* mapped = nullptr;
    if (r == VK_SUCCESS) r = vkBindBufferMemory(device_, buffer, memory, 0);
    if (r == VK_SUCCESS) r = vkMapMemory(device_, memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    if (r != VK_SUCCESS) {
      if (memory != VK_NULL_HANDLE) vkFreeMemory(device_, memory, nullptr);
      vkDestroyBuffer(device_, buffer, nullptr);
      throw Error(Errc::kDevice, std::string("zerohop::vulkan device copy path: a host-visible buffer of ") +
                                     std::to_string(size) + " bytes (vkAllocateMemory/vkMapMemory): " + resultName(r));
    }
    try {
      shared.copyToHost(mapped, span);  // after the ready event; device to host
    } catch (...) {
      vkUnmapMemory(device_, memory);
      vkFreeMemory(device_, memory, nullptr);
      vkDestroyBuffer(device_, buffer, nullptr);
      throw;
    }
    vkUnmapMemory(device_, memory);
    fb.device_ = device_;
    fb.buffer_ = buffer;
    fb.memory_ = memory;
    fb.ownsBuffer_ = true;
    fb.size_ = size;
    fb.imported_ = false;
    fb.copyIntact_ = shared.valid();
    fb.frame_ = f;
    fb.frame_.data = {};
    setOffsets(f, fb);
    shared.release();
  }

  VkPhysicalDevice physical_;
  VkDevice device_;
  ImportOptions options_;
  VkPhysicalDeviceMemoryProperties memoryProps_{};
  VkDeviceMemory ringMemory_ = VK_NULL_HANDLE;
  std::vector<VkBuffer> slotBuffers_;
  std::uint64_t ringSession_ = 0;
  int ringFd_ = -1;
  bool ringFailed_ = false;
  struct Retired {
    VkDeviceMemory memory;
    std::vector<VkBuffer> buffers;
  };
  std::vector<Retired> retired_;
  std::string refusal_, forced_;
  ImportStats stats_{};
  VkSemaphore semaphore_ = VK_NULL_HANDLE;  // ImportOptions::gpuWait: signalled by CUDA per frame
  ReadySemaphore ready_;                    // its import into CUDA
  std::uint64_t signalled_ = 0;             // the last value asked of it
  std::string gpuWaitRefusal_;
  // upcoming(): the last imported frame's ring, slot size and metadata; the publisher's semaphore.
  std::optional<DeviceRingMemory> lastRing_;
  VkDeviceSize lastSlotSize_ = 0;
  Frame lastFrame_{};
  VkSemaphore producerSemaphore_ = VK_NULL_HANDLE;
  std::vector<VkSemaphore> retiredSemaphores_;
  std::uint64_t producerSession_ = 0;  // the publisher session it was handed to (0: make a new one)
  std::uint64_t producerWaited_ = 0;   // the last publish index upcoming() handed out
  std::string upcomingRefusal_;
  std::uint64_t upcomingConfirmed_ = 0, upcomingMissed_ = 0;
  std::uint64_t askAfter_ = 0;  // upcoming() asks for a new semaphore only once the announced index passes it
  std::uint64_t askAfterSession_ = 0;  // in this publisher session (a new one starts its indices at 1)
  int cancelsInARow_ = 0;  // cancel() calls since the last frame confirm() found
};

}  // namespace zerohop::vulkan
