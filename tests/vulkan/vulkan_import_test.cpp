// zerohop/vulkan.hpp against a real Vulkan driver (lavapipe here): a host ring's frame imported in place
// is the slot (the GPU copies the buffer out and gets the published bytes) and its lease is held until
// the FrameBuffer is released; a refused import (forced, or the extension not enabled) copies once,
// counts the bytes, gives the lease back at once and says so once. The device-ring importer's refusals
// (no fd, no extension, a host frame) run here with the host-memory fake device transport.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "beside_program.hpp"
#include "fake_device_transport.hpp"
#include "share_test_support.hpp"
#include "zerohop/log.hpp"
#include "zerohop/vulkan.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

// A Vulkan device (one that offers VK_EXT_external_memory_host where any does), torn down in reverse.
class VulkanDevice {
 public:
  VulkanDevice() {
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    if (vkCreateInstance(&ici, nullptr, &instance_) != VK_SUCCESS) {
      why_ = "vkCreateInstance failed: no Vulkan driver (Debian: mesa-vulkan-drivers gives lavapipe)";
      return;
    }
    std::uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance_, &n, nullptr);
    std::vector<VkPhysicalDevice> devices(n);
    vkEnumeratePhysicalDevices(instance_, &n, devices.data());
    if (devices.empty()) {
      why_ = "no Vulkan device (Debian: mesa-vulkan-drivers gives lavapipe)";
      return;
    }
    physical_ = devices[0];
    for (auto d : devices)
      if (vulkan::hostImportSupported(d)) {
        physical_ = d;
        break;
      }
    hostImport_ = vulkan::hostImportSupported(physical_);
    std::uint32_t qn = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> families(qn);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &qn, families.data());
    for (std::uint32_t i = 0; i < qn; ++i)
      if (families[i].queueFlags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT)) {
        family_ = i;
        break;
      }
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = family_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    deviceImport_ = vulkan::deviceImportSupported(physical_);
    std::vector<const char*> extensions;
    if (hostImport_) extensions.push_back(vulkan::kHostImportExtension);
    if (deviceImport_)
      extensions.insert(extensions.end(), vulkan::kDeviceImportExtensions.begin(), vulkan::kDeviceImportExtensions.end());
    dci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    dci.ppEnabledExtensionNames = extensions.data();
    if (vkCreateDevice(physical_, &dci, nullptr, &device_) != VK_SUCCESS) {
      why_ = "vkCreateDevice failed";
      return;
    }
    vkGetDeviceQueue(device_, family_, 0, &queue_);
  }
  ~VulkanDevice() {
    if (device_) vkDestroyDevice(device_, nullptr);
    if (instance_) vkDestroyInstance(instance_, nullptr);
  }
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  const std::string& unusable() const { return why_; }
  bool hostImport() const { return hostImport_; }
  VkPhysicalDevice physical() const { return physical_; }
  /// VK_KHR_external_memory_fd is offered and enabled on device().
  bool deviceImport() const { return deviceImport_; }
  VkDevice device() const { return device_; }

  // The GPU copies `bytes` of `src` into a host-visible buffer; returns what it copied.
  std::vector<std::uint8_t> readBack(VkBuffer src, VkDeviceSize bytes) {
    VkBufferCreateInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.size = bytes;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer dst = VK_NULL_HANDLE;
    EXPECT_EQ(vkCreateBuffer(device_, &bi, nullptr, &dst), VK_SUCCESS);
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device_, dst, &req);
    VkPhysicalDeviceMemoryProperties props{};
    vkGetPhysicalDeviceMemoryProperties(physical_, &props);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.allocationSize = req.size;
    for (std::uint32_t i = 0; i < props.memoryTypeCount; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) {
        ai.memoryTypeIndex = i;
        break;
      }
    VkDeviceMemory memory = VK_NULL_HANDLE;
    EXPECT_EQ(vkAllocateMemory(device_, &ai, nullptr, &memory), VK_SUCCESS);
    EXPECT_EQ(vkBindBufferMemory(device_, dst, memory, 0), VK_SUCCESS);

    VkCommandPoolCreateInfo cpi{};
    cpi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    cpi.queueFamilyIndex = family_;
    VkCommandPool pool = VK_NULL_HANDLE;
    EXPECT_EQ(vkCreateCommandPool(device_, &cpi, nullptr, &pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo cba{};
    cba.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cba.commandPool = pool;
    cba.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cba.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    EXPECT_EQ(vkAllocateCommandBuffers(device_, &cba, &cb), VK_SUCCESS);
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    vkBeginCommandBuffer(cb, &begin);
    const VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(cb, src, dst, 1, &region);
    VkBufferMemoryBarrier toHost{};
    toHost.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
    toHost.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    toHost.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    toHost.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    toHost.buffer = dst;
    toHost.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1,
                         &toHost, 0, nullptr);
    vkEndCommandBuffer(cb);
    VkFenceCreateInfo fi{};
    fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkFence fence = VK_NULL_HANDLE;
    vkCreateFence(device_, &fi, nullptr, &fence);
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    EXPECT_EQ(vkQueueSubmit(queue_, 1, &si, fence), VK_SUCCESS);
    EXPECT_EQ(vkWaitForFences(device_, 1, &fence, VK_TRUE, 30'000'000'000ull),
              VK_SUCCESS);  // generous: 2 busy cores
    std::vector<std::uint8_t> out(bytes);
    void* mapped = nullptr;
    if (vkMapMemory(device_, memory, 0, VK_WHOLE_SIZE, 0, &mapped) == VK_SUCCESS) {
      std::memcpy(out.data(), mapped, bytes);
      vkUnmapMemory(device_, memory);
    }
    vkDestroyFence(device_, fence, nullptr);
    vkDestroyCommandPool(device_, pool, nullptr);
    vkDestroyBuffer(device_, dst, nullptr);
    vkFreeMemory(device_, memory, nullptr);
    return out;
  }

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t family_ = 0;
  bool hostImport_ = false;
  bool deviceImport_ = false;
  std::string why_;
};

