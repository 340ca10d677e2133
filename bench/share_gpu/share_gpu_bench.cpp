// zerohop_share_gpu_bench: what handing a 1080p NV12 frame (60 fps) to other readers on the same GPU costs.
//
//   publish -> reader-has-used-the-frame latency = from the publisher's commit (CLOCK_MONOTONIC,
//   carried in the frame's StageTimes) to the moment a reader has run one kernel that reads every
//   byte of the frame and seen it complete (cudaStreamSynchronize with spin scheduling).
//
// Paths (rows: 1, 4 and 8 readers unless said otherwise):
//   ipc          device ring (default export: CUDA VMM fds where supported, else legacy CUDA IPC),
//                reader processes wait in Subscriber::next() (spin 50 us,
//                then futex); the publisher's write kernel finished before commit, so the number is
//                the hand-off itself (wake-up + cudaStreamWaitEvent + context switch + kernel)
//   ipc-ant      the same with SubscribeOptions::anticipate = 300 us: next() learns the frame period,
//                sleeps until 300 us before the next frame is due, then spins for it
//   ipc-spin     the same, readers busy-poll Subscriber::latest(): no host wake-up in the number
//   floor-spin   the bare context-switch floor: reader processes of the same device ring that, on
//                each publish, launch the same kernel on THEIR OWN buffer (no event, no slot)
//   ipc-gpuwait  reader processes whose work is queued on the GPU BEFORE the frame exists: the reader's
//                stream waits (cuStreamWaitValue32, GEQ) on a doorbell word in the publisher's device
//                memory (legacy CUDA IPC) that the publisher's stream sets to (sequence << 6) | slot
//                right after commit; the reader's kernel then reads the slot the word names. No host
//                wake-up and no launch on the path; the reader's host only spins on cudaStreamQuery to
//                timestamp completion. A benchmark prototype: the ring's protocol has no doorbell
//                (the reader learns slot 0's address from one warm-up frame; leases are not taken).
//   floor-gpuwait the same queued wait, the kernel on the reader's OWN buffer (its floor)
//   ipc-async    (1 reader) commit right after enqueueing the write, as a pipeline does: the
//                reader's GPU waits on the slot's interprocess event; includes the rest of the write
//   inproc, inproc-spin   reader THREADS of the publisher's process (Subscriber finds the
//                in-process publisher: its own device pointers and events, no IPC, no context switch)
//   host-rt, host-rt-spin the host round trip a program does without device sharing: publisher
//                D2H into the host ring's slot (memfd, page-locked with cudaHostRegister when
//                allowed), reader H2D into its own device buffer, then the same kernel
//   ipc, 0 readers        the producer's own cost with nobody reading (compare with 8 readers)
// Per row also: bytes copied per frame (counted: the library's ShareStats::bytesCopied plus every
// cudaMemcpy the benchmark itself issues, publisher and readers), the producer's CPU time per
// frame (thread CPU time of acquireWrite + commit) and its GPU time per frame, p50: "write" from a
// timing event before the write kernel to one right after it; "write+commit" to one recorded after
// commit, i.e. when work the producer enqueues right after publishing could start (without MPS it
// waits behind the readers' context time slices).
//
// Deployment knobs (all off by default; the table's header line lists those in effect):
//   --reader-env KEY=VALUE   set in the reader PROCESSES' environment only (repeatable), e.g. MPS's
//                            CUDA_MPS_ACTIVE_THREAD_PERCENTAGE or CUDA_MPS_CLIENT_PRIORITY
//   --reader-sm-percent N    = --reader-env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=N (the producer keeps 100 %)
//   --pin                    the producer's thread on the last allowed CPU, reader r (process or thread)
//                            on the (r + 2)th, each alone; CPU 0 left to the interrupts (sched_setaffinity,
//                            before CUDA starts its threads, which inherit it)
//   --read-blocks N          the reader kernel runs at most N blocks (rows: per plane) that stride over
//                            the frame (default: reduce 2 per SM; rows and fused one per row, 1,620 of 128
//                            threads per frame)
//   --producer-next-kernel   right after commit the producer enqueues the write kernel again on a scratch
//                            frame (a stand-in for its next stage, e.g. the encoder's conversion): "next
//                            kernel" = from the event after commit to one after that kernel, p50 / p99, and
//                            per frame next / write (the write kernel runs with no reader active, so the
//                            ratio cancels the GPU's clock state)
//   --reader-kernel K        the reader's kernel (every kind reads every byte once and sums it):
//                            reduce  (default) one launch, 2 blocks of 256 threads per SM (or --read-blocks)
//                                    striding over the frame, summed per block: one atomicAdd per block
//                            rows    one launch per plane, one 128-thread block per row, an atomicAdd per
//                                    warp: 6,480 atomics on one word per 1080p frame (slower; the kernel
//                                    of the older figures in docs/benchmarks-gpu.md)
//                            fused   the rows kernel's blocks in ONE launch for both planes
//                            (the gpuwait paths take fused for rows); the bench checks at start-up that
//                            all three sum a frame alike
//   --reader-timing          reader GPU timing events around its kernel ("reader kernel" column; they
//                            add two event records to the reader's launch, so off by default)
//   --commit-after-next      with --producer-next-kernel: the producer enqueues that kernel BEFORE commit()
//                            (the frame itself is complete; t0 is still taken when it is), so the slot's
//                            event, which readers' streams wait on, follows it: readers' kernels cannot
//                            run beside it, and their latency includes it. "write+commit" then ends
//                            before the next kernel instead of after commit.
//   --producer-priority      the producer's stream at the device's highest stream priority (readers keep
//                            the default): does it keep the readers' kernels from slowing its next kernel?
// Columns "reader launch" (the reader's host: frame seen -> its wait and kernel enqueued; 0 for the
// gpuwait paths, which enqueue before the frame) and "reader kernel" (GPU timing events right
// before and after the reader's kernel, after its wait: the kernel's own GPU time), p50.
// Column "reader SMs": per reader process, cudaDevAttrMultiProcessorCount / the distinct %smid a
// grid of spinning blocks ran on at start-up (what an SM limit really left it; min-max over readers).
//
// Usage: zerohop_share_gpu_bench [--frames N] [--period-us P] [--readers 1,4,8] [--paths a,b]
//                                [--label TEXT] [--out FILE] [knobs above]
//        a path may name its own reader counts: --paths ipc-spin,ipc@8,floor-spin@1+8
//        (internal) zerohop_share_gpu_bench --reader NAME DIR PATH WARMUP [--cpu N] [--read-blocks N]
// Appends a markdown table to --out. Exit status: 0 ok, 1 failure, 2 no GPU.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_kernels.hpp"
#include "bench_readers.hpp"
#include "core/unique_fd.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/driver_entry.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

