// zerohop_share_gpu_bench: what handing a 1080p NV12 frame to other processes on the same GPU costs.
//
//   publish -> reader-has-used-the-frame latency = from the publisher's commit (CLOCK_MONOTONIC,
//   carried in the frame's StageTimes) to the moment a reader process has run one kernel that reads
//   every byte of the frame and seen it complete (cudaStreamSynchronize with spin scheduling).
//
// Paths, each with 1 and 4 reader processes:
//   ipc-ready   device ring (CUDA IPC): the publisher's write kernel has finished before commit, so
//               the number is the hand-off itself (wake-up + cudaStreamWaitEvent + context switch + kernel)
//   ipc-async   device ring, commit right after enqueueing the write (what a pipeline does): the
//               reader's GPU waits on the slot's interprocess event; includes the rest of the write
//   host-rt     the host round trip a program does without device sharing: publisher D2H into the
//               host ring's slot (memfd, page-locked with cudaHostRegister when allowed), reader H2D
//               into its own device buffer, then the same kernel; clock starts before the D2H
//   *-spin      the same, but readers spin on Subscriber::latest() instead of sleeping in next()
//               (futex): separates the host wake-up from the GPU hand-off (the brief's method)
//
// Usage: zerohop_share_gpu_bench [--frames N] [--period-us P] [--readers 1,4] [--label TEXT] [--out FILE]
//        (internal) zerohop_share_gpu_bench --reader NAME DIR PATH WARMUP
// Appends a markdown table to --out. Exit status: 0 ok, 1 failure, 2 no GPU.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_kernels.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "core/unique_fd.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

extern char** environ;

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using bench::PlaneView;

constexpr int kDevice = 0;
constexpr std::uint32_t kSlots = 6;

ImageLayout frameLayout() {
  return computeLayout(PixelFormat::kNV12, 1920, 1080, 256);
}

std::array<PlaneView, kMaxPlanes> viewsOf(const Frame& f, const ImageLayout& l) {
  std::array<PlaneView, kMaxPlanes> v{};
  for (std::uint32_t p = 0; p < l.planeCount; ++p)
    v[p] = PlaneView{f.data[p], f.pitch[p], l.planes[p].widthBytes, l.planes[p].rows};
  return v;
}

/// Page-locks host memory once (register at start-up, never per frame); best effort.
class Registration {
 public:
  Registration(void* p, std::size_t bytes, unsigned flags) {
    if (cudaHostRegister(p, bytes, flags) == cudaSuccess) {
      ptr_ = p;
    } else {
      (void)cudaGetLastError();
    }
  }
  ~Registration() {
    if (ptr_) cuda::logIfFailed(cudaHostUnregister(ptr_), "cudaHostUnregister");
  }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
  bool ok() const { return ptr_ != nullptr; }

 private:
  void* ptr_ = nullptr;
};

// ---- reader process ----------------------------------------------------------------------------

