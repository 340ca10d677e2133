#pragma once
// Frames of a share as Vulkan buffers: host rings imported in place with VK_EXT_external_memory_host
// (HostFrameImporter), device rings from their CUDA VMM fd with VK_KHR_external_memory_fd
// (DeviceFrameImporter, in zerohop/vulkan_device.hpp, which this header includes at its end).
// Header-only and opt-in: it includes <vulkan/vulkan.h>, so include it only where you use Vulkan and
// link the Vulkan loader (CMake: find_package(Vulkan), Vulkan::Vulkan). No other zerohop header
// includes it, and libzerohop does not depend on Vulkan. Guide for engine plugins: docs/textures.md.
//
//   zerohop::vulkan::HostFrameImporter importer(physicalDevice, device,
//       zerohop::vulkan::hostImportSupported(physicalDevice));  // and that extension enabled on `device`
//   auto shared = sub.next(std::chrono::milliseconds(100));
//   zerohop::vulkan::FrameBuffer fb = importer.import(std::move(*shared));  // holds the lease
//   // bind fb.buffer() (a storage buffer: planes at fb.planeOffset(p), rows fb.pitch(p) bytes apart),
//   // submit the work that reads it with a fence ...
//   // ... once that fence signalled: fb.valid() says the publisher did not overwrite the slot meanwhile
//   fb.release();  // or let it go out of scope: the buffer, the imported memory, then the lease
//
// Import: a host ring's slot is page aligned and its stride a whole number of pages
// (docs/share-protocol.md, "slots"), so the slot the reader has mapped read-only is imported as it is
// (VkImportMemoryHostPointerInfoEXT over [slot, slot + capacity rounded up to a page)) into a
// VkBuffer created for VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT: no byte is copied, and the
// GPU reads the ring's pages (over PCIe on a discrete GPU). The memory is read-only: never bind it
// for writing.
// Copy path: where the import is refused (the extension is not enabled, the driver's
// minImportedHostPointerAlignment is above the page size, no memory type accepts the pointer, or
// vkAllocateMemory refuses it; ImportOptions::forceCopy forces it), the frame's bytes are copied once
// into a host-visible buffer this importer allocates for that frame; the lease is given back right after
// the copy. ImportStats::copiedBytes counts them, and the first refusal is logged once (warn) with its
// reason (HostFrameImporter::refusal()); it is never silent. After a refusal the importer stays on the
// copy path (a driver that refused one slot of a ring would refuse the next).
// Ownership: the importer borrows the VkPhysicalDevice and VkDevice (they must outlive it and every
// FrameBuffer). A FrameBuffer owns its VkBuffer, its VkDeviceMemory and the SharedFrame (the lease);
// destroying it frees them in that order. Destroy it only after the GPU work that reads it completed.
// Thread-safety: HostFrameImporter is thread-bound (import() from the render thread); a FrameBuffer is
// thread-bound and may be moved to another thread. Errors: zerohop::Error (kInvalidArgument for a
// frame that is not a host image frame, kDevice for a Vulkan call that fails on the copy path, naming
// the call and its VkResult).

#include <fcntl.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zerohop/error.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/log.hpp"
#include "zerohop/pixel_format.hpp"
#include "zerohop/share.hpp"

namespace zerohop::vulkan {

/// The device extension the in-place import needs (enable it when you create the VkDevice).
inline constexpr const char* kHostImportExtension = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;

/// VkResult in words ("VK_ERROR_OUT_OF_DEVICE_MEMORY"), for messages.
inline const char* resultName(VkResult r) noexcept {
  switch (r) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
      return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INVALID_EXTERNAL_HANDLE:
      return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
    default:
      return "VkResult (unnamed)";
  }
}

