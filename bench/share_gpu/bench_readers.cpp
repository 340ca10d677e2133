// The reader side of zerohop_share_gpu_bench: bench_readers.hpp.
#include "bench_readers.hpp"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "gpu/cuda_handles.hpp"
#include "zerohop/clock.hpp"

namespace zerohop::share_bench {

using namespace std::chrono_literals;

void pinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) throwErrno("sched_setaffinity", errno);
}

ImageLayout frameLayout() {
  return computeLayout(PixelFormat::kNV12, 1920, 1080, 256);
}

std::array<PlaneView, kMaxPlanes> viewsOf(const Frame& f, const ImageLayout& l) {
  std::array<PlaneView, kMaxPlanes> v{};
  for (std::uint32_t p = 0; p < l.planeCount; ++p)
    v[p] = PlaneView{f.data[p], f.pitch[p], l.planes[p].widthBytes, l.planes[p].rows};
  return v;
}

bool isGpuWait(const std::string& path) {
  return path == "ipc-gpuwait" || path == "floor-gpuwait";
}
bool isSpin(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, "-spin") == 0;
}
std::string basePath(const std::string& path) {
  return isSpin(path) ? path.substr(0, path.size() - 5) : path;
}

std::chrono::microseconds subscribeAnticipation(const std::string& path) {
  return path == "ipc-ant" ? std::chrono::microseconds{300} : std::chrono::microseconds{0};
}

namespace {

/// The fused kernel's arguments for a whole frame `f` of layout `l`.
bench::FusedRead fusedOf(const Frame& f, const ImageLayout& l, unsigned long long* sum, const ReaderWork& work) {
  bench::FusedRead r;
  r.reduce = work.kernel == "reduce";
  r.base = f.data[0];
  r.planeCount = std::min<std::uint32_t>(l.planeCount, 2);
  for (std::uint32_t p = 0; p < r.planeCount; ++p) {
    r.planeOffset[p] = static_cast<std::uint64_t>(f.data[p] - f.data[0]);
    r.pitch[p] = f.pitch[p];
    r.widthBytes[p] = l.planes[p].widthBytes;
    r.rows[p] = l.planes[p].rows;
  }
  r.sum = sum;
  r.maxBlocks = work.readBlocks;
  return r;
}

void launchRead(const Frame& f, const ImageLayout& l, unsigned long long* sum, const ReaderWork& work,
                cudaStream_t stream) {
  if (work.kernel == "rows") {
    const auto v = viewsOf(f, l);
    bench::launchReadFrame(v.data(), l.planeCount, sum, stream, work.readBlocks);
  } else {
    bench::launchReadFused(fusedOf(f, l, sum, work), stream);
  }
}

}  // namespace

