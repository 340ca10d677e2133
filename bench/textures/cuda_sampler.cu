// zerohop_cuda_sampler SHARE_NAME [--seconds S] [--spin]
//
// The CUDA reader examples/vulkan_reader is measured against, doing what it does per frame: the next
// frame (zh_reader_next), the producer's write waited for on the GPU (zh_frame_wait_on_stream), one
// kernel reading the NV12 frame into an RGBA image of its own (the Vulkan reader's compute shader, in
// CUDA), then the host waits for that kernel. Clock: CLOCK_MONOTONIC from the publisher's commit
// (zh_frame_info.publish_ns) to the kernel seen complete, as vulkan_reader's committed_to_sampled;
// wake = commit -> zh_reader_next returned. --spin: the host spins on the kernel's completion
// (cudaDeviceScheduleSpin) instead of the default scheduling.
// Last lines: ring=device committed_to_sampled_us_p50=X p99=Y wake_us_p50=W, then frames=N copied_bytes=0.
#include <cuda_runtime_api.h>
#include <time.h>
#include <zerohop/zerohop.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// BT.601 limited range, as the shader's default.
__global__ void nv12ToRgba(const std::uint8_t* y, std::uint32_t yPitch, const std::uint8_t* uv,
                           std::uint32_t uvPitch, std::uint32_t width, std::uint32_t height, uchar4* out) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || row >= height) return;
  const float c = (y[row * yPitch + x] - 16.0f) / 219.0f;
  const std::uint8_t* chroma = uv + (row / 2) * uvPitch + (x / 2) * 2;
  const float d = (chroma[0] - 128.0f) / 224.0f, e = (chroma[1] - 128.0f) / 224.0f;
  const float kr = 0.299f, kb = 0.114f, kg = 1.0f - kr - kb;
  const float r = c + 2.0f * (1.0f - kr) * e, b = c + 2.0f * (1.0f - kb) * d, g = (c - kr * r - kb * b) / kg;
  auto q = [](float v) { return static_cast<unsigned char>(fminf(fmaxf(v, 0.0f), 1.0f) * 255.0f + 0.5f); };
  out[row * width + x] = make_uchar4(q(r), q(g), q(b), 255);
}

int cudaFail(const char* what, cudaError_t e) {
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

int zhFail(const char* what, zh_status st) {
  std::fprintf(stderr, "%s: %s: %s\n", what, zh_status_name(st), zh_last_error());
  return 1;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(v.size() * p))];
}

}  // namespace

int main(int argc, char** argv) {
  const char* name = nullptr;
  double seconds = 3.0;
  bool spin = false, usage = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--spin") == 0)
      spin = true;
    else if (!name && argv[i][0] != '-')
      name = argv[i];
    else
      usage = true;
  }
  if (usage || !name || seconds <= 0) {
    std::fprintf(stderr, "usage: %s SHARE_NAME [--seconds S] [--spin]\n", argv[0]);
    return 2;
  }
  zh_reader* reader = nullptr;
  if (const zh_status st = zh_reader_open(name, 5000, &reader); st != ZH_OK) return zhFail("open", st);
  cudaStream_t stream = nullptr;
  uchar4* image = nullptr;
  int device = -1;
  std::vector<double> sampledUs, wakeUs;
  const std::int64_t end = monotonicNs() + static_cast<std::int64_t>(seconds * 1e9);
  while (monotonicNs() < end) {
    zh_frame* frame = nullptr;
    if (const zh_status st = zh_reader_next(reader, 2000, &frame); st != ZH_OK) return zhFail("next", st);
    const std::int64_t woke = monotonicNs();
    zh_frame_info info = ZH_FRAME_INFO_INIT;
    zh_frame_get_info(frame, &info);
    if (info.memory != ZH_MEMORY_DEVICE || info.format != ZH_FORMAT_NV12) {
      std::fprintf(stderr, "%s: not NV12 frames in GPU memory (this reader reads device rings only)\n", name);
      return 1;
    }
    if (device < 0) {  // the first frame names the device: the stream and the image go there
      device = info.cuda_device;
      if (spin)
        if (cudaError_t e = cudaSetDeviceFlags(cudaDeviceScheduleSpin); e != cudaSuccess)
          return cudaFail("cudaSetDeviceFlags", e);
      if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return cudaFail("cudaSetDevice", e);
      if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess)
        return cudaFail("cudaStreamCreate", e);
      if (cudaError_t e = cudaMalloc(&image, std::size_t{info.width} * info.height * 4); e != cudaSuccess)
        return cudaFail("cudaMalloc", e);
    }
    if (const zh_status st = zh_frame_wait_on_stream(frame, stream); st != ZH_OK) return zhFail("wait", st);
    const dim3 block(16, 16), grid((info.width + 15) / 16, (info.height + 15) / 16);
    nv12ToRgba<<<grid, block, 0, stream>>>(static_cast<const std::uint8_t*>(info.planes[0]), info.pitches[0],
                                           static_cast<const std::uint8_t*>(info.planes[1]), info.pitches[1],
                                           info.width, info.height, image);
    if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) return cudaFail("kernel", e);
    const std::int64_t sampled = monotonicNs();
    sampledUs.push_back((sampled - info.publish_ns) / 1e3);
    wakeUs.push_back((woke - info.publish_ns) / 1e3);
    zh_frame_release(frame);
  }
  zh_reader_close(reader);
  std::printf("wait=%s\n", spin ? "spin" : "default");
  std::printf("ring=device committed_to_sampled_us_p50=%.1f p99=%.1f wake_us_p50=%.1f\n",
              percentile(sampledUs, 0.5), percentile(sampledUs, 0.99), percentile(wakeUs, 0.5));
  std::printf("frames=%zu copied_bytes=0\n", sampledUs.size());
  cudaFree(image);
  cudaStreamDestroy(stream);
  return sampledUs.empty() ? 1 : 0;
}
