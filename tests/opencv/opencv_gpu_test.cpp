// zerohop/opencv.hpp on the GPU: cv::cuda::GpuMat views over a device share's NV12 slot (the
// slot's own device pointers) are read by a CUDA kernel through data/step and give the published
// bytes; where this OpenCV has CUDA, GpuMat::download agrees too. Label gpu: skips without a device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "gpu_mat_kernel.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/opencv.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

TEST(OpenCvGpu, GpuMatViewOfADeviceShareIsReadByAKernel) {
  const GpuInfo info = probeGpu();
  if (!info.available) GTEST_SKIP() << "no CUDA device: " << info.reason;
  constexpr std::uint32_t kW = 640, kH = 360;
  const auto layout = computeLayout(PixelFormat::kNV12, kW, kH, 256);
  Publisher pub("cvgpu-" + std::to_string(getpid()), SlotLayout::deviceImages(layout, 3, info.device));
  Subscriber sub(pub.name());
  std::vector<std::uint8_t> host(layout.totalBytes);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::uint8_t>(i * 13 + (i >> 8));
  Frame src;
  bindLayout(src, layout, host.data(), MemoryKind::kHost);
  src.format = PixelFormat::kNV12;
  src.width = kW;
  src.height = kH;
  pub.publish(src);  // host -> device slot
  auto shared = sub.next(2000ms);
  ASSERT_TRUE(shared);
  ASSERT_EQ(shared->frame().memory, MemoryKind::kDevice);

  for (std::uint32_t p = 0; p < 2; ++p) {
    SCOPED_TRACE(p);
    const cv::cuda::GpuMat g = opencv::planeGpuMat(*shared, p);
    EXPECT_EQ(g.data, shared->frame().data[p]);  // the slot, not a copy
    EXPECT_EQ(g.type(), p == 0 ? CV_8UC1 : CV_8UC2);
    std::vector<unsigned> sums;
    const int widthBytes = g.cols * static_cast<int>(g.elemSize());
    const std::string err =
        testing::deviceRowSums(g.data, g.step, g.rows, widthBytes, shared->frame().gpu.readyEvent, sums);
    ASSERT_EQ(err, "");
    const auto& pl = layout.planes[p];
    for (int r = 0; r < g.rows; ++r) {
      unsigned want = 0;
      for (std::uint32_t x = 0; x < pl.widthBytes; ++x)
        want += host[pl.offset + std::size_t(r) * pl.pitch + x];
      ASSERT_EQ(sums[static_cast<std::size_t>(r)], want) << "row " << r;
    }
    if (cv::cuda::getCudaEnabledDeviceCount() > 0) {  // an OpenCV built with CUDA (Debian's is not)
      cv::Mat down;
      g.download(down);
      EXPECT_EQ(std::memcmp(down.ptr(0), host.data() + pl.offset, pl.widthBytes), 0);
    }
  }
  EXPECT_TRUE(shared->valid());
}

}  // namespace
}  // namespace zerohop