Samples readFrames(Subscriber& sub, const std::string& path, std::uint64_t warmup, const ReaderWork& work,
                   const std::function<void()>& ready) {
  const ImageLayout l = frameLayout();
  CudaStream stream(kDevice);
  DeviceBuffer sum(kDevice, sizeof(unsigned long long));
  DeviceBuffer own(kDevice, l.totalBytes);  // host-rt: where the H2D lands; floor: what the kernel reads
  Frame ownFrame;
  bindLayout(ownFrame, l, own.data(), MemoryKind::kDevice);
  std::vector<std::unique_ptr<Registration>> registered;
  std::vector<const std::uint8_t*> seenSlots;
  Samples out;
  launchRead(ownFrame, l, reinterpret_cast<unsigned long long*>(sum.data()), work, stream.get());
  stream.synchronize();
  ready();
  const bool spin = isSpin(path);
  const std::string base = basePath(path);
  CudaEvent kernelStart(kDevice, true), kernelEnd(kDevice, true);  // work.timing
  std::uint64_t lastIndex = 0;
  try {
    for (;;) {
      std::optional<SharedFrame> f;
      if (spin) {
        const auto until = std::chrono::steady_clock::now() + 5s;
        while (std::chrono::steady_clock::now() < until) {
          f = sub.latest();
          if (f && f->publishIndex() > lastIndex) break;
          f.reset();
        }
        if (f) lastIndex = f->publishIndex();
      } else {
        f = sub.next(5s);
      }
      const std::int64_t woke = monotonicNs();
      if (!f) break;
      const Frame& fr = f->frame();
      Frame use = fr;
      if (base == "host-rt") {
        // Page-lock each slot of the ring once, read-only (the mapping is PROT_READ).
        if (std::find(seenSlots.begin(), seenSlots.end(), fr.data[0]) == seenSlots.end()) {
          seenSlots.push_back(fr.data[0]);
          registered.push_back(
              std::make_unique<Registration>(fr.data[0], l.totalBytes, cudaHostRegisterReadOnly));
          out.pinned = out.pinned && registered.back()->ok();
        }
        for (std::uint32_t p = 0; p < l.planeCount; ++p) {
          cuda::check(cudaMemcpy2DAsync(ownFrame.data[p], ownFrame.pitch[p], fr.data[p], fr.pitch[p],
                                        l.planes[p].widthBytes, l.planes[p].rows, cudaMemcpyHostToDevice,
                                        stream.get()),
                      "cudaMemcpy2DAsync(H2D)");
          if (fr.sequence > warmup)
            out.bytesCopied += std::uint64_t{l.planes[p].widthBytes} * l.planes[p].rows;
        }
        use = ownFrame;
      } else if (base == "floor") {
        use = ownFrame;  // the bare context switch: our own buffer, no wait on the publisher's event
      } else {
        cuda::check(cudaStreamWaitEvent(stream.get(), static_cast<cudaEvent_t>(fr.gpu.readyEvent), 0),
                    "cudaStreamWaitEvent(readyEvent)");
      }
      if (work.timing) kernelStart.record(stream.get());
      launchRead(use, l, reinterpret_cast<unsigned long long*>(sum.data()), work, stream.get());
      if (work.timing) kernelEnd.record(stream.get());
      const std::int64_t launched = monotonicNs();
      stream.synchronize();
      const std::int64_t done = monotonicNs();
      const std::int64_t t0 = fr.times.at(Stage::kCapture);
      if (fr.sequence > warmup && f->valid()) {
        out.total.push_back(done - t0);
        out.wake.push_back(woke - t0);
        out.launch.push_back(launched - woke);
        out.kernel.push_back(
            work.timing ? static_cast<std::int64_t>(kernelEnd.elapsedMsSince(kernelStart) * 1e6) : 0);
      }
    }
  } catch (const Error& e) {
    if (e.code() != Errc::kUnavailable) throw;  // the publisher closing ends the run
  }
  return out;
}

std::string doorbellFile(const std::string& dir, const std::string& name) {
  return dir + "/" + name + ".doorbell";
}

std::uint32_t doorbellValue(std::uint64_t sequence, std::uint32_t slot) {
  return static_cast<std::uint32_t>(sequence << bench::kDoorbellSlotBits) | slot;
}