extern char** environ;

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using namespace share_bench;

constexpr std::uint32_t kSlots = 6;

/// The knobs a deployment has (header comment); the same for every row of one run.
struct Knobs {
  std::vector<std::string> readerEnv;  ///< KEY=VALUE, reader processes only
  bool pin = false;
  std::vector<int> cpus;  ///< allowed CPUs, in order, when pinning
  std::uint32_t readBlocks = 0;
  bool producerNextKernel = false;
  bool commitAfterNext = false;
  bool producerPriority = false;
  std::string readerKernel = "reduce";
  bool readerTiming = false;
};

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) throwErrno("sched_getaffinity", errno);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

/// Reader r's CPU when pinning: cpus[1 + r], wrapping before the last (the producer's); CPU 0, which
/// tends to take the interrupts, is left alone. -1 = not pinned.
int readerCpu(const Knobs& k, int r) {
  if (!k.pin || k.cpus.size() < 3) return -1;
  return k.cpus[1 + static_cast<std::size_t>(r) % (k.cpus.size() - 2)];
}

// ---- orchestrator ----------------------------------------------------------------------------

class ReaderProcess {
 public:
  /// `env`: KEY=VALUE entries added to (or replacing those of) this process's environment.
  ReaderProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throwErrno("pipe2", errno);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> vars;
    for (char** e = environ; *e; ++e) {
      const std::string v = *e;
      const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& kv) {
        return v.compare(0, kv.find('=') + 1, kv, 0, kv.find('=') + 1) == 0;
      });
      if (!replaced) vars.push_back(v);
    }
    vars.insert(vars.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, "/proc/self/exe", &fa, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    out_ = zerohop::UniqueFd(out[0]);
    if (rc != 0) throwErrno("posix_spawn", rc);
  }
  ~ReaderProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ReaderProcess(const ReaderProcess&) = delete;
  ReaderProcess& operator=(const ReaderProcess&) = delete;

  std::string readLine(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw Error(Errc::kTimeout, "reader process said nothing");
      pollfd p{out_.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::read(out_.get(), buf, sizeof buf);
      if (n <= 0) throw Error(Errc::kUnavailable, "reader process ended early");
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
  }
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  zerohop::UniqueFd out_;
  std::string buffer_;
};