// Log lines the importer writes, collected for the test (the default sink restored after).
class LogCapture {
 public:
  LogCapture() {
    log::setSink([this](log::Level, std::string_view m) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.emplace_back(m);
    });
  }
  ~LogCapture() { log::setSink({}); }
  int count(const std::string& needle) {
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (const auto& l : lines_) n += l.find(needle) != std::string::npos;
    return n;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

// An I420 ring whose rows are longer than the image (pitch 384 for 320 pixels), frames filled with a
// pattern that differs per frame.
class VulkanImport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!vk_.unusable().empty()) GTEST_SKIP() << vk_.unusable();
    layout_ = computeLayout(PixelFormat::kI420, 320, 180, 128);
    static int instance = 0;
    pub_ = std::make_unique<Publisher>("vk-" + std::to_string(getpid()) + "-" + std::to_string(++instance),
                                       SlotLayout::images(layout_, 4));
    sub_ = std::make_unique<Subscriber>(pub_->name());
  }

  // Publishes frame `n` and returns the reader's lease on it, with the bytes it holds.
  SharedFrame publishAndRead(std::uint32_t n, std::vector<std::uint8_t>& bytes) {
    bytes.assign(layout_.totalBytes, 0);
    for (std::size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<std::uint8_t>(i * 7 + (i >> 8) + n * 13);
    Frame f{};
    bindLayout(f, layout_, bytes.data(), MemoryKind::kHost);
    f.format = PixelFormat::kI420;
    f.width = 320;
    f.height = 180;
    f.sequence = n;
    pub_->publish(f);
    auto shared = sub_->next(5s);
    EXPECT_TRUE(shared.has_value()) << "no frame within 5 s";
    return shared ? std::move(*shared) : SharedFrame{};
  }

  // Waits (bounded) until the publisher sees `n` leased slots.
  bool leasedSlotsBecome(std::uint32_t n) {
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < until) {
      if (pub_->stats().leasedSlots == n) return true;
      std::this_thread::sleep_for(1ms);
    }
    return pub_->stats().leasedSlots == n;
  }

  // The image's bytes (each row's meaningful bytes: publish() copies no row padding) agree.
  bool sameImage(const std::vector<std::uint8_t>& gpu, const std::vector<std::uint8_t>& frame) const {
    for (std::uint32_t p = 0; p < layout_.planeCount; ++p)
      for (std::uint32_t r = 0; r < layout_.planes[p].rows; ++r) {
        const std::size_t at = layout_.planes[p].offset + std::size_t{r} * layout_.planes[p].pitch;
        if (at + layout_.planes[p].widthBytes > gpu.size() ||
            std::memcmp(gpu.data() + at, frame.data() + at, layout_.planes[p].widthBytes) != 0) {
          ADD_FAILURE() << "plane " << p << " row " << r << " differs";
          return false;
        }
      }
    return true;
  }

  VulkanDevice vk_;
  ImageLayout layout_{};
  std::unique_ptr<Publisher> pub_;
  std::unique_ptr<Subscriber> sub_;
};

