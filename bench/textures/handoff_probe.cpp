// zerohop_handoff_probe: where a Vulkan renderer's hand-off from a CUDA producer can go (issue 39's
// "committed -> sampled at most 1.1x the CUDA reader's"), measured without the share: one process, the
// producer in one CUDA context, the readers in their own (a second CUDA context; a Vulkan device), as
// separate processes would be. Each frame the producer writes a 1280x720 NV12 frame (1.38 MB) into memory
// Vulkan allocated and exported (imported into both CUDA contexts), records an event and "commits" (the
// clock starts); a reader thread, spinning on the commit, reads the frame into memory of its own and the
// clock stops when the reader's host sees that done. Readers, each for the same frames in turn:
//   cuda          the reader's CUDA stream waits for the producer's event, copies; its event polled
//   vk-host       the host polls the producer's event, then submits the Vulkan copy; its fence polled
//   vk-gpu        the reader's CUDA stream waits for the producer's event and signals a Vulkan timeline
//                 semaphore, the copy's submission waits on it (ImportOptions::gpuWait today)
//   vk-presubmit  the copy was submitted before the frame, waiting on the semaphore, and the PRODUCER
//                 signals it after its work: no CPU between the producer's work and the renderer's
// Prints p50/p99 of commit -> read done per reader and its ratio to cuda's.
// Not a zerohop program: it links only libcuda and the Vulkan loader. Run on the GPU machine.
//
// usage: zerohop_handoff_probe [--frames N] [--rounds R] [--fps F]
#include <cuda.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

void cuCheck(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    std::fprintf(stderr, "%s failed: %s\n", what, s ? s : "?");
    std::exit(1);
  }
}
void vkCheck(VkResult r, const char* what) {
  if (r != VK_SUCCESS) {
    std::fprintf(stderr, "%s failed: VkResult %d\n", what, static_cast<int>(r));
    std::exit(1);
  }
}
std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

constexpr VkDeviceSize kFrameBytes = 1280 * 720 * 3 / 2;

struct Vk {
  VkInstance instance{};
  VkPhysicalDevice physical{};
  VkDevice device{};
  VkQueue queue{};
  std::uint32_t family = 0;
  VkCommandPool pool{};
  VkCommandBuffer cmd{};
  VkFence fence{};
  VkSemaphore timeline{};
  VkDeviceMemory shared{}, own{};
  VkBuffer sharedBuf{}, ownBuf{};
  VkDeviceSize sharedSize = 0;
  int memoryFd = -1, semaphoreFd = -1;
};

std::uint32_t memoryType(VkPhysicalDevice pd, std::uint32_t bits, VkMemoryPropertyFlags want) {
  VkPhysicalDeviceMemoryProperties p;
  vkGetPhysicalDeviceMemoryProperties(pd, &p);
  for (std::uint32_t i = 0; i < p.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (p.memoryTypes[i].propertyFlags & want) == want) return i;
  std::fprintf(stderr, "no memory type\n");
  std::exit(1);
}

