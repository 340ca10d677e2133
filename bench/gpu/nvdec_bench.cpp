// zerohop_nvdec_bench: how long one H.264 access unit takes to become an NV12 frame in VRAM on
// NVDEC, and how many frames/s the decoders give.
//
//   zerohop_nvdec_bench [--clip FILE.h264] [--frames N] [--sessions 1,4] [--device N] [--out FILE]
//
// Input: a committed clip (default tests/gpu/data/nvdec_high_1920x1080.h264: 1080p high profile,
// no B-frames, 30 pictures), split into access units and replayed in a loop (it starts with an IDR).
//  latency     one decoder; per unit: host clock from decode() to the frame's ready event seen
//              complete by the host (cudaEventSynchronize): parse + NVDEC decode + map + copy into
//              the pool frame. Also the host CPU time of the decode() call itself.
//  throughput  K decoders on K threads (one per session, as K cameras would be), each decoding
//              back to back into a ring of 3 frames, waiting only at the end; frames/s in total.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_stats.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/nvdec_access_units.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_decode.hpp"

#ifndef ZEROHOP_NVDEC_BENCH_CLIP
#define ZEROHOP_NVDEC_BENCH_CLIP ""
#endif

namespace zerohop {
namespace {

using Units = std::vector<std::vector<std::uint8_t>>;

std::vector<FrameLease> takeAll(BufferPool& pool) {
  std::vector<FrameLease> frames;
  while (auto lease = pool.tryAcquire()) frames.push_back(std::move(*lease));
  return frames;
}

struct Latency {
  std::vector<double> wallUs, cpuUs;
  std::uint32_t width = 0, height = 0;
};

// Feeds the first unit with a 16x16 frame: the decoder refuses it, keeps the picture queued and
// now knows the stream's size. Returns the pool for that size; the caller collects the picture.
BufferPool poolForStream(GpuH264Decoder& dec, const Units& units, int device) {
  BufferPool tiny(computeLayout(PixelFormat::kNV12, 16, 16, 256), 1, makeDeviceAllocator(device));
  FrameLease probe = std::move(*tiny.tryAcquire());
  try {
    if (dec.decode(units[0].data(), units[0].size(), probe.frame())) return tiny;  // a 16x16 stream
  } catch (const Error&) {
    if (dec.width() == 0) throw;
  }
  return BufferPool(computeLayout(PixelFormat::kNV12, dec.width(), dec.height(), 256), 3, makeDeviceAllocator(device));
}

Latency measureLatency(const Units& units, int device, int frames) {
  GpuH264Decoder dec(device);
  BufferPool pool = poolForStream(dec, units, device);
  std::vector<FrameLease> ring = takeAll(pool);
  if (!dec.decode(nullptr, 0, ring[0].frame())) throw Error(Errc::kInternal, "nvdec_bench: the first picture was lost");
  Latency lat;
  const int warmup = static_cast<int>(units.size()) - 1;  // the rest of the first pass
  for (int i = 0; i < warmup + frames; ++i) {
    const auto& unit = units[static_cast<std::size_t>(i + 1) % units.size()];
    Frame& dst = ring[static_cast<std::size_t>(i) % ring.size()].frame();
    const double t0 = bench::nowUs(CLOCK_MONOTONIC), c0 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    const bool produced = dec.decode(unit.data(), unit.size(), dst);
    const double c1 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    if (!produced) throw Error(Errc::kInternal, "nvdec_bench: unit " + std::to_string(i) + " gave no frame");
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(dst.gpu.readyEvent)), "cudaEventSynchronize");
    const double t1 = bench::nowUs(CLOCK_MONOTONIC);
    if (i >= warmup) {
      lat.wallUs.push_back(t1 - t0);
      lat.cpuUs.push_back(c1 - c0);
    }
  }
  lat.width = dec.width();
  lat.height = dec.height();
  return lat;
}

