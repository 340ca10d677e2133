#pragma once
// Test support for the gpu label: the fixture that skips without a device, frames placed in host /
// pinned / device memory with chosen pitches and plane alignment, poisoned device targets, and the
// byte-by-byte comparison with a CPU reference.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_reference.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop::test {

/// Every gpu-labelled test derives from this: it skips, saying why, when no CUDA device works.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    info_ = probeGpu();
    if (!info_.available) GTEST_SKIP() << "no CUDA device: " << info_.reason;
    device_ = info_.device;
  }
  GpuInfo info_;
  int device_ = 0;
};

inline std::size_t alignUpTo(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

/// Offsets of the planes of `im` in one buffer: each plane starts at a 256-byte boundary plus `shift`.
inline std::array<std::size_t, kMaxPlanes> planeOffsets(const HostImage& im, std::uint32_t shift, std::size_t& total) {
  std::array<std::size_t, kMaxPlanes> off{};
  std::size_t end = 0;
  for (std::uint32_t p = 0; p < im.planeCount; ++p) {
    off[p] = alignUpTo(end, 256) + shift;
    end = off[p] + im.plane[p].size();
  }
  total = end;
  return off;
}

/// A copy of a HostImage in host, pinned or device memory, described by `frame`. Owns its memory.
class PlacedFrame {
 public:
  PlacedFrame(const HostImage& im, MemoryKind kind, int device, std::uint32_t shift = 0) {
    std::size_t total = 0;
    const auto off = planeOffsets(im, shift, total);
    std::uint8_t* base = nullptr;
    switch (kind) {
      case MemoryKind::kHost: host_.assign(total, 0xEE); base = host_.data(); break;
      case MemoryKind::kPinned: pinned_ = PinnedBuffer(device, total); base = pinned_.data(); break;
      case MemoryKind::kDevice: device_ = DeviceBuffer(device, total); base = device_.data(); break;
    }
    frame.format = im.format;
    frame.width = im.width;
    frame.height = im.height;
    frame.memory = kind;
    frame.planeCount = im.planeCount;
    frame.capacity = total;
    frame.bytesUsed = total;
    for (std::uint32_t p = 0; p < im.planeCount; ++p) {
      frame.data[p] = base + off[p];
      frame.pitch[p] = im.pitch[p];
      cuda::check(cudaMemcpy(frame.data[p], im.plane[p].data(), im.plane[p].size(), cudaMemcpyDefault),
                  "cudaMemcpy(test upload)");
    }
    // cudaMemcpy/cudaMemset run on the legacy default stream, which does not order the converter's
    // non-blocking streams: finish them before the frame is used.
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(test upload)");
  }
  Frame frame;

 private:
  std::vector<std::uint8_t> host_;
  PinnedBuffer pinned_;
  DeviceBuffer device_;
};

/// A device destination with chosen pitch padding and plane alignment, poisoned on request.
class DeviceTarget {
 public:
  DeviceTarget(PixelFormat format, std::uint32_t w, std::uint32_t h, std::uint32_t extraPitch, int device,
               std::uint32_t shift = 0)
      : shape_(makeImage(format, w, h, extraPitch)) {
    std::size_t total = 0;
    off_ = planeOffsets(shape_, shift, total);
    buffer_ = DeviceBuffer(device, total);
    frame.format = format;
    frame.width = w;
    frame.height = h;
    frame.memory = MemoryKind::kDevice;
    frame.planeCount = shape_.planeCount;
    frame.capacity = total;
    frame.bytesUsed = total;
    for (std::uint32_t p = 0; p < shape_.planeCount; ++p) {
      frame.data[p] = buffer_.data() + off_[p];
      frame.pitch[p] = shape_.pitch[p];
    }
  }
  void poison(std::uint8_t value) {
    cuda::check(cudaMemset(buffer_.data(), value, buffer_.size()), "cudaMemset(poison)");
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(poison)");  // see PlacedFrame
  }
  /// The whole planes, padding included (synchronous: waits for the device).
  HostImage download() const {
    HostImage im = shape_;
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(test download)");
    for (std::uint32_t p = 0; p < im.planeCount; ++p) {
      cuda::check(cudaMemcpy(im.plane[p].data(), frame.data[p], im.plane[p].size(), cudaMemcpyDeviceToHost),
                  "cudaMemcpy(test download)");
    }
    return im;
  }
  Frame frame;

 private:
  HostImage shape_;
  std::array<std::size_t, kMaxPlanes> off_{};
  DeviceBuffer buffer_;
};

/// Every pixel byte of `got` within `tolerance` of `ref`, every padding byte still `poison`.
inline ::testing::AssertionResult matchesReference(const HostImage& got, const HostImage& ref, int tolerance,
                                                   std::uint8_t poison) {
  std::size_t bad = 0, badPadding = 0;
  std::ostringstream first;
  for (std::uint32_t p = 0; p < ref.planeCount; ++p) {
    for (std::uint32_t y = 0; y < got.rows[p]; ++y) {
      for (std::uint32_t x = 0; x < got.pitch[p]; ++x) {
        const int g = got.at(p, x, y);
        if (x >= got.rowBytes[p]) {
          if (g != poison && badPadding++ == 0 && bad == 0)
            first << "padding byte written: plane " << p << " x " << x << " y " << y << " = " << g;
          continue;
        }
        const int r = ref.at(p, x, y);
        if (std::abs(g - r) > tolerance && bad++ == 0 && badPadding == 0)
          first << "plane " << p << " byte " << x << " row " << y << ": got " << g << ", want " << r;
      }
    }
  }
  if (bad == 0 && badPadding == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " bytes off by more than " << tolerance << ", " << badPadding
                                       << " padding bytes overwritten; first: " << first.str();
}

/// A JPEG in page-locked memory, described as the capture stage would.
class PinnedJpeg {
 public:
  PinnedJpeg(const std::vector<std::uint8_t>& bytes, int device, std::uint64_t sequence = 1)
      : buffer_(device, std::max<std::size_t>(bytes.size(), 1)) {
    if (!bytes.empty()) std::memcpy(buffer_.data(), bytes.data(), bytes.size());
    frame.format = PixelFormat::kMJPEG;
    frame.memory = MemoryKind::kPinned;
    frame.planeCount = 1;
    frame.data[0] = buffer_.data();
    frame.bytesUsed = bytes.size();
    frame.capacity = buffer_.size();
    frame.sequence = sequence;
  }
  /// With the picture's size, as a camera's MJPEG frame carries it.
  PinnedJpeg(const std::vector<std::uint8_t>& bytes, std::uint32_t width, std::uint32_t height, int device)
      : PinnedJpeg(bytes, device) {
    frame.width = width;
    frame.height = height;
  }
  Frame frame;

 private:
  PinnedBuffer buffer_;
};

}  // namespace zerohop::test
