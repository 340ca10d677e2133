// Draws the frames of a share with Vulkan, reading them from the ring's own memory (zerohop/vulkan.hpp:
// host rings through VK_EXT_external_memory_host, device rings from their CUDA VMM fd through
// VK_KHR_external_memory_fd; one counted copy where the driver refuses), and writes the last frame it
// drew as a PNG:
//   vulkan_reader SHARE_NAME OUT.png [--seconds S] [--copy] [--host-wait] [--spin] [--queue first|compute]
//                 [--twice] [--presubmit] [--raw RAW]
// --presubmit (device rings, with the GPU wait): after the first frame, each frame's dispatch is submitted
// BEFORE the frame exists, on the ring slot the publisher announced, waiting on a timeline semaphore the
// publisher's GPU signals once it wrote that frame (DeviceFrameImporter::upcoming/confirm); a frame the
// publisher wrote elsewhere is imported as usual; a dispatch whose frame does not come in 2 s (the publisher
// stalled) is cancelled and the frames read on; the line presubmit confirmed=N missed=M cancelled=K says how
// many.
// --copy forces the copy path (ImportOptions::forceCopy). Device rings: where the GPU exports timeline
// semaphores the dispatch waits on the producer's write on the GPU (ImportOptions::gpuWait: this
// thread never waits for it); --host-wait makes import() wait on the host instead, to compare; the
// line wait=gpu|host says which ran. --spin polls the dispatch's fence (vkGetFenceStatus) instead of
// sleeping in vkWaitForFences, as a CUDA reader spins on its stream. The dispatch goes to the first
// queue family that computes (graphics too, on most GPUs); --queue compute picks a compute-only family
// where the device has one (the line queue= says which); --twice draws each frame again and prints that
// draw's time (redraw_us_p50: the submission's own cost, the GPU already on this context). --raw also writes
// the drawn frame's planes as the CPU read them from the ring (rows of the image's width, planes one after
// another), so a test can compare the PNG with the frame. Each frame: import, one compute dispatch that
// converts the frame's YUV (I420, NV12, YUYV, UYVY) into an RGBA image this program owns, wait for its fence,
// check the lease was not overrun, release the frame. Last line:
//   frames=N copied_bytes=M import_us_p50=X
// (import_us: host time of the importer's import(), what a render thread spends per frame; on a device
// ring it includes the wait for the frame's ready event). A line before it,
// ring=host|device committed_to_sampled_us_p50=X p99=Y wake_us_p50=W draw_us_p50=D fence=wait|spin, is the
// publisher's commit to the end of the dispatch that read the frame (wake: commit -> next() returned;
// draw: submit -> the fence seen signalled). --raw and the timecode line need a host ring (the CPU reads the
// frame). Vulkan device: the first one, or $ZEROHOP_VK_DEVICE (an index); lavapipe (Mesa) runs it on the CPU.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>
#include <zerohop/clock.hpp>
#include <zerohop/error.hpp>
#include <zerohop/share.hpp>
#include <zerohop/timecode.hpp>
#include <zerohop/vulkan.hpp>

#include "png_writer.hpp"
#include "yuv_to_rgba.spv.h"

using namespace std::chrono_literals;
namespace zv = zerohop::vulkan;