TEST_F(VulkanImport, InPlaceBufferIsTheSlotAndHoldsTheLeaseUntilReleased) {
  if (!vk_.hostImport()) GTEST_SKIP() << "the Vulkan device offers no VK_EXT_external_memory_host";
  vulkan::HostFrameImporter importer(vk_.physical(), vk_.device(), true);
  std::vector<std::uint8_t> bytes;
  SharedFrame shared = publishAndRead(1, bytes);
  ASSERT_TRUE(shared);
  const std::uint8_t* slot = shared->data[0];
  vulkan::FrameBuffer fb = importer.import(std::move(shared));
  ASSERT_TRUE(fb);
  EXPECT_TRUE(fb.imported()) << importer.refusal();
  EXPECT_EQ(importer.refusal(), "");
  EXPECT_EQ(importer.stats().copiedBytes, 0u);
  EXPECT_EQ(importer.stats().imported, 1u);
  EXPECT_EQ(fb.frame().data[0], slot) << "the frame's pointers are the ring's";
  EXPECT_EQ(fb.size() % 4096, 0u);
  EXPECT_GE(fb.size(), layout_.totalBytes);
  for (std::uint32_t p = 0; p < 3; ++p) {
    EXPECT_EQ(fb.planeOffset(p), layout_.planes[p].offset) << "plane " << p;
    EXPECT_EQ(fb.pitch(p), layout_.planes[p].pitch) << "plane " << p;
  }
  EXPECT_TRUE(leasedSlotsBecome(1)) << "the FrameBuffer does not hold the frame's lease";

  const auto gpu = vk_.readBack(fb.buffer(), layout_.totalBytes);
  EXPECT_TRUE(sameImage(gpu, bytes)) << "the GPU did not read the published frame";
  EXPECT_TRUE(fb.valid());

  fb.release();
  EXPECT_TRUE(leasedSlotsBecome(0)) << "release() did not give the lease back";
  EXPECT_FALSE(fb);
}

TEST_F(VulkanImport, RefusedImportCopiesOnceCountsTheBytesAndSaysSoOnce) {
  LogCapture logs;
  vulkan::ImportOptions options;
  options.forceCopy = true;
  vulkan::HostFrameImporter importer(vk_.physical(), vk_.device(), vk_.hostImport(), options);
  EXPECT_NE(importer.refusal().find("forceCopy"), std::string::npos) << importer.refusal();
  const std::size_t span = layout_.totalBytes;  // I420: V is the last plane, its last row ends the image
  for (std::uint32_t n = 1; n <= 3; ++n) {
    std::vector<std::uint8_t> bytes;
    SharedFrame shared = publishAndRead(n, bytes);
    ASSERT_TRUE(shared);
    vulkan::FrameBuffer fb = importer.import(std::move(shared));
    ASSERT_TRUE(fb);
    EXPECT_FALSE(fb.imported());
    EXPECT_EQ(fb.frame().data[0], nullptr) << "the copy path must not hand out the ring's pointers";
    EXPECT_TRUE(fb.valid());
    EXPECT_TRUE(leasedSlotsBecome(0)) << "the copy path keeps the lease it no longer needs";
    const auto gpu = vk_.readBack(fb.buffer(), span);
    EXPECT_TRUE(sameImage(gpu, bytes)) << "frame " << n << ": the copy is not the frame";
    EXPECT_EQ(importer.stats().copiedBytes, n * span);
    EXPECT_EQ(importer.stats().copied, n);
  }
  EXPECT_EQ(logs.count("copied, not imported"), 1) << "the refusal must be said once, not per frame";
}

