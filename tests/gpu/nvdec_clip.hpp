#pragma once
// Test support for NVDEC: the committed clips (tests/gpu/data, made by make_nvdec_clips.sh) split
// into access units, their libavcodec reference checksums, and decoded frames read back the way a
// consumer would (its own stream waiting on the frame's ready event) and hashed.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "beside_program.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/nvdec_access_units.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/frame.hpp"

#ifndef ZEROHOP_NVDEC_DATA_DIR
#error "ZEROHOP_NVDEC_DATA_DIR must name tests/gpu/data"
#endif

namespace zerohop::test {

inline std::vector<std::uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// FNV-1a 64 of a frame's Y or UV plane: `rowBytes` of each row, no padding.
inline std::uint64_t fnv1a64(const std::uint8_t* p, std::size_t pitch, std::size_t rowBytes,
                             std::size_t rows) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t y = 0; y < rows; ++y) {
    for (std::size_t x = 0; x < rowBytes; ++x) h = (h ^ p[y * pitch + x]) * 0x100000001b3ull;
  }
  return h;
}

struct PlaneHashes {
  std::uint64_t y = 0, uv = 0;
  bool operator==(const PlaneHashes&) const = default;
};

/// A committed clip: access units in stream order and reference hashes in display order.
struct Clip {
  std::string name;
  std::uint32_t width = 0, height = 0;
  std::vector<std::vector<std::uint8_t>> units;
  std::vector<PlaneHashes> reference;
};

/// The clips' folder: $ZEROHOP_NVDEC_DATA_DIR when set (a test binary run away from its source tree,
/// e.g. from a GPU bundle), else the source tree's tests/gpu/data.
inline std::string clipDir() {
  return zerohop::testing::fromEnvOrBesideProgram("ZEROHOP_NVDEC_DATA_DIR", ZEROHOP_NVDEC_DATA_DIR);
}

/// `name`.h264, or `name`.h265 for a name with "hevc" in it, and `name`.fnv.
inline Clip loadClip(const std::string& name, std::uint32_t w, std::uint32_t h) {
  Clip c;
  c.name = name;
  c.width = w;
  c.height = h;
  const bool hevc = name.find("hevc") != std::string::npos;
  const std::string base = clipDir() + "/" + name;
  const auto bytes = readFile(base + (hevc ? ".h265" : ".h264"));
  c.units = nvdec::splitAccessUnits(bytes.data(), bytes.size(), hevc);
  std::ifstream ref(base + ".fnv");
  for (std::string line; std::getline(ref, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    int index = 0;
    PlaneHashes hashes;
    fields >> index >> std::hex >> hashes.y >> hashes.uv;
    c.reference.push_back(hashes);
  }
  return c;
}

/// NV12 device frames with padded rows (pitch aligned to 256), so writes past a row show.
inline BufferPool nv12DevicePool(std::uint32_t w, std::uint32_t h, std::uint32_t slots,
                                 std::unique_ptr<FrameAllocator> allocator) {
  return BufferPool(computeLayout(PixelFormat::kNV12, w, h, 256), slots, std::move(allocator));
}

inline constexpr std::uint8_t kPoison = 0xA7;

/// Fills the whole slot (padding included) with kPoison and waits for it.
inline void poison(const Frame& f) {
  cuda::check(cudaMemset(f.data[0], kPoison, f.capacity), "cudaMemset(poison)");
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(poison)");
}

/// Reads `f` back as a consumer does: a stream of its own waits on f.gpu.readyEvent (no device
/// sync), copies both planes with their padding, then checks that the padding is still poison.
inline PlaneHashes readBack(const Frame& f, int device, ::testing::AssertionResult* paddingOk = nullptr) {
  CudaStream consumer(device);
  if (f.gpu.readyEvent != nullptr) {
    cuda::check(cudaStreamWaitEvent(consumer.get(), static_cast<cudaEvent_t>(f.gpu.readyEvent), 0),
                "cudaStreamWaitEvent(test)");
  }
  const std::size_t chromaRows = (f.height + 1) / 2;
  std::vector<std::uint8_t> y(std::size_t(f.pitch[0]) * f.height), uv(std::size_t(f.pitch[1]) * chromaRows);
  cuda::check(cudaMemcpyAsync(y.data(), f.data[0], y.size(), cudaMemcpyDeviceToHost, consumer.get()),
              "cudaMemcpyAsync(Y)");
  cuda::check(cudaMemcpyAsync(uv.data(), f.data[1], uv.size(), cudaMemcpyDeviceToHost, consumer.get()),
              "cudaMemcpyAsync(UV)");
  consumer.synchronize();
  if (paddingOk != nullptr) {
    std::size_t written = 0;
    for (std::size_t r = 0; r < f.height; ++r)
      for (std::size_t x = f.width; x < f.pitch[0]; ++x) written += y[r * f.pitch[0] + x] != kPoison;
    for (std::size_t r = 0; r < chromaRows; ++r)
      for (std::size_t x = f.width; x < f.pitch[1]; ++x) written += uv[r * f.pitch[1] + x] != kPoison;
    *paddingOk = written == 0 ? ::testing::AssertionSuccess()
                              : ::testing::AssertionFailure() << written << " padding bytes overwritten";
  }
  return {fnv1a64(y.data(), f.pitch[0], f.width, f.height),
          fnv1a64(uv.data(), f.pitch[1], f.width, chromaRows)};
}

}  // namespace zerohop::test
