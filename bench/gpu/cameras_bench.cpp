// zerohop_gpu_cameras_bench: how many MJPEG cameras one GPU decodes into device rings.
//
//   zerohop_gpu_cameras_bench [--cameras 100,150,200,250] [--single 25,50,100] [--seconds 10]
//                             [--size 1920x1080] [--fps 30] [--max-batch 64] [--decoders 1] [--chroma 422|420]
//                             [--device N] [--out FILE]
//
// Each camera is a thread that, at its own phase of the frame period, hands a camera-like JPEG
// (q85 4:2:2, the test camera's picture, in page-locked memory as V4L2 USERPTR capture leaves it;
// 8 pictures in rotation) to one shared JpegBatcher, which decodes what is waiting in one batched
// nvJPEG call into a slot of the camera's own device ring (a zerohop::Publisher, NV12 in VRAM, 4
// slots), then commits the slot with the decoder's ready event, as the GPU path does. No V4L2 here:
// the camera's DMA into that memory costs the CPU nothing, so it is not emulated.
// A camera that is more than one period late skips the frames it missed: they are the drops (a camera
// with two buffers loses them the same way). Every 15th frame of the first and the last camera is read
// back from its ring slot after its ready event and compared byte for byte with the same JPEG decoded
// alone beforehand.
// Rows: --cameras with batches of up to --max-batch frames, then --single with batches of one (one
// frame per nvJPEG call), same JPEGs, same run. Per row: frames/s decoded, drops, hand-in -> enqueued
// latency (decode() return, p50/p99), CPU of the whole process per camera (% of one core: capture
// hand-in, decode submission, commits), GPU memory per camera (rings + decoder, cudaMemGetInfo).
#include <cuda_runtime_api.h>
#include <sys/resource.h>
#include <turbojpeg.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "bench_stats.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/jpeg_batcher.hpp"
#include "jpeg_fixture.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using bench::fmt;
using bench::nowUs;
using bench::pct;
using Clock = std::chrono::steady_clock;

constexpr int kPictures = 8;
constexpr std::uint32_t kRingSlots = 4;
constexpr int kCheckEvery = 15;

struct Options {
  std::vector<int> cameras = {100, 150, 200, 250};
  std::vector<int> single = {25, 50, 100};
  double seconds = 10;
  std::uint32_t width = 1920, height = 1080;
  double fps = 30;
  std::size_t maxBatch = 64;
  int decoders = 1;
  int subsamp = TJSAMP_422;
  int device = 0;
  std::string out;
};

struct Pictures {
  std::vector<PinnedBuffer> buffers;
  std::vector<Frame> frames;
  std::vector<std::vector<std::uint8_t>> nv12;  // each decoded alone: the reference for the checks
};

Pictures makePictures(const Options& o) {
  Pictures p;
  GpuJpegDecoder alone(o.device);
  const ImageLayout layout = computeLayout(PixelFormat::kNV12, o.width, o.height, 256);
  DeviceBuffer dst(o.device, layout.totalBytes);
  for (int k = 0; k < kPictures; ++k) {
    const auto jpeg = testing::compressJpeg(testing::cameraPlanes(o.width, o.height, 100 + k), o.subsamp, 85);
    p.buffers.emplace_back(o.device, jpeg.size());
    std::memcpy(p.buffers.back().data(), jpeg.data(), jpeg.size());
    Frame f;
    f.format = PixelFormat::kMJPEG;
    f.width = o.width;
    f.height = o.height;
    f.memory = MemoryKind::kPinned;
    f.planeCount = 1;
    f.data[0] = p.buffers.back().data();
    f.bytesUsed = f.capacity = jpeg.size();
    p.frames.push_back(f);
    Frame out;
    bindLayout(out, layout, dst.data(), MemoryKind::kDevice);
    const Frame* in[1] = {&p.frames.back()};
    Frame* outs[1] = {&out};
    alone.decodeBatch(in, outs, Completion::kWait);  // one frame per call: the reference
    p.nv12.emplace_back(layout.totalBytes);
    cuda::check(cudaMemcpy(p.nv12.back().data(), dst.data(), layout.totalBytes, cudaMemcpyDeviceToHost), "cudaMemcpy(reference)");
  }
  return p;
}