namespace {

using WaitValue32 = decltype(&cuStreamWaitValue32);

void checkDriver(CUresult status, const char* what) {
  if (status != CUDA_SUCCESS)
    throw Error(Errc::kDevice, std::string(what) + " failed: " + cuda::driverErrorName(status));
}

/// The doorbell word as a reader process maps it (cudaIpcOpenMemHandle); closed on destruction.
class ImportedDoorbell {
 public:
  explicit ImportedDoorbell(const std::string& file) {
    cudaIpcMemHandle_t handle{};
    std::ifstream in(file, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(&handle), sizeof handle))
      throw Error(Errc::kNotFound, "no doorbell handle in " + file);
    cuda::check(cudaIpcOpenMemHandle(&ptr_, handle, cudaIpcMemLazyEnablePeerAccess),
                "cudaIpcOpenMemHandle(doorbell)");
  }
  ~ImportedDoorbell() { cuda::logIfFailed(cudaIpcCloseMemHandle(ptr_), "cudaIpcCloseMemHandle(doorbell)"); }
  ImportedDoorbell(const ImportedDoorbell&) = delete;
  ImportedDoorbell& operator=(const ImportedDoorbell&) = delete;
  const std::uint32_t* word() const noexcept { return static_cast<const std::uint32_t*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

/// The gpuwait paths: after the warm-up (polled like ipc-spin, to learn slot 0's address from one
/// frame and the doorbell's word for it), the reader enqueues "wait until the doorbell reaches the
/// next sequence" + the fused kernel BEFORE that frame is published, then spins on cudaStreamQuery
/// to timestamp the kernel's completion, and checks with latest() that it read that very frame.
Samples readFramesArmed(Subscriber& sub, const std::string& path, std::uint64_t warmup, ReaderWork work,
                        const std::uint32_t* doorbell, const std::function<void()>& ready) {
  if (work.kernel == "rows") work.kernel = "fused";  // one launch reads the slot the doorbell names
  const ImageLayout l = frameLayout();
  const std::uint64_t stride = (l.totalBytes + 4095) / 4096 * 4096;  // publisher_core.cpp's slot stride
  const auto waitValue = reinterpret_cast<WaitValue32>(cuda::driverEntryPoint("cuStreamWaitValue32"));
  if (!waitValue) throw Error(Errc::kUnsupported, "cuStreamWaitValue32 is not offered by this CUDA driver");
  CudaStream stream(kDevice);
  DeviceBuffer sum(kDevice, sizeof(unsigned long long)), used(kDevice, sizeof(std::uint32_t)),
      own(kDevice, l.totalBytes);
  Frame ownFrame;
  bindLayout(ownFrame, l, own.data(), MemoryKind::kDevice);
  auto* sumPtr = reinterpret_cast<unsigned long long*>(sum.data());
  auto* usedPtr = reinterpret_cast<std::uint32_t*>(used.data());
  CudaEvent kernelStart(kDevice, true), kernelEnd(kDevice, true);
  bench::launchReadFused(fusedOf(ownFrame, l, sumPtr, work), stream.get());
  stream.synchronize();
  ready();
  const bool floor = path == "floor-gpuwait";
  Samples out;
  const std::uint8_t* slot0 = nullptr;
  bench::FusedRead armed;
  std::uint64_t next = 0;
  try {
    while (!slot0 || next <= warmup) {
      std::optional<SharedFrame> f;
      const auto until = std::chrono::steady_clock::now() + 5s;
      while (std::chrono::steady_clock::now() < until) {
        f = sub.latest();
        if (f && f->frame().sequence >= next) break;
        f.reset();
      }
      if (!f) return out;
      const Frame& fr = f->frame();
      next = fr.sequence + 1;
      for (int i = 0; i < 100 && !slot0; ++i) {  // the doorbell lands a few us after the commit
        std::uint32_t word = 0;
        cuda::check(cudaMemcpy(&word, doorbell, sizeof word, cudaMemcpyDeviceToHost), "cudaMemcpy(doorbell)");
        if (word >> bench::kDoorbellSlotBits == (doorbellValue(fr.sequence, 0) >> bench::kDoorbellSlotBits)) {
          slot0 = fr.data[0] - (word & bench::kDoorbellClosed) * stride;
          armed = fusedOf(floor ? ownFrame : fr, l, sumPtr, work);
          armed.base = floor ? ownFrame.data[0] : slot0;
          armed.slotStride = floor ? 0 : stride;
          armed.doorbell = doorbell;
          armed.usedSlot = usedPtr;
        } else {
          std::this_thread::sleep_for(10us);
        }
      }
    }
    for (;;) {
      checkDriver(waitValue(stream.get(), reinterpret_cast<CUdeviceptr>(doorbell), doorbellValue(next, 0),
                            CU_STREAM_WAIT_VALUE_GEQ),
                  "cuStreamWaitValue32(doorbell)");
      if (work.timing) kernelStart.record(stream.get());
      bench::launchReadFused(armed, stream.get());
      if (work.timing) kernelEnd.record(stream.get());
      const auto deadline = std::chrono::steady_clock::now() + 5s;
      cudaError_t status;
      while ((status = cudaStreamQuery(stream.get())) == cudaErrorNotReady) {
        if (std::chrono::steady_clock::now() > deadline)
          throw Error(Errc::kTimeout, "no doorbell for 5 s: the publisher stopped without ringing 'closed'");
      }
      const std::int64_t done = monotonicNs();
      cuda::check(status, "cudaStreamQuery");
      std::uint32_t usedSlot = 0;
      cuda::check(cudaMemcpy(&usedSlot, usedPtr, sizeof usedSlot, cudaMemcpyDeviceToHost), "cudaMemcpy(used slot)");
      if (usedSlot == bench::kDoorbellClosed) break;
      std::optional<SharedFrame> f = sub.latest();
      if (!f) break;
      const Frame& fr = f->frame();
      const bool same = fr.sequence == next && (floor || fr.data[0] == slot0 + usedSlot * stride);
      if (same && f->valid()) {
        out.total.push_back(done - fr.times.at(Stage::kCapture));
        out.wake.push_back(0);
        out.launch.push_back(0);
        out.kernel.push_back(
            work.timing ? static_cast<std::int64_t>(kernelEnd.elapsedMsSince(kernelStart) * 1e6) : 0);
      } else if (!floor && fr.sequence == next) {
        throw Error(Errc::kInternal, "the doorbell named slot " + std::to_string(usedSlot) +
                                         " but latest() found the frame elsewhere");
      }
      next = std::max(next, fr.sequence) + 1;
    }
  } catch (const Error& e) {
    if (e.code() != Errc::kUnavailable) throw;
  }
  return out;
}

}  // namespace

int runReader(int argc, char** argv) {
  const std::string name = argv[2], dir = argv[3], path = argv[4];
  const std::uint64_t warmup = std::stoull(argv[5]);
  ReaderWork work;
  for (int i = 6; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--cpu")
      pinThisThread(std::stoi(argv[i + 1]));  // before CUDA starts its threads: they inherit it
    else if (a == "--read-blocks")
      work.readBlocks = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
    else if (a == "--kernel")
      work.kernel = argv[i + 1];
    else if (a == "--timing")
      work.timing = std::string(argv[i + 1]) == "1";
    else
      throw Error(Errc::kInvalidArgument, "reader: unknown argument " + a);
  }
  cuda::check(cudaSetDeviceFlags(cudaDeviceScheduleSpin), "cudaSetDeviceFlags(spin)");
  cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
  int sms = 0;
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, kDevice),
              "cudaDeviceGetAttribute");
  const int smsUsed = bench::countSmsUsed(kDevice);
  SubscribeOptions o;
  o.directory = dir;
  o.anticipate = subscribeAnticipation(path);
  Subscriber sub(name, o);
  auto ready = [&] { std::cout << "ready " << sms << " " << smsUsed << std::endl; };
  Samples s;
  if (isGpuWait(path)) {
    const ImportedDoorbell doorbell(doorbellFile(dir, name));
    s = readFramesArmed(sub, path, warmup, work, doorbell.word(), ready);
  } else {
    s = readFrames(sub, path, warmup, work, ready);
  }
  std::ostringstream line;
  line << "samples " << (s.pinned ? "pinned" : "pageable") << " " << s.bytesCopied << " " << s.total.size();
  for (std::size_t i = 0; i < s.total.size(); ++i)
    line << " " << s.total[i] << ":" << s.wake[i] << ":" << s.launch[i] << ":" << s.kernel[i];
  std::cout << line.str() << std::endl;
  return 0;
}