TEST_F(VulkanImport, ExtensionNotEnabledTakesTheCopyPathAndSaysWhy) {
  LogCapture logs;
  vulkan::HostFrameImporter importer(vk_.physical(), vk_.device(), false);
  EXPECT_NE(importer.refusal().find("is not enabled on this VkDevice"), std::string::npos)
      << importer.refusal();
  std::vector<std::uint8_t> bytes;
  SharedFrame shared = publishAndRead(1, bytes);
  ASSERT_TRUE(shared);
  vulkan::FrameBuffer fb = importer.import(std::move(shared));
  EXPECT_FALSE(fb.imported());
  EXPECT_EQ(importer.stats().copiedBytes, layout_.totalBytes);
  EXPECT_EQ(logs.count(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME), 1);
}

// DeviceFrameImporter (device rings): its refusals, here without a GPU. A host frame is refused by
// name; without VK_KHR_external_memory_fd it says why; a device ring without a memory fd (here the
// host-memory fake transport's ring read in the publisher's own process, as a legacy-IPC ring would
// be) takes the copy path through host memory, counted and said once, and the copy is the frame.
TEST_F(VulkanImport, DeviceImporterRefusesAHostFrameNamingTheHostImporter) {
  vulkan::DeviceFrameImporter importer(vk_.physical(), vk_.device(), false);
  std::vector<std::uint8_t> bytes;
  SharedFrame shared = publishAndRead(1, bytes);
  ASSERT_TRUE(shared);
  EXPECT_FALSE(shared.deviceMemory()) << "a host ring has no device memory fd";
  try {
    (void)importer.import(std::move(shared));
    ADD_FAILURE() << "a host frame was accepted by the device importer";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("HostFrameImporter"), std::string::npos) << e.what();
  }
}

TEST_F(VulkanImport, DeviceRingWithoutAMemoryFdIsCopiedThroughTheHostCountedAndSaidOnce) {
  share_test::FakeDeviceTransport fake;
  share_detail::registerDeviceTransport(&fake);
  struct Unregister {
    ~Unregister() { share_detail::registerDeviceTransport(nullptr); }
  } unregister;
  LogCapture logs;
  const ImageLayout layout = share_test::testLayout();
  const std::string name = "vkdev-" + std::to_string(getpid());
  Publisher pub(name, SlotLayout::deviceImages(layout, 4));
  Subscriber sub(name);
  vulkan::DeviceFrameImporter importer(vk_.physical(), vk_.device(), vulkan::deviceImportSupported(vk_.physical()));
  int streamToken = 0;
  for (std::uint32_t n = 1; n <= 3; ++n) {
    WriteSlot ws = pub.acquireWrite();
    ws.frame().sequence = n;
    share_test::fillPattern(ws.frame(), layout);  // the fake's "device" memory is host-mapped
    Frame meta;
    meta.sequence = n;
    pub.commit(std::move(ws), meta, &streamToken);
    auto shared = sub.next(5s);
    ASSERT_TRUE(shared) << "no frame within 5 s";
    EXPECT_FALSE(shared->deviceMemory()) << "an in-process reader has no memory fd";
    std::vector<std::uint8_t> expected(layout.totalBytes);
    std::memcpy(expected.data(), shared->frame().data[0], expected.size());
    vulkan::FrameBuffer fb = importer.import(std::move(*shared));
    ASSERT_TRUE(fb);
    EXPECT_FALSE(fb.imported());
    EXPECT_EQ(fb.frame().data[0], nullptr) << "the copy path must not hand out the ring's pointers";
    EXPECT_EQ(importer.stats().copied, n);
    EXPECT_EQ(importer.stats().imported, 0u);
    const auto gpu = vk_.readBack(fb.buffer(), layout.totalBytes);
    EXPECT_EQ(std::memcmp(gpu.data(), expected.data(), expected.size()), 0) << "frame " << n << ": the copy is not the frame";
  }
  EXPECT_EQ(importer.stats().copiedBytes, 3u * layout.totalBytes) << "NV12: the chroma plane's last row ends the slot's image";
  EXPECT_NE(importer.refusal().find("no memory fd"), std::string::npos) << importer.refusal();
  EXPECT_EQ(logs.count("copied through host memory"), 1) << "the refusal must be said once, not per frame";
}