struct Result {
  std::string path;
  int readers = 0;
  std::size_t samples = 0;
  double p50 = 0, p99 = 0, mean = 0, max = 0, wakeP50 = 0, wakeP99 = 0;
  double bytesPerFrame = 0, pubCpuP50 = 0, pubWriteP50 = 0, pubGpuP50 = 0;
  double nextP50 = -1, nextP99 = -1, nextRatioP50 = -1;  ///< --producer-next-kernel; -1: not measured
  double launchP50 = 0, kernelP50 = 0, kernelP99 = 0;
  std::string memory, readerSms = "-";
};

double percentile(std::vector<std::int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[std::min(v.size() - 1, static_cast<std::size_t>(q * (v.size() - 1) + 0.5))]) /
         1000.0;
}

std::int64_t threadCpuNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

/// "132/132" or "33-34/33-34": SMs seen by the reader processes (attribute / used), min-max.
std::string smRange(const std::vector<std::pair<int, int>>& seen) {
  if (seen.empty()) return "-";
  auto [a0, a1] =
      std::minmax_element(seen.begin(), seen.end(), [](auto& x, auto& y) { return x.first < y.first; });
  auto [u0, u1] =
      std::minmax_element(seen.begin(), seen.end(), [](auto& x, auto& y) { return x.second < y.second; });
  auto range = [](int lo, int hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
  };
  return range(a0->first, a1->first) + "/" + range(u0->second, u1->second);
}