/// True when `physicalDevice` offers every device extension in `names`. Reentrant; never throws.
inline bool deviceOffers(VkPhysicalDevice physicalDevice, std::initializer_list<const char*> names) noexcept {
  std::uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(physicalDevice, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> props(n);
  if (vkEnumerateDeviceExtensionProperties(physicalDevice, nullptr, &n, props.data()) != VK_SUCCESS)
    return false;
  for (const char* want : names)
    if (std::none_of(props.begin(), props.end(), [want](const VkExtensionProperties& p) {
          return std::strcmp(p.extensionName, want) == 0;
        }))
      return false;
  return true;
}

/// True when `physicalDevice` offers VK_EXT_external_memory_host. Reentrant; never throws.
inline bool hostImportSupported(VkPhysicalDevice physicalDevice) noexcept {
  return deviceOffers(physicalDevice, {kHostImportExtension});
}

/// Why an importer takes the copy path when the application did not enable `extension` on its VkDevice
/// (`offered`: the GPU has it), for its one warning.
inline std::string extensionNotEnabled(const char* extension, bool offered) {
  return std::string(extension) + " is not enabled on this VkDevice (" +
         (offered ? "the GPU offers it: enable it at vkCreateDevice" : "the driver does not offer it") + ")";
}

struct ImportOptions {
  /// Take the copy path even where the import would work (to test it, or to give the lease back at
  /// once on a GPU that reads host memory slowly). Logged once like a refusal.
  bool forceCopy = false;
  /// DeviceFrameImporter: the render queue, not the render thread, waits for the producer's write.
  /// Set it when kDeviceSemaphoreExtensions and the timelineSemaphore feature are enabled on the
  /// VkDevice (deviceSemaphoreSupported says whether the GPU offers them); then import() of a device
  /// frame does not block, and the submission that reads the buffer must wait on the FrameBuffer's
  /// waitSemaphore() at waitValue(). Where the semaphore cannot be made, exported or imported into
  /// CUDA, the host waits as without it, said once (DeviceFrameImporter::gpuWaitRefusal()).
  bool gpuWait = false;
};

struct ImportStats {
  std::uint64_t frames = 0;       ///< import() calls that returned a FrameBuffer
  std::uint64_t imported = 0;     ///< of them, in place (no copy)
  std::uint64_t copied = 0;       ///< of them, on the copy path
  std::uint64_t copiedBytes = 0;  ///< bytes the copy path copied (0 when every frame was imported)
};

/// One frame as a VkBuffer the renderer reads. Move-only; see the header comment for ownership.
class FrameBuffer {
 public:
  FrameBuffer() = default;
  FrameBuffer(const FrameBuffer&) = delete;
  FrameBuffer& operator=(const FrameBuffer&) = delete;
  FrameBuffer(FrameBuffer&& o) noexcept { *this = std::move(o); }
  FrameBuffer& operator=(FrameBuffer&& o) noexcept {
    if (this != &o) {
      release();
      device_ = std::exchange(o.device_, VK_NULL_HANDLE);
      buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
      memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
      size_ = std::exchange(o.size_, 0);
      imported_ = o.imported_;
      ownsBuffer_ = o.ownsBuffer_;
      copyIntact_ = o.copyIntact_;
      waitSemaphore_ = std::exchange(o.waitSemaphore_, VK_NULL_HANDLE);
      waitValue_ = o.waitValue_;
      upcoming_ = o.upcoming_;
      frame_ = o.frame_;
      offsets_ = o.offsets_;
      shared_ = std::move(o.shared_);
    }
    return *this;
  }
  ~FrameBuffer() { release(); }

  VkBuffer buffer() const noexcept { return buffer_; }
  VkDeviceMemory memory() const noexcept { return memory_; }
  /// Bytes of the buffer (a multiple of 4: it binds as a uint[] storage buffer).
  VkDeviceSize size() const noexcept { return size_; }
  /// Where plane `p` starts in the buffer, and its row pitch in bytes.
  VkDeviceSize planeOffset(std::uint32_t p) const noexcept { return p < kMaxPlanes ? offsets_[p] : 0; }
  std::uint32_t pitch(std::uint32_t p) const noexcept { return frame_.pitch[p]; }
  /// The frame's metadata (format, size, sequence, timestamps). Its data pointers are the ring's on
  /// the import path (not to be read after release()), null on the copy path.
  const Frame& frame() const noexcept { return frame_; }
  /// True: the ring's own memory (zero copy). False: this importer's copy.
  bool imported() const noexcept { return imported_; }
  /// Import path: true while the slot still holds this frame (call it after the GPU work that read
  /// the buffer completed). Copy path: whether the copy was intact when it was made.
  bool valid() const noexcept { return shared_ ? shared_.valid() : copyIntact_; }
  /// A device frame imported with ImportOptions::gpuWait: the timeline semaphore the submission that
  /// reads the buffer must wait on (VkTimelineSemaphoreSubmitInfo) until it reaches waitValue(): the
  /// GPU signals it when the producer's write of the frame completed. VK_NULL_HANDLE when the frame
  /// is complete already (host frames, the copy path, the host wait). Owned by the importer.
  VkSemaphore waitSemaphore() const noexcept { return waitSemaphore_; }
  std::uint64_t waitValue() const noexcept { return waitValue_; }
  /// CLOCK_MONOTONIC ns when the publisher committed the frame (0 for a buffer of
  /// DeviceFrameImporter::upcoming() until confirm() said it holds the frame).
  std::int64_t publishNs() const noexcept { return shared_ ? shared_.publishNs() : 0; }
  /// Frees the buffer and its memory, then gives the lease back. Idempotent. Only after the GPU
  /// work that reads the buffer completed.
  void release() noexcept {
    if (device_ != VK_NULL_HANDLE) {
      if (buffer_ != VK_NULL_HANDLE && ownsBuffer_) vkDestroyBuffer(device_, buffer_, nullptr);
      if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, memory_, nullptr);
    }
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    device_ = VK_NULL_HANDLE;
    shared_.release();
  }
  explicit operator bool() const noexcept { return buffer_ != VK_NULL_HANDLE; }

 private:
  friend class HostFrameImporter;
  friend class DeviceFrameImporter;
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  bool imported_ = false;
  bool ownsBuffer_ = true;  // false: a DeviceFrameImporter's per-slot buffer (memory_ null: the ring's, borrowed)
  bool copyIntact_ = false;
  VkSemaphore waitSemaphore_ = VK_NULL_HANDLE;  // the DeviceFrameImporter's (gpuWait), borrowed
  std::uint64_t waitValue_ = 0;
  UpcomingFrame upcoming_{};  // DeviceFrameImporter::upcoming(): the frame it waits for
  Frame frame_{};
  std::array<VkDeviceSize, kMaxPlanes> offsets_{};
  SharedFrame shared_;
};