// The picture's bytes of two frames of `layout` (row padding left out: nobody writes it).
bool samePicture(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, const ImageLayout& layout) {
  for (std::uint32_t p = 0; p < layout.planeCount; ++p) {
    const auto& plane = layout.planes[p];
    for (std::uint32_t y = 0; y < plane.rows; ++y) {
      const std::size_t at = plane.offset + std::size_t{y} * plane.pitch;
      if (std::memcmp(a.data() + at, b.data() + at, plane.widthBytes) != 0) return false;
    }
  }
  return true;
}

struct CameraResult {
  std::uint64_t frames = 0, drops = 0, checked = 0, mismatched = 0, errors = 0;
  std::vector<double> enqueueUs;
  std::string firstError;
};

struct Row {
  int cameras = 0;
  std::size_t maxBatch = 0;
  double seconds = 0, fps = 0, dropPct = 0, p50 = 0, p99 = 0, cpuPctPerCamera = 0, gpuMiBPerCamera = 0, meanBatch = 0;
  std::uint64_t frames = 0, drops = 0, checked = 0, mismatched = 0, errors = 0;
  std::string error;
};

double processCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::size_t freeDeviceBytes() {
  std::size_t freeB = 0, total = 0;
  cuda::check(cudaMemGetInfo(&freeB, &total), "cudaMemGetInfo");
  return freeB;
}

// One camera's loop until `end`: hand in a frame at each due time, skip (and count) the ones missed.
void runCamera(int index, bool check, JpegBatcher& batcher, Publisher& ring, const Pictures& pics,
               const ImageLayout& layout, Clock::time_point start, Clock::time_point end, Clock::duration period,
               CameraResult& r) {
  std::mt19937 rng(static_cast<unsigned>(index) * 7919u + 1);
  auto due = start + std::chrono::nanoseconds(std::uniform_int_distribution<std::int64_t>(
                         0, std::chrono::duration_cast<std::chrono::nanoseconds>(period).count() - 1)(rng));
  std::vector<std::uint8_t> back(check ? layout.totalBytes : 0);
  for (std::uint64_t n = 0; due < end; ++n) {
    const auto now = Clock::now();
    if (now > due + period) {  // late by more than a period: those frames are gone
      const auto missed = static_cast<std::uint64_t>((now - due) / period);
      r.drops += missed;
      due += period * static_cast<std::int64_t>(missed);
    }
    std::this_thread::sleep_until(due);
    const int k = static_cast<int>((n + static_cast<std::uint64_t>(index)) % kPictures);
    const double t0 = nowUs(CLOCK_MONOTONIC);
    try {
      WriteSlot slot = ring.acquireWrite();
      Frame& f = slot.frame();
      Frame in = pics.frames[k];
      in.sequence = n;
      batcher.decode(in, f);
      r.enqueueUs.push_back(nowUs(CLOCK_MONOTONIC) - t0);
      const bool checkThis = check && n % kCheckEvery == 0;
      void* event = f.gpu.readyEvent;
      void* plane = f.data[0];
      ring.commit(std::move(slot), f);
      ++r.frames;
      if (checkThis) {
        // The slot is one of 4 and this camera writes the next only after its next period: read now.
        cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize(check)");
        cuda::check(cudaMemcpy(back.data(), plane, layout.totalBytes, cudaMemcpyDeviceToHost), "cudaMemcpy(check)");
        ++r.checked;
        if (!samePicture(back, pics.nv12[k], layout)) ++r.mismatched;
      }
    } catch (const std::exception& e) {
      if (r.errors++ == 0) r.firstError = e.what();
    }
    due += period;
  }
}