int runReader(const std::string& name, const std::string& dir, const std::string& path,
              std::uint64_t warmup) {
  cuda::check(cudaSetDeviceFlags(cudaDeviceScheduleSpin), "cudaSetDeviceFlags(spin)");
  cuda::check(cudaSetDevice(kDevice), "cudaSetDevice");
  SubscribeOptions o;
  o.directory = dir;
  Subscriber sub(name, o);
  const ImageLayout l = frameLayout();
  CudaStream stream(kDevice);
  DeviceBuffer sum(kDevice, sizeof(unsigned long long));
  DeviceBuffer own(kDevice, l.totalBytes);  // host-rt: where the H2D copy lands
  Frame ownFrame;
  bindLayout(ownFrame, l, own.data(), MemoryKind::kDevice);
  std::vector<std::unique_ptr<Registration>> registered;
  std::vector<const std::uint8_t*> seenSlots;
  bool pinned = true;
  // Warm the context and the kernel before the first measured frame.
  {
    const auto v = viewsOf(ownFrame, l);
    bench::launchReadFrame(v.data(), l.planeCount, reinterpret_cast<unsigned long long*>(sum.data()),
                           stream.get());
    stream.synchronize();
  }
  std::cout << "ready" << std::endl;
  std::vector<std::int64_t> total, wake;
  const bool spin = path.size() > 5 && path.compare(path.size() - 5, 5, "-spin") == 0;
  const std::string base = spin ? path.substr(0, path.size() - 5) : path;
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
          pinned = pinned && registered.back()->ok();
        }
        for (std::uint32_t p = 0; p < l.planeCount; ++p) {
          cuda::check(cudaMemcpy2DAsync(ownFrame.data[p], ownFrame.pitch[p], fr.data[p], fr.pitch[p],
                                        l.planes[p].widthBytes, l.planes[p].rows, cudaMemcpyHostToDevice,
                                        stream.get()),
                      "cudaMemcpy2DAsync(H2D)");
        }
        use = ownFrame;
      } else {
        cuda::check(cudaStreamWaitEvent(stream.get(), static_cast<cudaEvent_t>(fr.gpu.readyEvent), 0),
                    "cudaStreamWaitEvent(readyEvent)");
      }
      const auto v = viewsOf(use, l);
      bench::launchReadFrame(v.data(), l.planeCount, reinterpret_cast<unsigned long long*>(sum.data()),
                             stream.get());
      stream.synchronize();
      const std::int64_t done = monotonicNs();
      const std::int64_t t0 = fr.times.at(Stage::kCapture);
      if (fr.sequence > warmup && f->valid()) {
        total.push_back(done - t0);
        wake.push_back(woke - t0);
      }
    }
  } catch (const Error& e) {
    if (e.code() != Errc::kUnavailable) throw;  // the publisher closing ends the run
  }
  std::ostringstream line;
  line << "samples " << (pinned ? "pinned" : "pageable") << " " << total.size();
  for (std::size_t i = 0; i < total.size(); ++i) line << " " << total[i] << ":" << wake[i];
  std::cout << line.str() << std::endl;
  return 0;
}

// ---- orchestrator ----------------------------------------------------------------------------

class ReaderProcess {
 public:
  explicit ReaderProcess(const std::vector<std::string>& argv) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throwErrno("pipe2", errno);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, "/proc/self/exe", &fa, nullptr, args.data(), environ);
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
  double p50 = 0, p99 = 0, mean = 0, wakeP50 = 0, max = 0;
  std::string memory;
};

double percentile(std::vector<std::int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[std::min(v.size() - 1, static_cast<std::size_t>(q * (v.size() - 1) + 0.5))]) /
         1000.0;
}

Result runPath(const std::string& path, int readers, int frames, int periodUs, const std::string& dir) {
  const ImageLayout l = frameLayout();
  const std::string name = "bench-" + path + "-" + std::to_string(readers);
  const std::uint64_t warmup = 30;
  ShareOptions o;
  o.directory = dir;
  const bool spin = path.size() > 5 && path.compare(path.size() - 5, 5, "-spin") == 0;
  const std::string base = spin ? path.substr(0, path.size() - 5) : path;
  const bool device = base != "host-rt";
  auto pub = std::make_unique<Publisher>(
      name, device ? SlotLayout::deviceImages(l, kSlots, kDevice) : SlotLayout::images(l, kSlots), o);
  std::vector<std::unique_ptr<ReaderProcess>> procs;
  for (int r = 0; r < readers; ++r) {
    procs.push_back(std::make_unique<ReaderProcess>(std::vector<std::string>{
        "zerohop_share_gpu_bench", "--reader", name, dir, path, std::to_string(warmup)}));
  }
  for (auto& p : procs) {
    const auto line = p->readLine(60s);
    if (line != "ready") throw Error(Errc::kInternal, "reader: " + line);
  }
  while (pub->stats().readersConnected < static_cast<std::uint32_t>(readers))
    std::this_thread::sleep_for(1ms);

  CudaStream stream(kDevice);
  DeviceBuffer source(kDevice, l.totalBytes);  // host-rt: the frame the publisher has in VRAM
  Frame src;
  bindLayout(src, l, source.data(), MemoryKind::kDevice);
  std::vector<std::unique_ptr<Registration>> registered;
  std::vector<const std::uint8_t*> seenSlots;
  bool pinned = true;
  for (std::uint64_t seq = 1; seq <= warmup + static_cast<std::uint64_t>(frames); ++seq) {
    WriteSlot ws = pub->acquireWrite();
    Frame meta;
    meta.sequence = seq;
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
      stream.synchronize();
      pub->commit(std::move(ws), meta);
    } else {
      const auto v = viewsOf(ws.frame(), l);
      bench::launchWriteFrame(v.data(), l.planeCount, seq, stream.get());
      if (base == "ipc-ready") stream.synchronize();
      meta.times.mark(Stage::kCapture, monotonicNs());
      pub->commit(std::move(ws), meta, stream.get());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(periodUs));
  }
  stream.synchronize();
  pub.reset();  // readers see the ring close, report and let go (device: the publisher waits for that)

  Result res;
  res.path = path;
  res.readers = readers;
  std::vector<std::int64_t> total, wake;
  std::string memory = device ? "device (CUDA IPC)" : (pinned ? "pinned" : "pageable");
  for (auto& p : procs) {
    std::istringstream in(p->readLine(30s));
    std::string tag, mem;
    std::size_t n = 0;
    in >> tag >> mem >> n;
    if (tag != "samples") throw Error(Errc::kInternal, "reader answered '" + tag + "'");
    if (!device && mem == "pageable")
      memory = "publisher " + std::string(pinned ? "pinned" : "pageable") + ", reader pageable";
    for (std::size_t i = 0; i < n; ++i) {
      std::string s;
      in >> s;
      const auto colon = s.find(':');
      total.push_back(std::stoll(s.substr(0, colon)));
      wake.push_back(std::stoll(s.substr(colon + 1)));
    }
    if (p->wait() != 0) throw Error(Errc::kInternal, "a reader process failed");
  }
  res.samples = total.size();
  res.p50 = percentile(total, 0.50);
  res.p99 = percentile(total, 0.99);
  res.max = percentile(total, 1.0);
  res.wakeP50 = percentile(wake, 0.50);
  double sum = 0;
  for (auto t : total) sum += static_cast<double>(t);
  res.mean = total.empty() ? 0 : sum / static_cast<double>(total.size()) / 1000.0;
  res.memory = memory;
  return res;
}

