// zerohop_gpu_jpeg_bench: camera MJPEG (q85, camera-like, 4:2:2 and 4:2:0) to NV12 in VRAM.
//
//   zerohop_gpu_jpeg_bench [--iterations N] [--sizes 720p,1080p,4k] [--batch 32] [--device N] [--out FILE]
//                          [--backends hardware,gpu-hybrid,hybrid,default] [--cpu 1] [--strips 2,4,7]
//
// Single frame, each path on its own, frame by frame (8 different frames in rotation):
//   nvJPEG <backend>   GpuJpegDecoder::decode() of a JPEG in pinned memory, then a host wait for the
//                      frame's ready event. Latency = host clock from the call to the event seen done.
//   libjpeg-turbo      tjDecompressToYUVPlanes into pinned planes (one CPU thread), one cudaMemcpyAsync
//                      per plane, the same chroma kernel (4:2:2 -> 4:2:0 NV12), wait. The CPU path.
// CPU = CLOCK_THREAD_CPUTIME_ID of the decode() call alone (what a pipeline thread spends; the
// consumer waits on the GPU) and, for libjpeg-turbo, of decode + upload enqueue.
// Streamed: the same frames decoded back to back without waiting (the decoupled API overlaps the
// host phase of frame N+1 with the device phase of frame N), frames/s.
// Restart strips (hardware backend): the same pictures encoded with a restart marker every MCU row
// (TJ_RESTART=1, as many UVC cameras and the emulated camera do), decoded whole (strips 1) and cut
// into K = --strips strips that several engines decode at once (GpuJpegDecoder::setRestartStrips).
// Batched: GpuJpegDecoder::decodeBatch() of --batch 1080p frames, frames/s and the number of 30 fps
// cameras that implies. --backends / --cpu 0 leave rows out (a shorter run).
#include <cuda_runtime_api.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/jpeg_chroma.hpp"
#include "jpeg_fixture.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_jpeg.hpp"

namespace zerohop {
namespace {

using bench::fmt;
using bench::nowUs;
using bench::pct;

constexpr int kFrames = 8;  // distinct frames in rotation

struct Options {
  int iterations = 200;
  int batch = 32;
  int device = 0;
  std::vector<std::string> sizes = {"720p", "1080p", "4k"};
  std::vector<std::string> backends = {"hardware", "gpu-hybrid", "hybrid", "default"};
  bool cpu = true;
  std::vector<int> strips = {2, 4, 7};
  std::string out;
};

struct Result {
  std::vector<double> wall, cpu;
  std::string error;
};

// JPEGs of the test camera's picture in page-locked memory, as the capture stage hands them over.
struct JpegSet {
  std::vector<PinnedBuffer> buffers;
  std::vector<Frame> frames;
  std::size_t meanBytes = 0;
};

// restartRows > 0: a restart marker every that many MCU rows (libjpeg-turbo 2.x's TJ_RESTART switch).
JpegSet makeJpegs(std::uint32_t w, std::uint32_t h, int subsamp, int device, int restartRows = 0) {
  JpegSet set;
  if (restartRows > 0) setenv("TJ_RESTART", std::to_string(restartRows).c_str(), 1);
  for (int k = 0; k < kFrames; ++k) {
    const auto jpeg = testing::compressJpeg(testing::cameraPlanes(w, h, 100 + k), subsamp, 85);
    set.buffers.emplace_back(device, jpeg.size());
    std::copy(jpeg.begin(), jpeg.end(), set.buffers.back().data());
    Frame f;
    f.format = PixelFormat::kMJPEG;
    f.width = w;
    f.height = h;
    f.memory = MemoryKind::kPinned;
    f.planeCount = 1;
    f.data[0] = set.buffers.back().data();
    f.bytesUsed = f.capacity = jpeg.size();
    f.sequence = static_cast<std::uint64_t>(k);
    set.frames.push_back(f);
    set.meanBytes += jpeg.size() / kFrames;
  }
  unsetenv("TJ_RESTART");
  return set;
}

Result runNvjpeg(GpuJpegDecoder& dec, const JpegSet& in, std::vector<FrameLease>& dst, int iterations) {
  Result r;
  for (int i = -10; i < iterations; ++i) {  // 10 warm-up frames
    const int k = (i + 10) % kFrames;
    Frame& out = dst[static_cast<std::size_t>(k) % dst.size()].frame();
    const double t0 = nowUs(CLOCK_MONOTONIC);
    const double c0 = nowUs(CLOCK_THREAD_CPUTIME_ID);
    dec.decode(in.frames[k], out);
    const double c1 = nowUs(CLOCK_THREAD_CPUTIME_ID);
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(out.gpu.readyEvent)), "cudaEventSynchronize");
    const double t1 = nowUs(CLOCK_MONOTONIC);
    if (i >= 0) {
      r.wall.push_back(t1 - t0);
      r.cpu.push_back(c1 - c0);
    }
  }
  return r;
}