/// Turns SharedFrames of a host ring into FrameBuffers: in place where the driver takes the ring's
/// pages, else one counted copy. Thread-bound (the render thread).
class HostFrameImporter {
 public:
  /// `extensionEnabled`: the application enabled kHostImportExtension on `device` (false: every
  /// frame takes the copy path, said once).
  HostFrameImporter(VkPhysicalDevice physicalDevice, VkDevice device, bool extensionEnabled,
                    ImportOptions options = {})
      : physical_(physicalDevice), device_(device), options_(options) {
    vkGetPhysicalDeviceMemoryProperties(physical_, &memoryProps_);
    if (options_.forceCopy) {
      refuse("ImportOptions::forceCopy asked for the copy path");
    } else if (!extensionEnabled) {
      refuse(extensionNotEnabled(kHostImportExtension, hostImportSupported(physical_)));
    } else {
      VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{};
      host.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
      VkPhysicalDeviceProperties2 props{};
      props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
      props.pNext = &host;
      vkGetPhysicalDeviceProperties2(physical_, &props);
      alignment_ = host.minImportedHostPointerAlignment;
      hostPointerProps_ = reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(
          vkGetDeviceProcAddr(device_, "vkGetMemoryHostPointerPropertiesEXT"));
      if (alignment_ == 0 || alignment_ > kRingPage || (kRingPage % alignment_) != 0)
        refuse("the driver's minImportedHostPointerAlignment is " + std::to_string(alignment_) +
               " bytes; a ring's slots are aligned to " + std::to_string(kRingPage));
      else if (hostPointerProps_ == nullptr)
        refuse("vkGetDeviceProcAddr(vkGetMemoryHostPointerPropertiesEXT) returned null");
    }
  }
  HostFrameImporter(const HostFrameImporter&) = delete;
  HostFrameImporter& operator=(const HostFrameImporter&) = delete;