namespace {

void check(VkResult r, const char* call) {
  if (r != VK_SUCCESS)
    throw zerohop::Error(zerohop::Errc::kDevice, std::string(call) + ": " + zv::resultName(r));
}

struct PushConstants {
  std::uint32_t width, height, format, offset0, offset1, offset2, pitch0, pitch1, bt709, fullRange;
};

std::uint32_t shaderFormat(zerohop::PixelFormat f) {
  switch (f) {
    case zerohop::PixelFormat::kI420:
      return 0;
    case zerohop::PixelFormat::kNV12:
      return 1;
    case zerohop::PixelFormat::kYUYV:
      return 2;
    case zerohop::PixelFormat::kUYVY:
      return 3;
    default:
      throw zerohop::Error(
          zerohop::Errc::kUnsupported,
          "vulkan_reader draws I420, NV12, YUYV and UYVY frames, not " + std::string(zerohop::formatName(f)));
  }
}

// The image's planes, each row only its meaningful bytes, one plane after another.
std::vector<std::uint8_t> planeBytes(const zerohop::Frame& f) {
  const zerohop::ImageLayout l = zerohop::computeLayout(f.format, f.width, f.height);
  std::vector<std::uint8_t> out;
  for (std::uint32_t p = 0; p < l.planeCount; ++p)
    for (std::uint32_t y = 0; y < l.planes[p].rows; ++y) {
      const std::uint8_t* row = f.data[p] + std::size_t{y} * f.pitch[p];
      out.insert(out.end(), row, row + l.planes[p].widthBytes);
    }
  return out;
}

// Every Vulkan object this program makes, destroyed in reverse order of creation (what exists).
struct Renderer {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  bool hostImport = false;
  bool deviceImport = false;
  bool gpuWait = false;  // timeline semaphores exported as opaque fds: ImportOptions::gpuWait
  bool spinOnFence = false;       // --spin: poll the dispatch's fence instead of vkWaitForFences
  bool computeQueue = false;      // --queue compute: a compute-only family where there is one
  bool computeOnlyQueue = false;  // the queue chosen has no graphics bit
  std::uint32_t queueFamily = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout pipelineLayout = VK_NULL_HANDLE;
  VkShaderModule shader = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool descriptorPool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  // The image frames are drawn into, its view, and the host buffer it is read back through.
  std::uint32_t width = 0, height = 0;
  VkImage image = VK_NULL_HANDLE;
  VkDeviceMemory imageMemory = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkBuffer readback = VK_NULL_HANDLE;
  VkDeviceMemory readbackMemory = VK_NULL_HANDLE;