void checkReaderKernels() {
  const ImageLayout l = frameLayout();
  CudaStream stream(kDevice);
  DeviceBuffer frame(kDevice, l.totalBytes), sums(kDevice, 3 * sizeof(unsigned long long));
  Frame f;
  bindLayout(f, l, frame.data(), MemoryKind::kDevice);
  const auto v = viewsOf(f, l);
  bench::launchWriteFrame(v.data(), l.planeCount, 12345, stream.get());
  cuda::check(cudaMemsetAsync(sums.data(), 0, 3 * sizeof(unsigned long long), stream.get()), "cudaMemsetAsync");
  auto* out = reinterpret_cast<unsigned long long*>(sums.data());
  const char* kinds[3] = {"rows", "fused", "reduce"};
  for (int k = 0; k < 3; ++k) launchRead(f, l, out + k, ReaderWork{0, kinds[k], false}, stream.get());
  unsigned long long host[3] = {};
  cuda::check(cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, stream.get()), "cudaMemcpyAsync");
  stream.synchronize();
  for (int k = 1; k < 3; ++k)
    if (host[k] != host[0] || host[0] == 0)
      throw Error(Errc::kInternal, std::string("reader kernel '") + kinds[k] + "' sums " + std::to_string(host[k]) +
                                       ", rows sums " + std::to_string(host[0]));
}

}  // namespace zerohop::share_bench