  /// Takes the lease; returns the frame as a buffer (in place, or copied once). Throws
  /// kInvalidArgument for a device or compressed frame, kDevice when the copy path's Vulkan calls fail.
  FrameBuffer import(SharedFrame&& shared) {
    const Frame& f = shared.frame();
    if (f.memory == MemoryKind::kDevice)
      throw Error(Errc::kInvalidArgument,
                  "zerohop::vulkan::HostFrameImporter: the frame is in device memory (a device ring); "
                  "this importer takes host rings (a CPU-path pipeline's frame share, or a Publisher over "
                  "SlotLayout::images)");
    if (isCompressed(f.format) || f.planeCount == 0)
      throw Error(Errc::kInvalidArgument, std::string("zerohop::vulkan::HostFrameImporter: '") +
                                              std::string(formatName(f.format)) + "' frames are not images");
    const std::size_t span = imageSpan(f);
    FrameBuffer fb;
    if (refusal_.empty() && tryImport(shared, span, fb)) {
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
  /// Why frames take the copy path (empty while every frame is imported in place).
  const std::string& refusal() const noexcept { return refusal_; }

 private:
  static constexpr VkDeviceSize kRingPage = 4096;  // docs/share-protocol.md: slots are page aligned

  static std::size_t imageSpan(const Frame& f) noexcept {
    const ImageLayout l = layoutOf(f);
    std::size_t end = 0;
    for (std::uint32_t p = 0; p < f.planeCount; ++p) {
      const std::size_t planeEnd = static_cast<std::size_t>(f.data[p] - f.data[0]) +
                                   std::size_t{f.pitch[p]} * (p < l.planeCount ? l.planes[p].rows : f.height);
      if (planeEnd > end) end = planeEnd;
    }
    return end;
  }
  static ImageLayout layoutOf(const Frame& f) noexcept {
    try {
      return computeLayout(f.format, f.width, f.height);
    } catch (...) {
      return ImageLayout{};
    }
  }

  static void setOffsets(const Frame& f, FrameBuffer& fb) noexcept {
    for (std::uint32_t p = 0; p < f.planeCount && p < kMaxPlanes; ++p)
      fb.offsets_[p] = static_cast<VkDeviceSize>(f.data[p] - f.data[0]);
  }

  void refuse(std::string why) {
    if (!refusal_.empty()) return;
    refusal_ = std::move(why);
    log::warn("zerohop::vulkan: frames are copied, not imported in place (", refusal_,
              "); each frame costs one copy, counted in copiedBytes");
  }

  std::uint32_t pickType(std::uint32_t bits, VkMemoryPropertyFlags want) const noexcept {
    for (std::uint32_t i = 0; i < memoryProps_.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (memoryProps_.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
  }

  bool tryImport(SharedFrame& shared, std::size_t span, FrameBuffer& fb) {
    const Frame& f = shared.frame();
    auto* base = const_cast<std::uint8_t*>(f.data[0]);
    if (reinterpret_cast<std::uintptr_t>(base) % alignment_ != 0) {
      refuse("the slot's address is not aligned to minImportedHostPointerAlignment (" +
             std::to_string(alignment_) + ")");
      return false;
    }
    const std::size_t bytes = std::max(span, f.capacity);
    const VkDeviceSize size = (bytes + kRingPage - 1) / kRingPage * kRingPage;  // inside the slot's stride
    VkMemoryHostPointerPropertiesEXT hp{};
    hp.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT;
    VkResult r =
        hostPointerProps_(device_, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, base, &hp);
    if (r != VK_SUCCESS) {
      refuse(std::string("vkGetMemoryHostPointerPropertiesEXT: ") + resultName(r));
      return false;
    }
    VkExternalMemoryBufferCreateInfo ext{};
    ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    VkBuffer buffer = VK_NULL_HANDLE;
    if (!createBuffer(size, &ext, &buffer)) return false;
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device_, buffer, &req);
    const std::uint32_t type = pickType(hp.memoryTypeBits & req.memoryTypeBits, 0);
    if (type == UINT32_MAX || req.size > size) {
      vkDestroyBuffer(device_, buffer, nullptr);
      refuse(type == UINT32_MAX ? "no memory type accepts the ring's host pointer (memoryTypeBits " +
                                      std::to_string(hp.memoryTypeBits) + ")"
                                : "the buffer needs more memory than the slot holds");
      return false;
    }
    VkImportMemoryHostPointerInfoEXT import{};
    import.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT;
    import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    import.pHostPointer = base;
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.pNext = &import;
    alloc.allocationSize = size;
    alloc.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    r = vkAllocateMemory(device_, &alloc, nullptr, &memory);
    if (r == VK_SUCCESS) r = vkBindBufferMemory(device_, buffer, memory, 0);
    if (r != VK_SUCCESS) {
      if (memory != VK_NULL_HANDLE) vkFreeMemory(device_, memory, nullptr);
      vkDestroyBuffer(device_, buffer, nullptr);
      refuse(std::string("vkAllocateMemory (import of the ring's host pointer): ") + resultName(r));
      return false;
    }
    fb.device_ = device_;
    fb.buffer_ = buffer;
    fb.memory_ = memory;
    fb.size_ = size;
    fb.imported_ = true;
    fb.frame_ = f;
    setOffsets(f, fb);
    fb.shared_ = std::move(shared);
    return true;
  }

  bool createBuffer(VkDeviceSize size, const void* next, VkBuffer* out) {
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.pNext = next;
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    const VkResult r = vkCreateBuffer(device_, &info, nullptr, out);
    if (r == VK_SUCCESS) return true;
    if (next == nullptr) throw Error(Errc::kDevice, std::string("vkCreateBuffer: ") + resultName(r));
    refuse(std::string("vkCreateBuffer (external host memory): ") + resultName(r));
    return false;
  }

  void copy(SharedFrame&& shared, std::size_t span, FrameBuffer& fb) {
    const Frame& f = shared.frame();
    const VkDeviceSize size = (span + 3) / 4 * 4;
    VkBuffer buffer = VK_NULL_HANDLE;
    createBuffer(size, nullptr, &buffer);
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device_, buffer, &req);
    const std::uint32_t type = pickType(
        req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkResult r = type == UINT32_MAX ? VK_ERROR_FEATURE_NOT_PRESENT
                                    : vkAllocateMemory(device_, &alloc, nullptr, &memory);
    void* mapped = nullptr;
    if (r == VK_SUCCESS) r = vkBindBufferMemory(device_, buffer, memory, 0);
    if (r == VK_SUCCESS) r = vkMapMemory(device_, memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    if (r != VK_SUCCESS) {
      if (memory != VK_NULL_HANDLE) vkFreeMemory(device_, memory, nullptr);
      vkDestroyBuffer(device_, buffer, nullptr);
      throw Error(Errc::kDevice, std::string("zerohop::vulkan copy path: a host-visible buffer of ") +
                                     std::to_string(size) +
                                     " bytes (vkAllocateMemory/vkMapMemory): " + resultName(r));
    }
    std::memcpy(mapped, f.data[0], span);
    vkUnmapMemory(device_, memory);
    fb.device_ = device_;
    fb.buffer_ = buffer;
    fb.memory_ = memory;
    fb.size_ = size;
    fb.imported_ = false;
    fb.copyIntact_ = shared.valid();  // the copy is what the slot held, unless it was overwritten meanwhile
    fb.frame_ = f;
    fb.frame_.data = {};  // the ring's pointers are not ours to read once the lease is back
    setOffsets(f, fb);
    shared.release();  // the copy is ours: the slot goes back to the publisher now
  }

  VkPhysicalDevice physical_;
  VkDevice device_;
  ImportOptions options_;
  VkPhysicalDeviceMemoryProperties memoryProps_{};
  VkDeviceSize alignment_ = 0;
  PFN_vkGetMemoryHostPointerPropertiesEXT hostPointerProps_ = nullptr;
  std::string refusal_;
  ImportStats stats_{};
};

}  // namespace zerohop::vulkan

// Device rings (CUDA VMM fds): DeviceFrameImporter.
#include "zerohop/vulkan_device.hpp"  // IWYU pragma: export