// The CPU path: libjpeg-turbo into pinned planes, upload, the same chroma kernel, wait.
Result runTurbo(const JpegSet& in, std::vector<FrameLease>& dst, std::uint32_t w, std::uint32_t h, int subsamp,
                int device, int iterations) {
  Result r;
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  const int cw = tjPlaneWidth(1, static_cast<int>(w), subsamp), ch = tjPlaneHeight(1, static_cast<int>(h), subsamp);
  const std::size_t ySize = std::size_t(w) * h, cSize = std::size_t(cw) * ch;
  PinnedBuffer planes(device, ySize + 2 * cSize);
  DeviceBuffer chroma(device, 2 * cSize);
  CudaStream stream(device);
  CudaEvent done(device, false);
  for (int i = -10; i < iterations; ++i) {
    const int k = (i + 10) % kFrames;
    Frame& out = dst[static_cast<std::size_t>(k) % dst.size()].frame();
    const double t0 = nowUs(CLOCK_MONOTONIC);
    const double c0 = nowUs(CLOCK_THREAD_CPUTIME_ID);
    unsigned char* p[3] = {planes.data(), planes.data() + ySize, planes.data() + ySize + cSize};
    int strides[3] = {static_cast<int>(w), cw, cw};
    if (tjDecompressToYUVPlanes(tj.get(), in.frames[k].data[0], in.frames[k].bytesUsed, p, static_cast<int>(w),
                                strides, static_cast<int>(h), 0) != 0) {
      r.error = std::string("tjDecompressToYUVPlanes: ") + tjGetErrorStr2(tj.get());
      return r;
    }
    cuda::check(cudaMemcpy2DAsync(out.data[0], out.pitch[0], p[0], w, w, h, cudaMemcpyHostToDevice, stream.get()),
                "cudaMemcpy2DAsync(Y)");
    cuda::check(cudaMemcpyAsync(chroma.data(), p[1], 2 * cSize, cudaMemcpyHostToDevice, stream.get()),
                "cudaMemcpyAsync(CbCr)");
    kernels::JpegChromaIn cin;
    cin.cb = chroma.data();
    cin.cr = chroma.data() + cSize;
    cin.pitch = static_cast<std::uint32_t>(cw);
    cin.sx = static_cast<std::uint32_t>(cw) / (w / 2);
    cin.sy = static_cast<std::uint32_t>(ch) / (h / 2);
    kernels::PlanesOut po;
    po.data[0] = out.data[0];
    po.data[1] = out.data[1];
    po.pitch[0] = out.pitch[0];
    po.pitch[1] = out.pitch[1];
    kernels::jpegChromaTo420(cin, kernels::Out420::kNV12, po, w, h, stream.get());
    done.record(stream.get());
    const double c1 = nowUs(CLOCK_THREAD_CPUTIME_ID);
    done.synchronize();
    const double t1 = nowUs(CLOCK_MONOTONIC);
    if (i >= 0) {
      r.wall.push_back(t1 - t0);
      r.cpu.push_back(c1 - c0);
    }
  }
  return r;
}