  Renderer() = default;
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;
  ~Renderer() {
    if (device != VK_NULL_HANDLE) {
      vkDeviceWaitIdle(device);
      if (readback) vkDestroyBuffer(device, readback, nullptr);
      if (readbackMemory) vkFreeMemory(device, readbackMemory, nullptr);
      if (view) vkDestroyImageView(device, view, nullptr);
      if (image) vkDestroyImage(device, image, nullptr);
      if (imageMemory) vkFreeMemory(device, imageMemory, nullptr);
      if (fence) vkDestroyFence(device, fence, nullptr);
      if (commandPool) vkDestroyCommandPool(device, commandPool, nullptr);
      if (descriptorPool) vkDestroyDescriptorPool(device, descriptorPool, nullptr);
      if (pipeline) vkDestroyPipeline(device, pipeline, nullptr);
      if (shader) vkDestroyShaderModule(device, shader, nullptr);
      if (pipelineLayout) vkDestroyPipelineLayout(device, pipelineLayout, nullptr);
      if (setLayout) vkDestroyDescriptorSetLayout(device, setLayout, nullptr);
      vkDestroyDevice(device, nullptr);
    }
    if (instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
  }

  std::uint32_t memoryType(std::uint32_t bits, VkMemoryPropertyFlags want) const {
    VkPhysicalDeviceMemoryProperties props{};
    vkGetPhysicalDeviceMemoryProperties(physical, &props);
    for (std::uint32_t i = 0; i < props.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return i;
    throw zerohop::Error(zerohop::Errc::kDevice, "no Vulkan memory type with the properties asked for");
  }

  void open() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "zerohop vulkan_reader";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    check(vkCreateInstance(&ici, nullptr, &instance),
          "vkCreateInstance (is a Vulkan driver installed? Debian: mesa-vulkan-drivers)");
    std::uint32_t n = 0;
    check(vkEnumeratePhysicalDevices(instance, &n, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(n);
    check(vkEnumeratePhysicalDevices(instance, &n, devices.data()), "vkEnumeratePhysicalDevices");
    const char* pick = std::getenv("ZEROHOP_VK_DEVICE");
    const std::uint32_t index = pick ? static_cast<std::uint32_t>(std::atoi(pick)) : 0;
    if (index >= n)
      throw zerohop::Error(zerohop::Errc::kNotFound, "Vulkan device " + std::to_string(index) +
                                                         " not found (" + std::to_string(n) + " present)");
    physical = devices[index];
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(physical, &props);

    std::uint32_t qn = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> families(qn);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &qn, families.data());
    // The first family that computes (graphics too, on most GPUs); --queue compute: a compute-only
    // family where there is one (an async compute queue, which carries no graphics state).
    queueFamily = qn;
    for (int pass = computeQueue ? 0 : 1; pass < 2 && queueFamily == qn; ++pass)
      for (std::uint32_t i = 0; i < qn; ++i)
        if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            (pass == 1 || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))) {
          queueFamily = i;
          break;
        }
    computeOnlyQueue = queueFamily < qn && !(families[queueFamily].queueFlags & VK_QUEUE_GRAPHICS_BIT);
    if (queueFamily == qn)
      throw zerohop::Error(zerohop::Errc::kUnsupported, "the Vulkan device has no compute queue");

    hostImport = zv::hostImportSupported(physical);
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = queueFamily;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    deviceImport = zv::deviceImportSupported(physical);
    // The GPU wait (ImportOptions::gpuWait): a timeline semaphore exported to CUDA, waited on by the
    // queue, so this thread never waits for the producer.
    gpuWait = deviceImport && zv::deviceSemaphoreSupported(physical);
    std::vector<const char*> extensions;
    if (hostImport) extensions.push_back(zv::kHostImportExtension);
    if (deviceImport) extensions.insert(extensions.end(), zv::kDeviceImportExtensions.begin(), zv::kDeviceImportExtensions.end());
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    if (gpuWait) {
      extensions.insert(extensions.end(), zv::kDeviceSemaphoreExtensions.begin(),
                        zv::kDeviceSemaphoreExtensions.end());
      timeline.timelineSemaphore = VK_TRUE;
      dci.pNext = &timeline;
    }
    dci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    dci.ppEnabledExtensionNames = extensions.data();
    check(vkCreateDevice(physical, &dci, nullptr, &device), "vkCreateDevice");
    vkGetDeviceQueue(device, queueFamily, 0, &queue);
    std::fprintf(stderr, "vulkan: %s, %s %s, %s %s\n", props.deviceName, zv::kHostImportExtension,
                 hostImport ? "enabled" : "not offered", VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                 deviceImport ? "enabled" : "not offered");

    VkDescriptorSetLayoutBinding bindings[2]{};
    bindings[0] = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    bindings[1] = {1, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    sl.bindingCount = 2;
    sl.pBindings = bindings;
    check(vkCreateDescriptorSetLayout(device, &sl, nullptr, &setLayout), "vkCreateDescriptorSetLayout");
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &setLayout;
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &range;
    check(vkCreatePipelineLayout(device, &pl, nullptr, &pipelineLayout), "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    sm.codeSize = sizeof(kYuvToRgbaSpirv);
    sm.pCode = kYuvToRgbaSpirv;
    check(vkCreateShaderModule(device, &sm, nullptr, &shader), "vkCreateShaderModule");
    VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cp.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cp.stage.module = shader;
    cp.stage.pName = "main";
    cp.layout = pipelineLayout;
    check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cp, nullptr, &pipeline),
          "vkCreateComputePipelines");

    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1},
                                     {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1}};
    VkDescriptorPoolCreateInfo dp{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dp.maxSets = 1;
    dp.poolSizeCount = 2;
    dp.pPoolSizes = sizes;
    check(vkCreateDescriptorPool(device, &dp, nullptr, &descriptorPool), "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo da{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    da.descriptorPool = descriptorPool;
    da.descriptorSetCount = 1;
    da.pSetLayouts = &setLayout;
    check(vkAllocateDescriptorSets(device, &da, &set), "vkAllocateDescriptorSets");

    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = queueFamily;
    check(vkCreateCommandPool(device, &cpi, nullptr, &commandPool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cba{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cba.commandPool = commandPool;
    cba.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cba.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(device, &cba, &commands), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(device, &fi, nullptr, &fence), "vkCreateFence");
  }

  // The RGBA image frames are drawn into (device local) and the host buffer it is read back through.
  void makeTarget(std::uint32_t w, std::uint32_t h) {
    width = w;
    height = h;
    VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ii.imageType = VK_IMAGE_TYPE_2D;
    ii.format = VK_FORMAT_R8G8B8A8_UNORM;
    ii.extent = {w, h, 1};
    ii.mipLevels = 1;
    ii.arrayLayers = 1;
    ii.samples = VK_SAMPLE_COUNT_1_BIT;
    ii.tiling = VK_IMAGE_TILING_OPTIMAL;
    ii.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    check(vkCreateImage(device, &ii, nullptr, &image), "vkCreateImage");
    VkMemoryRequirements req{};
    vkGetImageMemoryRequirements(device, image, &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    check(vkAllocateMemory(device, &ai, nullptr, &imageMemory), "vkAllocateMemory (image)");
    check(vkBindImageMemory(device, image, imageMemory, 0), "vkBindImageMemory");
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = image;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = ii.format;
    vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    check(vkCreateImageView(device, &vi, nullptr, &view), "vkCreateImageView");

    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = VkDeviceSize{w} * h * 4;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    check(vkCreateBuffer(device, &bi, nullptr, &readback), "vkCreateBuffer (readback)");
    vkGetBufferMemoryRequirements(device, readback, &req);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = memoryType(
        req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    check(vkAllocateMemory(device, &ai, nullptr, &readbackMemory), "vkAllocateMemory (readback)");
    check(vkBindBufferMemory(device, readback, readbackMemory, 0), "vkBindBufferMemory (readback)");
  }

  // `wait`: a FrameBuffer's waitSemaphore (the GPU wait), waited on at `value` before the dispatch.
  void submitAndWait(VkSemaphore wait = VK_NULL_HANDLE, std::uint64_t value = 0) {
    submit(wait, value);
    if (!finish(10s)) throw zerohop::Error(zerohop::Errc::kTimeout, "the dispatch's fence: 10 s");
  }
  void submit(VkSemaphore wait, std::uint64_t value) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &commands;
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    if (wait != VK_NULL_HANDLE) {
      values.waitSemaphoreValueCount = 1;
      values.pWaitSemaphoreValues = &value;
      si.pNext = &values;
      si.waitSemaphoreCount = 1;
      si.pWaitSemaphores = &wait;
      si.pWaitDstStageMask = &stage;
    }
    check(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
  }
  // Waits up to `limit` for the dispatch's fence; false (the fence still pending) when it did not come.
  bool finish(std::chrono::nanoseconds limit) {
    VkResult r;
    if (spinOnFence) {  // --spin: poll the fence, as a CUDA reader spins on its stream
      const auto giveUp = std::chrono::steady_clock::now() + limit;
      while ((r = vkGetFenceStatus(device, fence)) == VK_NOT_READY &&
             std::chrono::steady_clock::now() < giveUp) {
      }
    } else {
      r = vkWaitForFences(device, 1, &fence, VK_TRUE, static_cast<std::uint64_t>(limit.count()));
    }
    if (r == VK_NOT_READY || r == VK_TIMEOUT) return false;
    check(r, "the dispatch's fence");
    check(vkResetFences(device, 1, &fence), "vkResetFences");
    return true;
  }

  static void imageBarrier(VkCommandBuffer cb, VkImage img, VkImageLayout from, VkImageLayout to,
                           VkAccessFlags src, VkAccessFlags dst, VkPipelineStageFlags srcStage,
                           VkPipelineStageFlags dstStage) {
    VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    b.oldLayout = from;
    b.newLayout = to;
    b.srcAccessMask = src;
    b.dstAccessMask = dst;
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = img;
    b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cb, srcStage, dstStage, 0, 0, nullptr, 0, nullptr, 1, &b);
  }

  // One frame: its buffer bound as binding 0, one dispatch converting it into the image; waits for it.
  void draw(const zv::FrameBuffer& fb) {
    record(fb);
    submitAndWait(fb.waitSemaphore(), fb.waitValue());
  }
  void record(const zv::FrameBuffer& fb) {
    const zerohop::Frame& f = fb.frame();
    VkDescriptorBufferInfo bufferInfo{fb.buffer(), 0, fb.size()};
    VkDescriptorImageInfo imageInfo{VK_NULL_HANDLE, view, VK_IMAGE_LAYOUT_GENERAL};
    VkWriteDescriptorSet writes[2]{};
    writes[0] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[0].dstSet = set;
    writes[0].dstBinding = 0;
    writes[0].descriptorCount = 1;
    writes[0].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[0].pBufferInfo = &bufferInfo;
    writes[1] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[1].dstSet = set;
    writes[1].dstBinding = 1;
    writes[1].descriptorCount = 1;
    writes[1].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    writes[1].pImageInfo = &imageInfo;
    vkUpdateDescriptorSets(device, 2, writes, 0, nullptr);  // the previous draw's fence has signalled

    PushConstants pc{f.width,
                     f.height,
                     shaderFormat(f.format),
                     static_cast<std::uint32_t>(fb.planeOffset(0)),
                     static_cast<std::uint32_t>(fb.planeOffset(1)),
                     static_cast<std::uint32_t>(fb.planeOffset(2)),
                     fb.pitch(0),
                     fb.pitch(1),
                     f.color.matrix == zerohop::ColorMatrix::kBt709 ? 1u : 0u,
                     f.color.range == zerohop::ColorRange::kFull ? 1u : 0u};
    check(vkResetCommandBuffer(commands, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
    // Host writes to the ring (the publisher's) are visible to this submission (vkQueueSubmit's
    // implicit host-write ordering); the image's old contents are discarded.
    imageBarrier(commands, image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0,
                 VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipelineLayout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(commands, pipelineLayout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
    vkCmdDispatch(commands, (f.width + 15) / 16, (f.height + 15) / 16, 1);
    check(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
  }

  // Copies the image into the readback buffer; returns its mapped pixels (RGBA, width * 4 a row).
  const std::uint8_t* readBack() {
    check(vkResetCommandBuffer(commands, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
    imageBarrier(commands, image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                 VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {width, height, 1};
    vkCmdCopyImageToBuffer(commands, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback, 1, &region);
    VkBufferMemoryBarrier toHost{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    toHost.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    toHost.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    toHost.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    toHost.buffer = readback;
    toHost.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr,
                         1, &toHost, 0, nullptr);
    check(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
    submitAndWait();
    void* mapped = nullptr;
    check(vkMapMemory(device, readbackMemory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory (readback)");
    return static_cast<const std::uint8_t*>(mapped);
  }
};

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> positional;
  double seconds = 3.0;
  std::string rawPath;
  zv::ImportOptions options;
  bool hostWait = false;
  bool spin = false, twice = false, presubmit = false;
  std::string queue = "first";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--copy")
      options.forceCopy = true;
    else if (a == "--host-wait")
      hostWait = true;
    else if (a == "--spin")
      spin = true;
    else if (a == "--queue" && i + 1 < argc)
      queue = argv[++i];
    else if (a == "--twice")
      twice = true;
    else if (a == "--presubmit")
      presubmit = true;
    else if (a == "--raw" && i + 1 < argc)
      rawPath = argv[++i];
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else
      positional.push_back(a);
  }
  if (positional.size() != 2 || seconds <= 0 || (queue != "compute" && queue != "first")) {
    std::fprintf(
        stderr,
        "usage: %s SHARE_NAME OUT.png [--seconds S] [--copy] [--host-wait] [--spin] [--queue first|compute] "
        "[--twice] [--presubmit] [--raw RAW]\n",
        argv[0]);
    return 2;
  }
  zerohop::SubscribeOptions so;
  so.waitForPublisher = 5s;
  zerohop::Subscriber sub(positional[0], so);
  Renderer vk;
  vk.computeQueue = queue == "compute";
  vk.open();
  vk.spinOnFence = spin;
  // A host ring's frames come in place through the host-pointer import, a device ring's through its fd.
  const bool onDevice = sub.info().memory == zerohop::MemoryKind::kDevice;
  std::optional<zv::HostFrameImporter> hostImporter;
  std::optional<zv::DeviceFrameImporter> deviceImporter;
  options.gpuWait = vk.gpuWait && !hostWait;
  if (onDevice)
    deviceImporter.emplace(vk.physical, vk.device, vk.deviceImport, options);
  else
    hostImporter.emplace(vk.physical, vk.device, vk.hostImport, options);
  if (onDevice && !rawPath.empty())
    throw zerohop::Error(zerohop::Errc::kInvalidArgument, "--raw reads the frame on the CPU: host shares only");
  std::vector<double> sampledUs;  // the publisher's commit -> the dispatch that read the frame completed

  std::vector<double> importUs, wakeUs, drawUs;  // commit -> next() returned; import(); submit -> fence
  std::vector<double> redrawUs;                  // --twice: the same frame's second draw
  std::uint64_t overrun = 0;
  std::uint64_t cancelled = 0;  // --presubmit: dispatches whose frame did not come in 2 s (cancel())
  std::optional<zerohop::Timecode> drawnTimecode;  // read from the ring by the CPU, to compare with the PNG
  std::uint64_t drawnSeq = 0;
  bool drawnIntact = false;
  std::vector<std::uint8_t> drawnRaw;
  zerohop::ColorDesc drawnColor{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  const auto hardStop = deadline + 5s;  // past the deadline only to end on an intact frame
  while (std::chrono::steady_clock::now() < deadline ||
         (!drawnIntact && std::chrono::steady_clock::now() < hardStop)) {
    // --presubmit: the next frame's dispatch before the frame exists (from the second frame on).
    if (presubmit && onDevice && vk.image != VK_NULL_HANDLE) {
      const std::int64_t u0 = zerohop::monotonicNs();
      std::optional<zv::FrameBuffer> up = deviceImporter->upcoming(sub);
      if (up) {
        const std::int64_t hostNs = zerohop::monotonicNs() - u0;
        vk.record(*up);
        const std::int64_t t1 = zerohop::monotonicNs();
        vk.submit(up->waitSemaphore(), up->waitValue());
        if (!vk.finish(2s)) {  // the frame did not come: release the queue, and read on as before
          deviceImporter->cancel(*up);
          ++cancelled;
          if (!vk.finish(10s))
            throw zerohop::Error(zerohop::Errc::kTimeout, "the cancelled dispatch's fence");
          continue;
        }
        const std::int64_t t2 = zerohop::monotonicNs();
        const std::int64_t c0 = zerohop::monotonicNs();
        const bool confirmed = deviceImporter->confirm(sub, *up);
        if (confirmed) {
          importUs.push_back((hostNs + zerohop::monotonicNs() - c0) / 1e3);
          const std::int64_t committedNs = up->publishNs();
          drawUs.push_back((t2 - std::max(t1, committedNs)) / 1e3);
          sampledUs.push_back((t2 - committedNs) / 1e3);
          drawnIntact = up->valid();
          if (!drawnIntact) ++overrun;
          drawnTimecode = std::nullopt;
          drawnSeq = up->frame().sequence;
          drawnRaw.clear();
          drawnColor = up->frame().color;
          up->release();
          continue;
        }
        up->release();  // drew a stale slot: the frame went elsewhere; import it below
      }
    }
    auto shared = sub.next(2s);
    if (!shared) {
      if (importUs.empty() || std::chrono::steady_clock::now() >= deadline) {
        std::fprintf(stderr, "no frame from '%s' within 2 s\n", positional[0].c_str());
        return 1;
      }
      std::fprintf(stderr, "no frame from '%s' for 2 s (the publisher stalled?): reading on\n",
                   positional[0].c_str());
      continue;
    }
    const std::optional<zerohop::Timecode> tc =
        onDevice ? std::nullopt : zerohop::readTimecode(shared->frame());
    const std::int64_t committedNs = shared->publishNs();
    std::vector<std::uint8_t> raw;  // --raw: the planes as the CPU reads them, checked intact below
    if (!rawPath.empty()) raw = planeBytes(shared->frame());
    const std::int64_t t0 = zerohop::monotonicNs();
    wakeUs.push_back((t0 - committedNs) / 1e3);
    zv::FrameBuffer fb =
        onDevice ? deviceImporter->import(std::move(*shared)) : hostImporter->import(std::move(*shared));
    importUs.push_back((zerohop::monotonicNs() - t0) / 1e3);
    if (vk.image == VK_NULL_HANDLE) vk.makeTarget(fb.frame().width, fb.frame().height);
    if (fb.frame().width != vk.width || fb.frame().height != vk.height)
      throw zerohop::Error(zerohop::Errc::kUnsupported, "the share's frame size changed");
    const std::int64_t t1 = zerohop::monotonicNs();
    vk.draw(fb);  // waits for the dispatch's fence: the GPU is done reading the frame
    const std::int64_t t2 = zerohop::monotonicNs();
    drawUs.push_back((t2 - t1) / 1e3);
    sampledUs.push_back((t2 - committedNs) / 1e3);
    if (twice) {  // the submission's own cost, the GPU already on this context and the frame written
      vk.draw(fb);
      redrawUs.push_back((zerohop::monotonicNs() - t2) / 1e3);
    }
    drawnIntact = fb.valid();
    if (!drawnIntact) ++overrun;
    drawnTimecode = tc;
    drawnSeq = fb.frame().sequence;
    drawnRaw = std::move(raw);
    drawnColor = fb.frame().color;
    fb.release();  // buffer, imported memory, then the lease
  }

  const std::uint8_t* pixels = vk.readBack();
  if (const std::string err = writePngRgb(positional[1], pixels, vk.width, vk.height, vk.width * 4);
      !err.empty())
    throw zerohop::Error(zerohop::Errc::kIo, err);
  if (!rawPath.empty()) {
    std::FILE* f = std::fopen(rawPath.c_str(), "wb");
    const bool ok = f && std::fwrite(drawnRaw.data(), 1, drawnRaw.size(), f) == drawnRaw.size();
    if (!f || std::fclose(f) != 0 || !ok)
      throw zerohop::Error(zerohop::Errc::kIo, "write " + rawPath + ": " + std::strerror(errno));
  }
  std::sort(importUs.begin(), importUs.end());
  const zv::ImportStats& st = onDevice ? deviceImporter->stats() : hostImporter->stats();
  const std::string& refusal = onDevice ? deviceImporter->refusal() : hostImporter->refusal();
  std::printf("path=%s%s%s\n", st.copied ? "copy" : "import", refusal.empty() ? "" : " reason=", refusal.c_str());
  if (onDevice)
    std::printf(
        "wait=%s%s%s\n", deviceImporter->gpuWaiting() ? "gpu" : "host",
        deviceImporter->gpuWaitRefusal().empty() ? "" : " reason=", deviceImporter->gpuWaitRefusal().c_str());
  std::sort(sampledUs.begin(), sampledUs.end());
  std::sort(wakeUs.begin(), wakeUs.end());
  std::sort(drawUs.begin(), drawUs.end());
  // wake: commit -> next() returned, over the frames read that way (a presubmitted frame wakes nobody:
  // "-" where most were).
  char wake[32] = "-";
  if (wakeUs.size() * 2 > sampledUs.size())
    std::snprintf(wake, sizeof wake, "%.1f", wakeUs[wakeUs.size() / 2]);
  std::printf("ring=%s committed_to_sampled_us_p50=%.1f p99=%.1f wake_us_p50=%s draw_us_p50=%.1f fence=%s\n",
              onDevice ? "device" : "host", sampledUs[sampledUs.size() / 2],
              sampledUs[std::min(sampledUs.size() - 1, sampledUs.size() * 99 / 100)], wake,
              drawUs[drawUs.size() / 2], spin ? "spin" : "wait");
  if (presubmit)
    std::printf("presubmit confirmed=%llu missed=%llu cancelled=%llu%s%s\n",
                static_cast<unsigned long long>(onDevice ? deviceImporter->upcomingConfirmed() : 0),
                static_cast<unsigned long long>(onDevice ? deviceImporter->upcomingMissed() : 0),
                static_cast<unsigned long long>(cancelled),
                onDevice && !deviceImporter->upcomingRefusal().empty() ? " reason=" : "",
                onDevice ? deviceImporter->upcomingRefusal().c_str() : "");
  std::printf("queue=%s", vk.computeOnlyQueue ? "compute" : "graphics+compute");
  if (!redrawUs.empty()) {
    std::sort(redrawUs.begin(), redrawUs.end());
    std::printf(" redraw_us_p50=%.1f", redrawUs[redrawUs.size() / 2]);
  }
  std::printf("\n");
  std::printf(
      "drawn seq=%llu intact=%d timecode_seq=%ld timecode_ms=%lld overrun=%llu size=%ux%u format=%s "
      "matrix=%s range=%s\n",
      static_cast<unsigned long long>(drawnSeq), drawnIntact ? 1 : 0,
      drawnTimecode ? static_cast<long>(drawnTimecode->sequence) : -1L,
      drawnTimecode ? static_cast<long long>(drawnTimecode->wallClockMs) : -1LL,
      static_cast<unsigned long long>(overrun), vk.width, vk.height,
      std::string(zerohop::formatName(sub.info().layout.format)).c_str(),
      drawnColor.matrix == zerohop::ColorMatrix::kBt709 ? "bt709" : "bt601",
      drawnColor.range == zerohop::ColorRange::kFull ? "full" : "limited");
  std::printf("frames=%llu copied_bytes=%llu import_us_p50=%.1f\n",
              static_cast<unsigned long long>(st.frames), static_cast<unsigned long long>(st.copiedBytes),
              importUs[importUs.size() / 2]);
  return drawnIntact ? 0 : 3;
} catch (const zerohop::Error& e) {
  std::fprintf(stderr, "%s: %s\n", zerohop::errcName(e.code()), e.what());
  return 1;
}