Row runRow(const Options& o, const Pictures& pics, int cameras, std::size_t maxBatch) {
  Row row;
  row.cameras = cameras;
  row.maxBatch = maxBatch;
  try {
    const std::size_t free0 = freeDeviceBytes();
    JpegBatcherOptions bo;
    bo.device = o.device;
    bo.maxBatch = maxBatch;
    bo.decoders = o.decoders;
    JpegBatcher batcher(bo);
    const ImageLayout layout = computeLayout(PixelFormat::kNV12, o.width, o.height, 256);
    std::vector<std::unique_ptr<Publisher>> rings;
    const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(maxBatch) + "-" + std::to_string(cameras);
    for (int c = 0; c < cameras; ++c) {
      rings.push_back(std::make_unique<Publisher>("bench-cam" + std::to_string(c) + "-" + tag,
                                                  SlotLayout::deviceImages(layout, kRingSlots, o.device)));
    }
    // A warm-up decode: the batcher's buffers exist before the clock starts and before the memory is read.
    {
      WriteSlot s = rings[0]->acquireWrite();
      Frame& f = s.frame();
      batcher.decode(pics.frames[0], f);
      cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(f.gpu.readyEvent)), "cudaEventSynchronize(warm-up)");
    }
    row.gpuMiBPerCamera = double(free0 - freeDeviceBytes()) / double(cameras) / (1024.0 * 1024.0);
    const JpegBatcherStats before = batcher.stats();
    const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / o.fps));
    const auto start = Clock::now() + std::chrono::milliseconds(200);
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
    std::vector<CameraResult> results(static_cast<std::size_t>(cameras));
    const double cpu0 = processCpuSeconds();
    const double wall0 = nowUs(CLOCK_MONOTONIC);
    {
      std::vector<std::jthread> threads;
      for (int c = 0; c < cameras; ++c) {
        const bool check = c == 0 || c == cameras - 1;
        threads.emplace_back([&, c, check] {
          runCamera(c, check, batcher, *rings[static_cast<std::size_t>(c)], pics, layout, start, end, period,
                    results[static_cast<std::size_t>(c)]);
        });
      }
    }
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(row)");
    row.seconds = (nowUs(CLOCK_MONOTONIC) - wall0) / 1e6;
    const double cpu = processCpuSeconds() - cpu0;
    std::vector<double> lat;
    for (const CameraResult& r : results) {
      row.frames += r.frames;
      row.drops += r.drops;
      row.checked += r.checked;
      row.mismatched += r.mismatched;
      row.errors += r.errors;
      if (row.error.empty() && !r.firstError.empty()) row.error = r.firstError;
      lat.insert(lat.end(), r.enqueueUs.begin(), r.enqueueUs.end());
    }
    const JpegBatcherStats after = batcher.stats();
    const std::uint64_t calls = after.batches - before.batches;
    row.meanBatch = calls ? double(after.frames - before.frames) / double(calls) : 0;
    row.fps = double(row.frames) / o.seconds;
    row.dropPct = row.frames + row.drops ? 100.0 * double(row.drops) / double(row.frames + row.drops) : 0;
    row.p50 = pct(lat, 50);
    row.p99 = pct(lat, 99);
    row.cpuPctPerCamera = 100.0 * cpu / row.seconds / cameras;
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  return row;
}