// Back to back without waiting: frames/s of one decoder on one thread.
double streamedFps(GpuJpegDecoder& dec, const JpegSet& in, std::vector<FrameLease>& dst, int frames) {
  for (int i = 0; i < kFrames; ++i) dec.decode(in.frames[i], dst[i % dst.size()].frame());
  cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(dec.stream())), "cudaStreamSynchronize");
  const double t0 = nowUs(CLOCK_MONOTONIC);
  for (int i = 0; i < frames; ++i) dec.decode(in.frames[i % kFrames], dst[i % dst.size()].frame());
  cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(dec.stream())), "cudaStreamSynchronize");
  return frames / ((nowUs(CLOCK_MONOTONIC) - t0) / 1e6);
}

struct BatchResult {
  double fps = 0, cpuPerFrameUs = 0;
  std::string error;
};

BatchResult batchedFps(GpuJpegDecoder& dec, const JpegSet& in, std::vector<FrameLease>& dst, int batch, int rounds) {
  BatchResult r;
  std::vector<const Frame*> src;
  std::vector<Frame*> out;
  for (int i = 0; i < batch; ++i) {
    src.push_back(&in.frames[i % kFrames]);
    out.push_back(&dst[i % dst.size()].frame());
  }
  try {
    dec.decodeBatch(src, out);  // warm-up (allocations)
    cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(dec.stream())), "cudaStreamSynchronize");
    const double t0 = nowUs(CLOCK_MONOTONIC);
    const double c0 = nowUs(CLOCK_THREAD_CPUTIME_ID);
    for (int k = 0; k < rounds; ++k) dec.decodeBatch(src, out);
    cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(dec.stream())), "cudaStreamSynchronize");
    const double c1 = nowUs(CLOCK_THREAD_CPUTIME_ID);
    const double t1 = nowUs(CLOCK_MONOTONIC);
    r.fps = double(batch) * rounds / ((t1 - t0) / 1e6);
    r.cpuPerFrameUs = (c1 - c0) / (double(batch) * rounds);
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

const JpegBackend kBackends[] = {JpegBackend::kHardware, JpegBackend::kGpuHybrid, JpegBackend::kHybrid,
                                 JpegBackend::kDefault};

bool wanted(const Options& opt, JpegBackend b) {
  return std::find(opt.backends.begin(), opt.backends.end(), jpegBackendName(b)) != opt.backends.end();
}

std::string row(const std::string& label, const Result& r) {
  if (!r.error.empty()) return "| " + label + " | failed: " + r.error + " | | | |\n";
  return "| " + label + " | " + fmt(pct(r.wall, 50)) + " | " + fmt(pct(r.wall, 99)) + " | " + fmt(pct(r.cpu, 50)) +
         " | " + fmt(pct(r.cpu, 50) / 33333.0 * 100.0) + " % |\n";
}