Result runPath(const std::string& path, int readers, int frames, int periodUs, const std::string& dir,
               const Knobs& knobs) {
  const ImageLayout l = frameLayout();
  const std::string name = "bench-" + path + "-" + std::to_string(readers);
  const std::uint64_t warmup = 30;
  ShareOptions o;
  o.directory = dir;
  const std::string base = basePath(path);
  const bool device = base != "host-rt";
  const bool inProcess = base == "inproc";
  std::uint64_t payload = 0;
  for (std::uint32_t p = 0; p < l.planeCount; ++p)
    payload += std::uint64_t{l.planes[p].widthBytes} * l.planes[p].rows;
  // slots > readers x leases each + 2 (share-protocol.md): no reader ever sees its frame overwritten.
  const std::uint32_t slots = std::max<std::uint32_t>(kSlots, static_cast<std::uint32_t>(readers) + 4);
  // gpuwait: the doorbell outlives the reader processes (declared before them: destroyed after them).
  const bool gpuWait = isGpuWait(path);
  StreamFlag doorbell;  // the library's stream-set word (cuStreamWriteValue32 where the driver has it)
  if (gpuWait) {
    doorbell = StreamFlag(kDevice);
    cudaIpcMemHandle_t handle{};
    cuda::check(cudaIpcGetMemHandle(&handle, const_cast<std::uint32_t*>(doorbell.word())),
                "cudaIpcGetMemHandle(doorbell)");
    std::ofstream f(doorbellFile(dir, name), std::ios::binary);
    f.write(reinterpret_cast<const char*>(&handle), sizeof handle);
    if (!f.flush()) throw Error(Errc::kIo, "cannot write " + doorbellFile(dir, name));
  }
  auto pub = std::make_unique<Publisher>(
      name, device ? SlotLayout::deviceImages(l, slots, kDevice) : SlotLayout::images(l, slots), o);

  const ReaderWork work{knobs.readBlocks, knobs.readerKernel, knobs.readerTiming};
  std::vector<std::unique_ptr<ReaderProcess>> procs;
  std::vector<std::thread> threads;
  std::vector<Samples> threadSamples(static_cast<std::size_t>(readers));
  std::vector<std::string> threadErrors(static_cast<std::size_t>(readers));
  std::atomic<int> threadsReady{0};
  for (int r = 0; r < readers; ++r) {
    if (inProcess) {
      threads.emplace_back([&, r] {
        try {
          cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
          SubscribeOptions so;
          so.directory = dir;
          so.anticipate = subscribeAnticipation(path);
          if (const int cpu = readerCpu(knobs, r); cpu >= 0) pinThisThread(cpu);
          Subscriber sub(name, so);
          if (!sub.info().inProcess) throw Error(Errc::kInternal, "the in-process reader went through IPC");
          threadSamples[r] = readFrames(sub, path, warmup, work, [&] { ++threadsReady; });
        } catch (const std::exception& e) {
          threadErrors[r] = e.what();
          ++threadsReady;
        }
      });
    } else {
      std::vector<std::string> argv{"zerohop_share_gpu_bench", "--reader", name, dir, path,
                                    std::to_string(warmup)};
      argv.push_back("--read-blocks");
      argv.push_back(std::to_string(knobs.readBlocks));
      argv.push_back("--kernel");
      argv.push_back(work.kernel);
      argv.push_back("--timing");
      argv.push_back(work.timing ? "1" : "0");
      if (const int cpu = readerCpu(knobs, r); cpu >= 0) {
        argv.push_back("--cpu");
        argv.push_back(std::to_string(cpu));
      }
      procs.push_back(std::make_unique<ReaderProcess>(argv, knobs.readerEnv));
    }
  }
  std::vector<std::pair<int, int>> smsSeen;
  for (auto& p : procs) {
    std::istringstream line(p->readLine(60s));
    std::string tag;
    std::pair<int, int> sms;
    if (!(line >> tag >> sms.first >> sms.second) || tag != "ready")
      throw Error(Errc::kInternal, "reader: " + line.str());
    smsSeen.push_back(sms);
  }
  while (threadsReady.load() < static_cast<int>(threads.size())) std::this_thread::sleep_for(1ms);
  while (pub->stats().readersConnected < static_cast<std::uint32_t>(readers))
    std::this_thread::sleep_for(1ms);

  CudaStream stream(kDevice, knobs.producerPriority ? highestStreamPriority(kDevice) : 0);
  auto ring = [&](std::uint32_t value) { doorbell.set(stream.get(), value); };  // after the stream's work
  CudaEvent gpuStart(kDevice, true), gpuWritten(kDevice, true), gpuStop(kDevice, true),
      gpuNext(kDevice, true);
  // host-rt: the frame the publisher has in VRAM; --producer-next-kernel: what that kernel writes
  DeviceBuffer source(kDevice, l.totalBytes);
  Frame src;
  bindLayout(src, l, source.data(), MemoryKind::kDevice);
  std::vector<std::unique_ptr<Registration>> registered;
  std::vector<const std::uint8_t*> seenSlots;
  bool pinned = true;
  std::uint64_t benchCopied = 0;  // the publisher side's own copies (host-rt: the D2H)
  std::vector<std::int64_t> pubCpu, pubWrite, pubGpu, pubNext, pubNextRatio;  // ratio: x1000
  bool pendingGpu = false;
  const bool nextKernel = knobs.producerNextKernel && device;
  auto collectGpu = [&] {
    const CudaEvent& last = nextKernel ? gpuNext : gpuStop;
    last.synchronize();
    const double write = gpuWritten.elapsedMsSince(gpuStart) * 1e6;
    pubWrite.push_back(static_cast<std::int64_t>(write));
    pubGpu.push_back(static_cast<std::int64_t>(gpuStop.elapsedMsSince(gpuStart) * 1e6));
    if (nextKernel) {
      const double next = gpuNext.elapsedMsSince(gpuStop) * 1e6;
      pubNext.push_back(static_cast<std::int64_t>(next));
      pubNextRatio.push_back(static_cast<std::int64_t>(next / std::max(write, 1.0) * 1000.0));
    }
    pendingGpu = false;
  };
  for (std::uint64_t seq = 1; seq <= warmup + static_cast<std::uint64_t>(frames); ++seq) {
    if (pendingGpu) collectGpu();
    const bool measured = seq > warmup;
    std::int64_t cpu = 0;
    std::int64_t c0 = threadCpuNs();
    WriteSlot ws = pub->acquireWrite();
    cpu += threadCpuNs() - c0;
    Frame meta;
    meta.sequence = seq;
    gpuStart.record(stream.get());
    if (base == "host-rt") {
      const auto v = viewsOf(src, l);
      bench::launchWriteFrame(v.data(), l.planeCount, seq, stream.get());
      stream.synchronize();
      if (std::find(seenSlots.begin(), seenSlots.end(), ws.frame().data[0]) == seenSlots.end()) {
        seenSlots.push_back(ws.frame().data[0]);
        registered.push_back(
            std::make_unique<Registration>(ws.frame().data[0], l.totalBytes, cudaHostRegisterDefault));
        pinned = pinned && registered.back()->ok();
      }
      meta.times.mark(Stage::kCapture, monotonicNs());
      for (std::uint32_t p = 0; p < l.planeCount; ++p) {
        cuda::check(
            cudaMemcpy2DAsync(ws.frame().data[p], ws.frame().pitch[p], src.data[p], src.pitch[p],
                              l.planes[p].widthBytes, l.planes[p].rows, cudaMemcpyDeviceToHost, stream.get()),
            "cudaMemcpy2DAsync(D2H)");
      }
      if (measured) benchCopied += payload;
      gpuWritten.record(stream.get());
      gpuStop.record(stream.get());
      stream.synchronize();
      c0 = threadCpuNs();
      pub->commit(std::move(ws), meta);
      cpu += threadCpuNs() - c0;
    } else {
      const auto v = viewsOf(ws.frame(), l);
      bench::launchWriteFrame(v.data(), l.planeCount, seq, stream.get());
      gpuWritten.record(stream.get());
      if (base != "ipc-async") stream.synchronize();
      meta.times.mark(Stage::kCapture, monotonicNs());
      auto enqueueNext = [&] {
        gpuStop.record(stream.get());
        if (nextKernel) {
          const auto next = viewsOf(src, l);
          bench::launchWriteFrame(next.data(), l.planeCount, seq, stream.get());
          gpuNext.record(stream.get());
        }
      };
      const bool nextFirst = knobs.commitAfterNext && nextKernel;
      if (nextFirst) enqueueNext();  // the slot's event (and doorbell) come after the next kernel
      c0 = threadCpuNs();
      const std::uint32_t slotIndex = ws.slot();
      pub->commit(std::move(ws), meta, stream.get());
      if (gpuWait) ring(doorbellValue(seq, slotIndex));
      cpu += threadCpuNs() - c0;
      if (!nextFirst) enqueueNext();
    }
    if (measured) {
      pubCpu.push_back(cpu);
      pendingGpu = true;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(periodUs));
  }
  if (gpuWait) ring(doorbellValue(warmup + static_cast<std::uint64_t>(frames) + 1, bench::kDoorbellClosed));
  stream.synchronize();
  if (pendingGpu) collectGpu();
  const std::uint64_t libraryCopied = pub->stats().bytesCopied;
  pub.reset();  // readers see the ring close, report and let go (device: the publisher waits for that)

  Result res;
  res.path = path;
  res.readers = readers;
  std::vector<std::int64_t> total, wake, launch, kernel;
  std::uint64_t readersCopied = 0;
  std::string memory = inProcess ? "device (in-process)"
                       : device  ? "device (other process)"
                                 : (pinned ? "pinned" : "pageable");
  for (auto& t : threads) t.join();
  for (int r = 0; r < static_cast<int>(threads.size()); ++r) {
    if (!threadErrors[r].empty()) throw Error(Errc::kInternal, "in-process reader: " + threadErrors[r]);
    const Samples& s = threadSamples[r];
    total.insert(total.end(), s.total.begin(), s.total.end());
    wake.insert(wake.end(), s.wake.begin(), s.wake.end());
    launch.insert(launch.end(), s.launch.begin(), s.launch.end());
    kernel.insert(kernel.end(), s.kernel.begin(), s.kernel.end());
    readersCopied += s.bytesCopied;
  }
  for (auto& p : procs) {
    std::istringstream in(p->readLine(30s));
    std::string tag, mem;
    std::uint64_t copied = 0;
    std::size_t n = 0;
    in >> tag >> mem >> copied >> n;
    if (tag != "samples") throw Error(Errc::kInternal, "reader answered '" + tag + "'");
    if (!device && mem == "pageable")
      memory = "publisher " + std::string(pinned ? "pinned" : "pageable") + ", reader pageable";
    readersCopied += copied;
    for (std::size_t i = 0; i < n; ++i) {
      std::string s;
      in >> s;
      std::istringstream fields(s);  // total:wake:launch:kernel
      std::int64_t v[4] = {};
      char sep = 0;
      if (!(fields >> v[0] >> sep >> v[1] >> sep >> v[2] >> sep >> v[3]))
        throw Error(Errc::kInternal, "reader sample '" + s + "'");
      total.push_back(v[0]);
      wake.push_back(v[1]);
      launch.push_back(v[2]);
      kernel.push_back(v[3]);
    }
    if (p->wait() != 0) throw Error(Errc::kInternal, "a reader process failed");
  }
  res.samples = total.size();
  res.p50 = percentile(total, 0.50);
  res.p99 = percentile(total, 0.99);
  res.max = percentile(total, 1.0);
  res.wakeP50 = percentile(wake, 0.50);
  res.wakeP99 = percentile(wake, 0.99);
  res.launchP50 = percentile(launch, 0.50);
  res.kernelP50 = percentile(kernel, 0.50);
  res.kernelP99 = percentile(kernel, 0.99);
  double sum = 0;
  for (auto t : total) sum += static_cast<double>(t);
  res.mean = total.empty() ? 0 : sum / static_cast<double>(total.size()) / 1000.0;
  res.bytesPerFrame =
      static_cast<double>(libraryCopied + benchCopied + readersCopied) / static_cast<double>(frames);
  res.pubCpuP50 = percentile(pubCpu, 0.50);
  res.pubWriteP50 = percentile(pubWrite, 0.50);
  res.pubGpuP50 = percentile(pubGpu, 0.50);
  if (nextKernel) {
    res.nextP50 = percentile(pubNext, 0.50);
    res.nextP99 = percentile(pubNext, 0.99);
    res.nextRatioP50 = percentile(pubNextRatio, 0.50);  // x1000 / 1000
  }
  res.memory = memory;
  res.readerSms = smRange(smsSeen);
  return res;
}