std::vector<int> intList(const std::string& text) {
  std::vector<int> v;
  for (const std::string& s : bench::splitList(text)) v.push_back(std::stoi(s));
  return v;
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) try {
  using namespace zerohop;
  Options o;
  for (const auto& [k, v] : bench::keyValueArgs(argc, argv)) {
    if (k == "--cameras") o.cameras = intList(v);
    else if (k == "--single") o.single = v == "0" ? std::vector<int>{} : intList(v);
    else if (k == "--seconds") o.seconds = std::stod(v);
    else if (k == "--size") {
      o.width = static_cast<std::uint32_t>(std::stoul(v));
      o.height = static_cast<std::uint32_t>(std::stoul(v.substr(v.find('x') + 1)));
    } else if (k == "--fps") o.fps = std::stod(v);
    else if (k == "--max-batch") o.maxBatch = std::stoul(v);
    else if (k == "--decoders") o.decoders = std::stoi(v);
    else if (k == "--chroma") o.subsamp = v == "420" ? TJSAMP_420 : TJSAMP_422;
    else if (k == "--device") o.device = std::stoi(v);
    else if (k == "--out") o.out = v;
    else {
      std::cerr << "zerohop_gpu_cameras_bench: unknown option " << k << " (see the top of bench/gpu/cameras_bench.cpp)\n";
      return 2;
    }
  }
  log::setLevel(log::Level::kWarn);
  const JpegSupport js = probeJpeg(o.device);
  if (!js.available) {
    std::cerr << "zerohop_gpu_cameras_bench: nvJPEG not usable: " << js.reason << "\n";
    return 1;
  }
  const Pictures pics = makePictures(o);
  std::ostringstream report;
  report << "### MJPEG cameras into device rings, one GPU (" << o.width << "x" << o.height << "@" << o.fps
         << ", q85 " << (o.subsamp == TJSAMP_420 ? "4:2:0" : "4:2:2") << ", " << o.decoders << " decoder"
         << (o.decoders > 1 ? "s" : "") << ", " << o.seconds << " s a row)\n\n"
         << "nvJPEG " << js.libraryVersion << (js.hardware ? ", hardware engines: " + js.hardwareReason : ", no hardware engines")
         << "\n\n| cameras | frames per call (max / mean) | decoded frames/s | dropped | hand-in -> enqueued p50 / p99 ms "
            "| CPU per camera (% of a core) | GPU MiB per camera | checked (mismatched) |\n|---|---|---|---|---|---|---|---|\n";
  int bestBatched = 0, bestSingle = 0;
  auto run = [&](int n, std::size_t maxBatch) {
    const Row r = runRow(o, pics, n, maxBatch);
    report << "| " << n << " | " << maxBatch << " / " << fmt(r.meanBatch) << " | " << fmt(r.fps) << " | " << r.drops << " ("
           << (r.dropPct < 0.01 ? std::string(r.drops ? "<0.01" : "0") : fmt(r.dropPct)) << " %) | " << fmt(r.p50 / 1000) << " / "
           << fmt(r.p99 / 1000) << " | " << fmt(r.cpuPctPerCamera) << " | " << fmt(r.gpuMiBPerCamera) << " | " << r.checked
           << " (" << r.mismatched << ") |";
    if (!r.error.empty()) report << " " << r.errors << " errors, first: " << r.error;
    report << "\n";
    std::cout << "  " << n << " cameras, batches of up to " << maxBatch << ": " << fmt(r.fps) << " frames/s, drops "
              << fmt(r.dropPct) << " %, errors " << r.errors << "\n"
              << std::flush;
    const bool ok = r.error.empty() && r.mismatched == 0 && r.checked > 0 && r.dropPct <= 0.1;
    return ok;
  };
  for (int n : o.cameras)
    if (run(n, o.maxBatch)) bestBatched = std::max(bestBatched, n);
  for (int n : o.single)
    if (run(n, 1)) bestSingle = std::max(bestSingle, n);
  report << "\nLargest row with <= 0.1 % dropped and every checked frame byte-exact: " << bestBatched
         << " cameras batched";
  if (!o.single.empty()) report << ", " << bestSingle << " with one frame per call";
  report << ".\n";
  std::cout << "\n" << report.str();
  if (!o.out.empty()) std::ofstream(o.out) << report.str();
  return 0;
} catch (const std::exception& e) {
  std::cerr << "zerohop_gpu_cameras_bench: " << e.what() << "\n";
  return 1;
}