int run(const Options& opt) {
  const GpuInfo info = probeGpu(opt.device);
  if (!info.available) {
    std::fprintf(stderr, "zerohop_gpu_jpeg_bench: %s\n", describe(info).c_str());
    return 2;
  }
  const JpegSupport support = probeJpeg(info.device);
  if (!support.available) {
    std::fprintf(stderr, "zerohop_gpu_jpeg_bench: nvJPEG unavailable: %s\n", support.reason.c_str());
    return 2;
  }
  cuda::check(cudaSetDevice(info.device), "cudaSetDevice");
  std::ostringstream report;
  report << "## MJPEG to NV12 in VRAM: nvJPEG backends vs libjpeg-turbo + pinned upload\n\n"
         << "Device: " << describe(info) << "; nvJPEG " << support.libraryVersion << ", hardware decoder: "
         << (support.hardware ? "yes, " : "no, ") << support.hardwareReason << "\n\n"
         << "Camera-like frames (the test camera's picture), q85, " << kFrames << " distinct frames in rotation, "
         << opt.iterations << " frames per row after 10 warm-up frames. Latency = host clock from the decode "
            "call to the frame's ready event seen complete. CPU = thread CPU time of the decode call (libjpeg-turbo: "
            "decode + upload enqueue); % of a core at 30 fps = CPU / 33.3 ms.\n";

  std::map<std::string, double> medians;  // "1080p 422 hardware" -> us
  for (const auto& name : opt.sizes) {
    std::uint32_t w = 0, h = 0;
    if (name == "720p") w = 1280, h = 720;
    else if (name == "1080p") w = 1920, h = 1080;
    else if (name == "4k") w = 3840, h = 2160;
    else {
      std::fprintf(stderr, "unknown size %s\n", name.c_str());
      return 1;
    }
    BufferPool pool(computeLayout(PixelFormat::kNV12, w, h, 256), 4, makeDeviceAllocator(info.device));
    std::vector<FrameLease> dst;
    for (int i = 0; i < 4; ++i) dst.push_back(std::move(*pool.tryAcquire()));
    for (int subsamp : {TJSAMP_422, TJSAMP_420}) {
      const std::string ss = subsamp == TJSAMP_422 ? "4:2:2" : "4:2:0";
      const JpegSet in = makeJpegs(w, h, subsamp, info.device);
      report << "\n### " << name << " " << ss << " (mean JPEG " << in.meanBytes / 1024 << " KiB)\n\n"
             << "| path | median us | p99 us | CPU us per frame | CPU at 30 fps |\n|---|---|---|---|---|\n";
      std::string streamed;
      for (JpegBackend b : kBackends) {
        if ((b == JpegBackend::kHardware && !support.hardware) || !wanted(opt, b)) continue;
        Result r;
        try {
          GpuJpegDecoder dec(info.device, b);
          r = runNvjpeg(dec, in, dst, opt.iterations);
          streamed += std::string(jpegBackendName(b)) + " " + fmt(streamedFps(dec, in, dst, 200)) + " fps; ";
        } catch (const Error& e) {
          r.error = e.what();
        }
        report << row(std::string("nvJPEG ") + jpegBackendName(b), r);
        if (r.error.empty()) medians[name + " " + ss + " " + jpegBackendName(b)] = pct(r.wall, 50);
      }
      if (support.hardware && wanted(opt, JpegBackend::kHardware)) {
        // Restart strips: the same pictures with a restart marker every MCU row, same run.
        const JpegSet rst = makeJpegs(w, h, subsamp, info.device, 1);
        std::vector<int> counts = {1};  // then exactly K strips each, then the decoder's default (0 here)
        counts.insert(counts.end(), opt.strips.begin(), opt.strips.end());
        counts.push_back(0);
        for (int k : counts) {
          Result r;
          std::string label = "nvJPEG hardware, restart every MCU row (" +
                              std::to_string(rst.meanBytes / 1024) + " KiB), " +
                              (k == 1 ? std::string("whole frame") : std::to_string(k) + " strips");
          if (k == 0) {
            label = "nvJPEG hardware, restart every MCU row, default strips (up to " +
                    std::to_string(GpuJpegDecoder::kDefaultRestartStrips) +
                    ", >= " + std::to_string(GpuJpegDecoder::kDefaultMinStripRows) + " rows)";
          }
          try {
            GpuJpegDecoder dec(info.device, JpegBackend::kHardware);
            if (k > 0) dec.setRestartStrips(k, /*minStripRows=*/1);
            r = runNvjpeg(dec, rst, dst, opt.iterations);
            if (k == 0)
              label += ": " + std::to_string(dec.lastStripCount());
            else if (dec.lastStripCount() != k)
              label += " (used " + std::to_string(dec.lastStripCount()) + ")";
          } catch (const Error& e) {
            r.error = e.what();
          }
          report << row(label, r);
          if (r.error.empty()) {
            medians[name + " " + ss + " hardware-rst-" +
                    (k == 0 ? std::string("default") : std::to_string(k))] = pct(r.wall, 50);
          }
        }
      }
      if (opt.cpu) {
        const Result t = runTurbo(in, dst, w, h, subsamp, info.device, opt.iterations);
        report << row("libjpeg-turbo + pinned upload", t);
        if (t.error.empty()) medians[name + " " + ss + " cpu"] = pct(t.wall, 50);
      }
      report << "\nStreamed (back to back, no wait, 200 frames): " << streamed << "\n";
      std::fprintf(stderr, "done %s %s\n", name.c_str(), ss.c_str());
    }
  }

  report << "\n### Restart strips vs the whole frame on the hardware backend (median latency)\n\n";
  for (const auto& [key, us] : medians) {
    const std::size_t at = key.find(" hardware-rst-");
    if (at == std::string::npos || key.substr(at + 14) == "1" ||
        !medians.count(key.substr(0, at) + " hardware"))
      continue;
    const std::string base = key.substr(0, at);
    report << "- " << base << ", " << key.substr(at + 14) << " strips: " << fmt(us) << " us vs "
           << fmt(medians[base + " hardware"]) << " us whole (no restart markers), "
           << fmt(medians[base + " hardware-rst-1"]) << " us whole (same JPEG)\n";
  }
  // Speed-up of each backend over the CPU path.
  report << "\n### Speed-up over libjpeg-turbo + upload (median latency)\n\n";
  for (const auto& [key, us] : medians) {
    const std::size_t cut = key.rfind(' ');
    const std::string base = key.substr(0, cut);
    if (key.substr(cut + 1) == "cpu" || !medians.count(base + " cpu")) continue;
    report << "- " << key << ": " << fmt(us) << " us, " << fmt(medians[base + " cpu"] / us) << "x\n";
  }

  report << "\n### Batched 1080p (decodeBatch of " << opt.batch << " frames, 20 rounds)\n\n"
         << "| backend | subsampling | frames/s | 30 fps cameras | CPU us per frame |\n|---|---|---|---|---|\n";
  {
    BufferPool pool(computeLayout(PixelFormat::kNV12, 1920, 1080, 256), static_cast<std::uint32_t>(opt.batch),
                    makeDeviceAllocator(info.device));
    std::vector<FrameLease> dst;
    for (int i = 0; i < opt.batch; ++i) dst.push_back(std::move(*pool.tryAcquire()));
    for (int subsamp : {TJSAMP_422, TJSAMP_420}) {
      const JpegSet in = makeJpegs(1920, 1080, subsamp, info.device);
      for (JpegBackend b : kBackends) {
        if ((b == JpegBackend::kHardware && !support.hardware) || !wanted(opt, b)) continue;
        BatchResult r;
        try {
          GpuJpegDecoder dec(info.device, b);
          r = batchedFps(dec, in, dst, opt.batch, 20);
        } catch (const Error& e) {
          r.error = e.what();
        }
        report << "| " << jpegBackendName(b) << " | " << (subsamp == TJSAMP_422 ? "4:2:2" : "4:2:0") << " | ";
        if (!r.error.empty()) {
          report << "failed: " << r.error << " | | |\n";
        } else {
          report << fmt(r.fps) << " | " << static_cast<int>(r.fps / 30) << " | " << fmt(r.cpuPerFrameUs) << " |\n";
        }
      }
    }
  }
  return bench::publishReport(report.str(), opt.out, "zerohop_gpu_jpeg_bench") ? 0 : 1;
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  zerohop::Options opt;
  for (const auto& [key, value] : zerohop::bench::keyValueArgs(argc, argv)) {
    if (key == "--iterations") opt.iterations = std::max(1, std::atoi(value.c_str()));
    else if (key == "--batch") opt.batch = std::max(1, std::atoi(value.c_str()));
    else if (key == "--device") opt.device = std::atoi(value.c_str());
    else if (key == "--out") opt.out = value;
    else if (key == "--sizes") opt.sizes = zerohop::bench::splitList(value);
    else if (key == "--backends")
      opt.backends = zerohop::bench::splitList(value);
    else if (key == "--cpu")
      opt.cpu = value != "0";
    else if (key == "--strips") {
      opt.strips.clear();
      for (const auto& k : zerohop::bench::splitList(value))
        opt.strips.push_back(std::max(1, std::atoi(k.c_str())));
    } else {
      std::fprintf(stderr,
                   "usage: zerohop_gpu_jpeg_bench [--iterations N] [--sizes 720p,1080p,4k] [--batch N] "
                   "[--device N] [--out FILE] [--backends hardware,gpu-hybrid,hybrid,default] [--cpu 0|1] "
                   "[--strips 2,4,7]\n");
      return 1;
    }
  }
  try {
    return zerohop::run(opt);
  } catch (const std::exception& e) {  // zerohop::Error and what libjpeg-turbo's helpers throw
    std::fprintf(stderr, "zerohop_gpu_jpeg_bench: %s\n", e.what());
    return 1;
  }
}