std::string describeKnobs(const Knobs& k) {
  std::ostringstream d;
  d << "reader processes' environment: ";
  if (k.readerEnv.empty()) d << "as the producer's";
  for (std::size_t i = 0; i < k.readerEnv.size(); ++i) d << (i ? ", " : "+ ") << k.readerEnv[i];
  d << "; CPU pinning: ";
  if (k.pin)
    d << "producer on CPU " << k.cpus.back() << ", reader r on CPU " << readerCpu(k, 0) << " + r ("
      << k.cpus.size() << " allowed)";
  else
    d << "none";
  d << "; reader kernel: " << k.readerKernel;
  if (k.readBlocks)
    d << ", at most " << k.readBlocks << " blocks" << (k.readerKernel == "rows" ? " per plane" : "");
  else
    d << (k.readerKernel == "reduce" ? ", 2 blocks per SM" : ", one block per row");
  if (k.readerTiming) d << " (timed with GPU events)";
  d << "; producer next kernel: "
    << (!k.producerNextKernel ? "no" : k.commitAfterNext ? "yes, enqueued BEFORE commit" : "yes, after commit");
  d << "; producer stream priority: " << (k.producerPriority ? "highest" : "default");
  return d.str();
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string t;
  while (std::getline(in, t, ',')) out.push_back(t);
  return out;
}