// A device ring of another process exported as a VMM fd (the fake's memfd stands in for CUDA's): the
// importer hands the reader's fd to vkAllocateMemory (opaque fd). lavapipe takes only fds it exported
// itself, so here the import is refused: the refusal names the call, and the frame comes through the
// copy path, counted, byte for byte. A driver that takes the fd gives the slot's bytes in place.
TEST_F(VulkanImport, DeviceRingFdOfAnotherProcessIsImportedOrRefusedByNameAndTheBytesArrive) {
  if (!vk_.deviceImport())
    GTEST_SKIP() << "the Vulkan device offers no VK_KHR_external_memory_fd";
  share_test::FakeDeviceTransport fake;
  share_detail::registerDeviceTransport(&fake);
  struct Unregister {
    ~Unregister() { share_detail::registerDeviceTransport(nullptr); }
  } unregister;
  char tmpl[] = "/tmp/zerohop-vk-devfd-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() { std::filesystem::remove_all(dir); }
  } removeDir{dir};
  const std::string name = "vkdevfd-" + std::to_string(getpid());
  share_test::Child publisher({zerohop::testing::besideProgram(ZEROHOP_SHARE_PEER), "--fake-device",
                               "publish-device-vmm", name, dir, "4"});
  const auto ready = publisher.readLine(30s);
  ASSERT_TRUE(ready);
  ASSERT_EQ(*ready, "ready");
  SubscribeOptions so;
  so.directory = dir;
  Subscriber sub(name, so);
  ASSERT_EQ(sub.info().transport, "cuda-vmm-fd");
  LogCapture logs;
  {
    vulkan::DeviceFrameImporter importer(vk_.physical(), vk_.device(), true);
    for (int n = 0; n < 3; ++n) {
      auto shared = sub.next(10s);
      ASSERT_TRUE(shared) << "no frame within 10 s";
      ASSERT_TRUE(shared->deviceMemory()) << "a VMM-fd ring of another process gives its fd";
      std::vector<std::uint8_t> expected(shared->frame().capacity);
      shared->copyToHost(expected.data(), expected.size());
      const bool intact = shared->valid();
      vulkan::FrameBuffer fb = importer.import(std::move(*shared));
      ASSERT_TRUE(fb);
      if (!fb.imported()) {
        EXPECT_NE(importer.refusal().find("vkAllocateMemory (import of the ring's CUDA VMM fd"), std::string::npos)
            << importer.refusal();
        EXPECT_FALSE(fb.frame().data[0]) << "the copy path must not hand out the ring's pointers";
      }
      if (intact && fb.valid()) {
        const ImageLayout layout = share_test::testLayout();
        const auto gpu = vk_.readBack(fb.buffer(), layout.totalBytes);
        EXPECT_EQ(std::memcmp(gpu.data(), expected.data(), layout.totalBytes), 0)
            << "frame " << n << (fb.imported() ? " (imported)" : " (copied)") << ": the buffer is not the frame";
      }
    }
    EXPECT_EQ(importer.stats().frames, 3u);
    EXPECT_EQ(importer.stats().imported + importer.stats().copied, 3u);
    if (importer.stats().copied > 0) {
      EXPECT_GT(importer.stats().copiedBytes, 0u);
      EXPECT_EQ(logs.count("copied through host memory"), 1) << "the refusal must be said once";
    }
    // The next frame before it exists: nothing to bind without an in-place import first; after one, a
    // device that cannot export a timeline semaphore (lavapipe) gives nothing and says why, once.
    const std::optional<vulkan::FrameBuffer> next = importer.upcoming(sub);
    if (importer.stats().imported == 0) {
      EXPECT_FALSE(next);
      EXPECT_TRUE(importer.upcomingRefusal().empty()) << importer.upcomingRefusal();
    } else if (!next) {
      EXPECT_FALSE(importer.upcomingRefusal().empty());
      EXPECT_FALSE(importer.upcoming(sub));
      EXPECT_EQ(logs.count("cannot be submitted before it exists"), 1) << "said once";
    }
  }
}

TEST_F(VulkanImport, DeviceImporterWithoutTheFdExtensionSaysWhy) {
  vulkan::DeviceFrameImporter importer(vk_.physical(), vk_.device(), false);
  EXPECT_NE(importer.refusal().find(std::string(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) +
                                    " is not enabled on this VkDevice"),
            std::string::npos)
      << importer.refusal();
}

}  // namespace
}  // namespace zerohop