Vk makeVulkan(const CUuuid& uuid) {
  Vk v;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  vkCheck(vkCreateInstance(&ici, nullptr, &v.instance), "vkCreateInstance");
  std::uint32_t n = 0;
  vkEnumeratePhysicalDevices(v.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  vkEnumeratePhysicalDevices(v.instance, &n, pds.data());
  for (VkPhysicalDevice pd : pds) {
    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &id;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    if (std::memcmp(id.deviceUUID, uuid.bytes, VK_UUID_SIZE) == 0) v.physical = pd;
  }
  if (!v.physical) {
    std::fprintf(stderr, "no Vulkan device with the CUDA device's UUID\n");
    std::exit(1);
  }
  std::uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(v.physical, &qn, nullptr);
  std::vector<VkQueueFamilyProperties> qf(qn);
  vkGetPhysicalDeviceQueueFamilyProperties(v.physical, &qn, qf.data());
  for (std::uint32_t i = 0; i < qn; ++i)
    if (qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) {
      v.family = i;
      break;
    }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = v.family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  const char* exts[] = {VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                        VK_KHR_EXTERNAL_SEMAPHORE_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &f12;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 4;
  dci.ppEnabledExtensionNames = exts;
  vkCheck(vkCreateDevice(v.physical, &dci, nullptr, &v.device), "vkCreateDevice");
  vkGetDeviceQueue(v.device, v.family, 0, &v.queue);

  // The frame's memory: Vulkan's, exported (opaque fd), imported into both CUDA contexts.
  VkExternalMemoryBufferCreateInfo ebci{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ebci.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.pNext = &ebci;
  bci.size = kFrameBytes;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  vkCheck(vkCreateBuffer(v.device, &bci, nullptr, &v.sharedBuf), "vkCreateBuffer shared");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(v.device, v.sharedBuf, &req);
  VkExportMemoryAllocateInfo emai{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
  emai.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dedicated.buffer = v.sharedBuf;
  emai.pNext = &dedicated;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.pNext = &emai;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = memoryType(v.physical, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  vkCheck(vkAllocateMemory(v.device, &mai, nullptr, &v.shared), "vkAllocateMemory shared");
  vkCheck(vkBindBufferMemory(v.device, v.sharedBuf, v.shared, 0), "vkBindBufferMemory shared");
  v.sharedSize = req.size;
  auto getMemoryFd = reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(v.device, "vkGetMemoryFdKHR"));
  VkMemoryGetFdInfoKHR mgfi{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
  mgfi.memory = v.shared;
  mgfi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  vkCheck(getMemoryFd(v.device, &mgfi, &v.memoryFd), "vkGetMemoryFdKHR");

  // The renderer's own copy of the frame.
  VkBufferCreateInfo obci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  obci.size = kFrameBytes;
  obci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  vkCheck(vkCreateBuffer(v.device, &obci, nullptr, &v.ownBuf), "vkCreateBuffer own");
  vkGetBufferMemoryRequirements(v.device, v.ownBuf, &req);
  VkMemoryAllocateInfo omai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  omai.allocationSize = req.size;
  omai.memoryTypeIndex = memoryType(v.physical, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  vkCheck(vkAllocateMemory(v.device, &omai, nullptr, &v.own), "vkAllocateMemory own");
  vkCheck(vkBindBufferMemory(v.device, v.ownBuf, v.own, 0), "vkBindBufferMemory own");

  // A timeline semaphore, exported for CUDA.
  VkSemaphoreTypeCreateInfo stci{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  stci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkExportSemaphoreCreateInfo esci{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
  esci.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  esci.pNext = &stci;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sci.pNext = &esci;
  vkCheck(vkCreateSemaphore(v.device, &sci, nullptr, &v.timeline), "vkCreateSemaphore");
  auto getSemFd = reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(vkGetDeviceProcAddr(v.device, "vkGetSemaphoreFdKHR"));
  VkSemaphoreGetFdInfoKHR sgfi{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
  sgfi.semaphore = v.timeline;
  sgfi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  vkCheck(getSemFd(v.device, &sgfi, &v.semaphoreFd), "vkGetSemaphoreFdKHR");

  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.queueFamilyIndex = v.family;
  vkCheck(vkCreateCommandPool(v.device, &cpci, nullptr, &v.pool), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = v.pool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  vkCheck(vkAllocateCommandBuffers(v.device, &cbai, &v.cmd), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(v.cmd, &begin);
  VkBufferCopy region{0, 0, kFrameBytes};
  vkCmdCopyBuffer(v.cmd, v.sharedBuf, v.ownBuf, 1, &region);
  vkCheck(vkEndCommandBuffer(v.cmd), "vkEndCommandBuffer");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  vkCheck(vkCreateFence(v.device, &fci, nullptr, &v.fence), "vkCreateFence");
  return v;
}

// The copy, waiting on the timeline semaphore reaching `waitValue` (0: no wait).
void submitCopy(Vk& v, std::uint64_t waitValue) {
  VkTimelineSemaphoreSubmitInfo tssi{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  tssi.waitSemaphoreValueCount = 1;
  tssi.pWaitSemaphoreValues = &waitValue;
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  if (waitValue) {
    si.pNext = &tssi;
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &v.timeline;
    si.pWaitDstStageMask = &stage;
  }
  si.commandBufferCount = 1;
  si.pCommandBuffers = &v.cmd;
  vkCheck(vkQueueSubmit(v.queue, 1, &si, v.fence), "vkQueueSubmit");
}

void spinFence(Vk& v) {
  while (vkGetFenceStatus(v.device, v.fence) == VK_NOT_READY) {
  }
  vkResetFences(v.device, 1, &v.fence);
}

struct Cuda {
  CUcontext ctx{};
  CUstream stream{};
  CUexternalMemory mem{};
  CUdeviceptr frame = 0, own = 0;
  CUexternalSemaphore sem{};
  CUevent done{};
};

Cuda makeCuda(CUdevice dev, bool primary, const Vk& v) {
  Cuda c;
  if (primary) {
    cuCheck(cuDevicePrimaryCtxRetain(&c.ctx, dev), "cuDevicePrimaryCtxRetain");
  } else {
    cuCheck(cuCtxCreate(&c.ctx, nullptr, 0, dev), "cuCtxCreate");
  }
  cuCheck(cuCtxPushCurrent(c.ctx), "cuCtxPushCurrent");
  cuCheck(cuStreamCreate(&c.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC md{};
  md.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  md.handle.fd = dup(v.memoryFd);
  md.size = v.sharedSize;
  md.flags = CUDA_EXTERNAL_MEMORY_DEDICATED;
  cuCheck(cuImportExternalMemory(&c.mem, &md), "cuImportExternalMemory");
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd{};
  bd.size = kFrameBytes;
  cuCheck(cuExternalMemoryGetMappedBuffer(&c.frame, c.mem, &bd), "cuExternalMemoryGetMappedBuffer");
  cuCheck(cuMemAlloc(&c.own, kFrameBytes), "cuMemAlloc");
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC sd{};
  sd.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  sd.handle.fd = dup(v.semaphoreFd);
  cuCheck(cuImportExternalSemaphore(&c.sem, &sd), "cuImportExternalSemaphore");
  cuCheck(cuEventCreate(&c.done, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUcontext popped;
  cuCtxPopCurrent(&popped);
  return c;
}

void signal(Cuda& c, std::uint64_t value) {
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p{};
  p.params.fence.value = value;
  cuCheck(cuSignalExternalSemaphoresAsync(&c.sem, &p, 1, c.stream), "cuSignalExternalSemaphoresAsync");
}

void spinEvent(CUevent e) {
  while (cuEventQuery(e) == CUDA_ERROR_NOT_READY) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 90, rounds = 3;
  double fps = 30;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--frames") && i + 1 < argc) frames = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--fps") && i + 1 < argc) fps = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--frames N] [--rounds R] [--fps F]\n", argv[0]);
      return 2;
    }
  }
  cuCheck(cuInit(0), "cuInit");
  CUdevice dev;
  cuCheck(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUuuid uuid;
  cuCheck(cuDeviceGetUuid(&uuid, dev), "cuDeviceGetUuid");
  char name[128];
  cuDeviceGetName(name, sizeof name, dev);
  Vk vk = makeVulkan(uuid);
  Cuda producer = makeCuda(dev, true, vk);
  Cuda reader = makeCuda(dev, false, vk);
  CUevent ready;
  cuCtxPushCurrent(producer.ctx);
  cuCheck(cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING), "cuEventCreate ready");
  CUcontext popped;
  cuCtxPopCurrent(&popped);

  const char* modes[] = {"cuda", "vk-host", "vk-gpu", "vk-presubmit"};
  std::map<std::string, std::vector<double>> us;
  std::uint64_t value = 0;  // the timeline semaphore's last value signalled
  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / fps));
  for (int r = 0; r < rounds; ++r) {
    for (const char* mode : modes) {
      const std::string m = mode;
      for (int f = 0; f < frames; ++f) {
        std::this_thread::sleep_for(period);
        std::atomic<std::int64_t> committedAt{0};
        std::atomic<bool> armed{false};
        const std::uint64_t want = value + 1;
        std::int64_t readAt = 0;
        // The reader: as a separate process would, it learns of the frame by a flag (the share's futex
        // word, here spun on so that waking costs nothing) and reads it its own way.
        std::thread readerThread([&] {
          if (m == "vk-presubmit") {
            submitCopy(vk, want);  // before the frame exists
            armed = true;
            while (committedAt.load() == 0) {
            }
            spinFence(vk);
          } else {
            armed = true;
            while (committedAt.load() == 0) {
            }
            if (m == "cuda") {
              cuCtxPushCurrent(reader.ctx);
              cuStreamWaitEvent(reader.stream, ready, 0);
              cuMemcpyDtoDAsync(reader.own, reader.frame, kFrameBytes, reader.stream);
              cuEventRecord(reader.done, reader.stream);
              spinEvent(reader.done);
              CUcontext p;
              cuCtxPopCurrent(&p);
            } else if (m == "vk-host") {
              cuCtxPushCurrent(reader.ctx);
              spinEvent(ready);
              CUcontext p;
              cuCtxPopCurrent(&p);
              submitCopy(vk, 0);
              spinFence(vk);
            } else {  // vk-gpu: the reader's CUDA context waits for the producer and signals Vulkan
              cuCtxPushCurrent(reader.ctx);
              cuStreamWaitEvent(reader.stream, ready, 0);
              signal(reader, want);
              submitCopy(vk, want);
              spinFence(vk);
              CUcontext p;
              cuCtxPopCurrent(&p);
            }
          }
          readAt = nowNs();
        });
        while (!armed.load()) {
        }
        // The producer: writes the frame (as a conversion would), records its event, commits.
        cuCtxPushCurrent(producer.ctx);
        cuMemsetD8Async(producer.frame, static_cast<unsigned char>(f), kFrameBytes, producer.stream);
        cuEventRecord(ready, producer.stream);
        if (m == "vk-presubmit") signal(producer, want);
        if (m == "vk-presubmit" || m == "vk-gpu") value = want;
        cuCtxPopCurrent(&popped);
        const std::int64_t t0 = nowNs();
        committedAt = t0;
        readerThread.join();
        if (f >= 5) us[m].push_back(static_cast<double>(readAt - t0) / 1e3);  // the first few warm up
      }
    }
  }
  std::printf("%s, %d rounds x %d frames a reader at %.0f fps, 1280x720 NV12 (%llu bytes) copied\n", name, rounds,
              frames, fps, static_cast<unsigned long long>(kFrameBytes));
  std::printf("| reader | commit -> read done p50 (µs) | p99 | over cuda |\n|---|---|---|---|\n");
  const double base = pct(us["cuda"], 0.5);
  for (const char* mode : modes) {
    const double p50 = pct(us[mode], 0.5);
    std::printf("| %s | %.1f | %.1f | %.2fx |\n", mode, p50, pct(us[mode], 0.99), base > 0 ? p50 / base : 0);
  }
  return 0;
}