int runBench(int argc, char** argv) {
  int frames = 150, periodUs = 16667;  // 1080p60
  std::vector<int> readerCounts{1, 4, 8};
  std::vector<std::string> paths{"ipc",         "ipc-ant",      "ipc-spin",  "floor-spin", "inproc",
                                 "inproc-spin", "host-rt-spin", "ipc-async", "host-rt",    "producer"};
  std::string label = "run", out;
  Knobs knobs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(Errc::kInvalidArgument, a + " needs a value");
      return argv[++i];
    };
    if (a == "--frames")
      frames = std::stoi(next());
    else if (a == "--period-us")
      periodUs = std::stoi(next());
    else if (a == "--label")
      label = next();
    else if (a == "--out")
      out = next();
    else if (a == "--paths")
      paths = splitList(next());
    else if (a == "--reader-env") {
      const std::string kv = next();
      if (kv.find('=') == std::string::npos || kv.front() == '=')
        throw Error(Errc::kInvalidArgument, "--reader-env wants KEY=VALUE, got '" + kv + "'");
      knobs.readerEnv.push_back(kv);
    } else if (a == "--reader-sm-percent")
      knobs.readerEnv.push_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + std::to_string(std::stoi(next())));
    else if (a == "--pin")
      knobs.pin = true;
    else if (a == "--read-blocks")
      knobs.readBlocks = static_cast<std::uint32_t>(std::stoul(next()));
    else if (a == "--producer-next-kernel")
      knobs.producerNextKernel = true;
    else if (a == "--commit-after-next")
      knobs.commitAfterNext = true;
    else if (a == "--producer-priority")
      knobs.producerPriority = true;
    else if (a == "--reader-kernel") {
      knobs.readerKernel = next();
      if (knobs.readerKernel != "rows" && knobs.readerKernel != "fused" && knobs.readerKernel != "reduce")
        throw Error(Errc::kInvalidArgument,
                    "--reader-kernel is rows, fused or reduce, not '" + knobs.readerKernel + "'");
    } else if (a == "--reader-timing")
      knobs.readerTiming = true;
    else if (a == "--readers") {
      readerCounts.clear();
      for (const auto& t : splitList(next())) readerCounts.push_back(std::stoi(t));
    } else
      throw Error(Errc::kInvalidArgument, "unknown argument " + a);
  }
  if (knobs.commitAfterNext && !knobs.producerNextKernel)
    throw Error(Errc::kInvalidArgument, "--commit-after-next needs --producer-next-kernel (the kernel it commits after)");
  if (knobs.pin) {
    knobs.cpus = allowedCpus();
    pinThisThread(knobs.cpus.back());  // the producer; reader processes pin themselves before CUDA starts
  }
  const GpuInfo gpu = probeGpu(kDevice);
  if (!gpu.available) {
    std::cerr << "no CUDA device: " << gpu.reason << "\n";
    return 2;
  }
  // Spin while waiting for the GPU (lowest latency); best effort if the context already exists.
  if (cudaSetDeviceFlags(cudaDeviceScheduleSpin) != cudaSuccess) (void)cudaGetLastError();
  checkReaderKernels();
  const MpsStatus mps = detectMps();
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  char tmpl[] = "/tmp/zerohop-share-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) throwErrno("mkdtemp", errno);
  const std::string dir = tmpl;
  std::ostringstream md;
  md << "\n#### " << label << ": " << mps.detail << "\n\n"
     << describe(gpu) << "; CUDA driver API " << driver << ", runtime " << runtime << "; 1920x1080 NV12 ("
     << frameLayout().totalBytes << " bytes), " << frames << " frames per row after 30 warm-up, one every "
     << periodUs << " us, max(" << kSlots << ", readers + 4) slots.\n\n"
     << "Knobs: " << describeKnobs(knobs) << ".\n\n"
     << "| path | readers | samples | p50 us | p99 us | mean us | max us | wake p50 us | wake p99 us | "
        "bytes copied / frame | producer CPU us/frame p50 | producer GPU write us p50 | producer GPU "
        "write+commit us p50 "
        "| producer next kernel us p50 / p99 | next / write p50 | reader launch us p50 | reader kernel us p50 / "
        "p99 | memory | reader SMs |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::printf("%s", md.str().c_str());
  for (std::string path : paths) {
    std::vector<int> counts = readerCounts;
    if (path == "ipc-async" || path == "host-rt") counts = {readerCounts.front()};
    if (const auto at = path.find('@'); at != std::string::npos) {  // "ipc@8", "floor-spin@1+8"
      counts.clear();
      std::istringstream in(path.substr(at + 1));
      for (std::string n; std::getline(in, n, '+');) counts.push_back(std::stoi(n));
      path.resize(at);
    }
    if (path == "producer") counts = {0};
    for (int r : counts) {
      const Result res = runPath(path == "producer" ? "ipc" : path, r, frames, periodUs, dir, knobs);
      char next[64] = "-", ratio[32] = "-", kernel[64] = "-", row[1024];
      if (knobs.readerTiming) std::snprintf(kernel, sizeof kernel, "%.1f / %.1f", res.kernelP50, res.kernelP99);
      if (res.nextP50 >= 0) {
        std::snprintf(next, sizeof next, "%.1f / %.1f", res.nextP50, res.nextP99);
        std::snprintf(ratio, sizeof ratio, "%.2f", res.nextRatioP50);
      }
      std::snprintf(
          row, sizeof row,
          "| %s | %d | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %.1f | %.1f | %.1f | %s | %s "
          "| %.1f | %s | %s | %s |\n",
          res.path.c_str(), res.readers, res.samples, res.p50, res.p99, res.mean, res.max, res.wakeP50,
          res.wakeP99, res.bytesPerFrame, res.pubCpuP50, res.pubWriteP50, res.pubGpuP50, next, ratio,
          res.launchP50, kernel, res.memory.c_str(), res.readerSms.c_str());
      std::printf("%s", row);
      std::fflush(stdout);
      md << row;
    }
  }
  std::filesystem::remove_all(dir);
  if (!out.empty()) {
    std::ofstream f(out, std::ios::app);
    f << md.str();
  }
  return 0;
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  zerohop::log::setLevel(zerohop::log::Level::kWarn);
  try {
    if (argc >= 6 && std::string(argv[1]) == "--reader") return zerohop::runReader(argc, argv);
    return zerohop::runBench(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "zerohop_share_gpu_bench: " << e.what() << "\n";
    return 1;
  }
}