// K sessions on K threads, `frames` units each; returns frames/s over all of them.
double measureThroughput(const Units& units, int device, int sessions, int frames, std::uint32_t w, std::uint32_t h) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(sessions));
  const double t0 = bench::nowUs(CLOCK_MONOTONIC);
  for (int s = 0; s < sessions; ++s) {
    threads.emplace_back([&, s] {
      try {
        cuda::check(cudaSetDevice(device), "cudaSetDevice");
        GpuH264Decoder dec(device);
        BufferPool pool(computeLayout(PixelFormat::kNV12, w, h, 256), 3, makeDeviceAllocator(device));
        std::vector<FrameLease> ring = takeAll(pool);
        for (int i = 0; i < frames; ++i) {
          Frame& dst = ring[static_cast<std::size_t>(i) % ring.size()].frame();
          const auto& unit = units[static_cast<std::size_t>(i) % units.size()];
          if (!dec.decode(unit.data(), unit.size(), dst)) throw Error(Errc::kInternal, "a unit gave no frame");
        }
        cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(dec.stream())), "cudaStreamSynchronize");
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(s)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  const double t1 = bench::nowUs(CLOCK_MONOTONIC);
  for (const auto& e : errors) {
    if (!e.empty()) throw Error(Errc::kDevice, "nvdec_bench session: " + e);
  }
  return static_cast<double>(sessions) * frames / ((t1 - t0) / 1e6);
}

std::string fixed(double v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

struct Options {
  std::string clip = ZEROHOP_NVDEC_BENCH_CLIP;
  int frames = 600;
  std::vector<int> sessions = {1, 4};
  int device = 0;
  std::string out;
};

int run(const Options& opt) {
  const GpuInfo gpu = probeGpu(opt.device);
  const NvdecInfo nvdec = probeNvdec(opt.device);
  std::printf("gpu: %s\nnvdec: %s\n", describe(gpu).c_str(), describe(nvdec).c_str());
  if (!gpu.available || !nvdec.available) return 2;
  std::ifstream in(opt.clip, std::ios::binary);
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const Units units = nvdec::splitAccessUnits(bytes.data(), bytes.size());
  if (units.empty()) {
    std::fprintf(stderr, "zerohop_nvdec_bench: no access units in '%s'\n", opt.clip.c_str());
    return 1;
  }
  cuda::check(cudaSetDevice(opt.device), "cudaSetDevice");
  const Latency lat = measureLatency(units, opt.device, opt.frames);

  std::ostringstream r;
  r << "## NVDEC H.264 decode into NV12 in VRAM\n\n";
  r << "Device: " << describe(gpu) << "; NVDEC: " << describe(nvdec) << "\n";
  r << "Clip: " << opt.clip.substr(opt.clip.find_last_of('/') + 1) << " (" << lat.width << "x" << lat.height << ", "
    << units.size() << " access units, " << bytes.size() / 1024 << " KiB, replayed in a loop)\n\n";
  r << "| measure | p50 | p99 | max | mean |\n|---|---|---|---|---|\n";
  double meanWall = 0, meanCpu = 0;
  for (double v : lat.wallUs) meanWall += v / static_cast<double>(lat.wallUs.size());
  for (double v : lat.cpuUs) meanCpu += v / static_cast<double>(lat.cpuUs.size());
  r << "| unit in -> NV12 frame ready (host clock, us) | " << fixed(bench::pct(lat.wallUs, 50), 0) << " | "
    << fixed(bench::pct(lat.wallUs, 99), 0) << " | " << fixed(bench::pct(lat.wallUs, 100), 0) << " | "
    << fixed(meanWall, 0) << " |\n";
  r << "| host CPU of decode() (us) | " << fixed(bench::pct(lat.cpuUs, 50), 0) << " | "
    << fixed(bench::pct(lat.cpuUs, 99), 0) << " | " << fixed(bench::pct(lat.cpuUs, 100), 0) << " | "
    << fixed(meanCpu, 0) << " |\n\n";
  r << "Latency over " << lat.wallUs.size() << " units after one pass of warm-up.\n\n";
  r << "| sessions (threads, one decoder each) | frames/s total | frames/s per session |\n|---|---|---|\n";
  for (int s : opt.sessions) {
    const double fps = measureThroughput(units, opt.device, s, opt.frames, lat.width, lat.height);
    r << "| " << s << " | " << fixed(fps, 0) << " | " << fixed(fps / s, 0) << " |\n";
  }
  return bench::publishReport(r.str(), opt.out, "zerohop_nvdec_bench") ? 0 : 1;
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  zerohop::Options opt;
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); i += 2) {
    const std::string& key = args[i];
    const std::string value = i + 1 < args.size() ? args[i + 1] : "";
    if (key == "--clip") opt.clip = value;
    else if (key == "--frames") opt.frames = std::max(1, std::atoi(value.c_str()));
    else if (key == "--device") opt.device = std::atoi(value.c_str());
    else if (key == "--out") opt.out = value;
    else if (key == "--sessions") {
      opt.sessions.clear();
      std::stringstream list(value);
      for (std::string n; std::getline(list, n, ',');) opt.sessions.push_back(std::max(1, std::atoi(n.c_str())));
    } else {
      std::fprintf(stderr, "usage: zerohop_nvdec_bench [--clip FILE.h264] [--frames N] [--sessions 1,4] "
                           "[--device N] [--out FILE]\n");
      return 1;
    }
  }
  try {
    return zerohop::run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerohop_nvdec_bench: %s\n", e.what());
    return 1;
  }
}