int runBench(int argc, char** argv) {
  int frames = 300, periodUs = 4000;
  std::vector<int> readerCounts{1, 4};
  std::string label = "run", out;
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
    else if (a == "--readers") {
      readerCounts.clear();
      std::istringstream in(next());
      std::string t;
      while (std::getline(in, t, ',')) readerCounts.push_back(std::stoi(t));
    } else
      throw Error(Errc::kInvalidArgument, "unknown argument " + a);
  }
  const GpuInfo gpu = probeGpu(kDevice);
  if (!gpu.available) {
    std::cerr << "no CUDA device: " << gpu.reason << "\n";
    return 2;
  }
  // Spin while waiting for the GPU (lowest latency); best effort if the context already exists.
  if (cudaSetDeviceFlags(cudaDeviceScheduleSpin) != cudaSuccess) (void)cudaGetLastError();
  const MpsStatus mps = detectMps();
  char tmpl[] = "/tmp/zerohop-share-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) throwErrno("mkdtemp", errno);
  const std::string dir = tmpl;
  std::ostringstream md;
  md << "\n#### " << label << ": " << mps.detail << "\n\n"
     << describe(gpu) << "; 1920x1080 NV12 (" << frameLayout().totalBytes << " bytes), " << frames
     << " frames per row after 30 warm-up, one every " << periodUs << " us, " << kSlots << " slots.\n\n"
     << "| path | readers | samples | p50 us | p99 us | mean us | max us | wake-up p50 us | memory |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  std::printf("%s", md.str().c_str());
  for (const std::string path : {"ipc-ready", "ipc-async", "host-rt", "ipc-ready-spin", "host-rt-spin"}) {
    for (int r : readerCounts) {
      const Result res = runPath(path, r, frames, periodUs, dir);
      char row[512];
      std::snprintf(row, sizeof row, "| %s | %d | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %s |\n",
                    res.path.c_str(), res.readers, res.samples, res.p50, res.p99, res.mean, res.max,
                    res.wakeP50, res.memory.c_str());
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
    if (argc == 6 && std::string(argv[1]) == "--reader") {
      return zerohop::runReader(argv[2], argv[3], argv[4], std::stoull(argv[5]));
    }
    return zerohop::runBench(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "zerohop_share_gpu_bench: " << e.what() << "\n";
    return 1;
  }
}
