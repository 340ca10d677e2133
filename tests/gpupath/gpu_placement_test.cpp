// placeCameras: which GPU each camera runs on, on any machine (label unit; no CUDA call).
#include <gtest/gtest.h>

#include <algorithm>

#include "zerohop/error.hpp"
#include "gpupath/gpu_placement.hpp"

namespace zerohop {
namespace {

CameraLoadInput cam(std::string name, std::string gpu, PixelFormat f, std::uint32_t w, std::uint32_t h, double fps) {
  return CameraLoadInput{std::move(name), std::move(gpu), f, w, h, fps};
}

std::vector<int> devices(const std::vector<CameraPlacement>& p) {
  std::vector<int> d;
  for (const auto& c : p) d.push_back(c.device);
  return d;
}

TEST(GpuPlacement, LoadIsPixelsPerSecondWeightedByFormat) {
  EXPECT_DOUBLE_EQ(estimateGpuLoad(PixelFormat::kYUYV, 1920, 1080, 30), 1920.0 * 1080 * 30 / 1e6);
  EXPECT_DOUBLE_EQ(estimateGpuLoad(PixelFormat::kMJPEG, 1920, 1080, 30),
                   2 * estimateGpuLoad(PixelFormat::kYUYV, 1920, 1080, 30));
  EXPECT_DOUBLE_EQ(estimateGpuLoad(PixelFormat::kH264, 1920, 1080, 30), 0);
  // Unknown size and rate weigh as 1080p30.
  EXPECT_DOUBLE_EQ(estimateGpuLoad(PixelFormat::kUnknown, 0, 0, 0), estimateGpuLoad(PixelFormat::kYUYV, 1920, 1080, 30));
}

TEST(GpuPlacement, ExplicitDeviceIsHonoured) {
  const auto p = placeCameras({cam("a", "1", PixelFormat::kYUYV, 640, 480, 30), cam("b", "0", PixelFormat::kYUYV, 640, 480, 30)}, 2);
  EXPECT_EQ(devices(p), (std::vector<int>{1, 0}));
  EXPECT_FALSE(p[0].automatic);
  EXPECT_EQ(p[0].name, "a");
}

TEST(GpuPlacement, DeviceThatDoesNotExistIsAnErrorNamingTheCamera) {
  try {
    placeCameras({cam("front", "0", PixelFormat::kYUYV, 0, 0, 0), cam("back", "2", PixelFormat::kYUYV, 0, 0, 0)}, 2);
    FAIL() << "gpu = 2 of 2 devices was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    const std::string m = e.what();
    EXPECT_NE(m.find("camera \"back\""), std::string::npos) << m;
    EXPECT_NE(m.find("2 CUDA devices (0 to 1)"), std::string::npos) << m;
  }
  try {
    placeCameras({cam("x", "fast", PixelFormat::kYUYV, 0, 0, 0)}, 1);
    FAIL() << "gpu = fast was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("camera \"x\""), std::string::npos) << e.what();
  }
}

TEST(GpuPlacement, WithoutDevicesExplicitIsKeptAndAutoIsNoDevice) {
  // The pipeline then says why device 3 cannot be used (as a lone --gpu 3 does); auto takes the CPU path.
  const auto p = placeCameras({cam("a", "3", PixelFormat::kYUYV, 0, 0, 0), cam("b", "auto", PixelFormat::kYUYV, 0, 0, 0),
                               cam("c", "off", PixelFormat::kYUYV, 0, 0, 0)},
                              0);
  EXPECT_EQ(devices(p), (std::vector<int>{3, -1, -1}));
  EXPECT_TRUE(p[1].automatic);
  EXPECT_FALSE(p[2].automatic);
}

TEST(GpuPlacement, AutoSpreadsByLoadHeaviestFirst) {
  // Loads: a 1080p30 MJPEG = 124.4, b 1080p30 YUYV = 62.2, c 720p30 YUYV = 27.6, d 720p30 YUYV = 27.6.
  // Heaviest first: a -> 0; b -> 1; c -> 1 (62.2 < 124.4); d -> 1 (89.9 < 124.4).
  const auto p = placeCameras({cam("c", "auto", PixelFormat::kYUYV, 1280, 720, 30), cam("a", "auto", PixelFormat::kMJPEG, 1920, 1080, 30),
                               cam("d", "auto", PixelFormat::kYUYV, 1280, 720, 30), cam("b", "auto", PixelFormat::kYUYV, 1920, 1080, 30)},
                              2);
  EXPECT_EQ(devices(p), (std::vector<int>{1, 0, 1, 1}));
  for (const auto& c : p) EXPECT_TRUE(c.automatic) << c.name;
  EXPECT_NE(p[0].reason.find("least-loaded"), std::string::npos) << p[0].reason;
}

TEST(GpuPlacement, ExplicitCamerasCountTowardsTheLoad) {
  // Device 0 already carries a heavy named camera: the auto ones go to 1 first.
  const auto p = placeCameras({cam("big", "0", PixelFormat::kMJPEG, 3840, 2160, 30), cam("x", "auto", PixelFormat::kYUYV, 1920, 1080, 30),
                               cam("y", "auto", PixelFormat::kYUYV, 1920, 1080, 30)},
                              2);
  EXPECT_EQ(devices(p), (std::vector<int>{0, 1, 1}));
}

TEST(GpuPlacement, TiesGoToTheLowestOrdinalInListOrder) {
  std::vector<CameraLoadInput> four;
  for (const char* n : {"a", "b", "c", "d"}) four.push_back(cam(n, "auto", PixelFormat::kYUYV, 1280, 720, 30));
  EXPECT_EQ(devices(placeCameras(four, 3)), (std::vector<int>{0, 1, 2, 0}));
  // H.264 weighs nothing: every one on the lowest ordinal.
  std::vector<CameraLoadInput> h264;
  for (const char* n : {"a", "b"}) h264.push_back(cam(n, "auto", PixelFormat::kH264, 1920, 1080, 30));
  EXPECT_EQ(devices(placeCameras(h264, 2)), (std::vector<int>{0, 0}));
}

TEST(GpuPlacement, IsDeterministic) {
  std::vector<CameraLoadInput> many;
  for (int i = 0; i < 20; ++i)
    many.push_back(cam(std::string("c").append(std::to_string(i)), i % 5 == 0 ? "1" : "auto", i % 3 ? PixelFormat::kYUYV : PixelFormat::kMJPEG,
                       640u + 64u * static_cast<std::uint32_t>(i % 4), 480, 15.0 + i % 2 * 15));
  const auto first = devices(placeCameras(many, 4));
  for (int k = 0; k < 5; ++k) EXPECT_EQ(devices(placeCameras(many, 4)), first);
  // And balanced: no device carries more than the lightest plus the heaviest single camera.
  const auto p = placeCameras(many, 4);
  double load[4] = {0, 0, 0, 0}, heaviest = 0;
  for (const auto& c : p) {
    load[c.device] += c.load;
    heaviest = std::max(heaviest, c.load);
  }
  const double lo = *std::min_element(load, load + 4), hi = *std::max_element(load, load + 4);
  EXPECT_LE(hi - lo, heaviest + 1e-9);
}

GpuTopology twoGpus(bool peer, std::string link) {
  GpuTopology t;
  t.devices = {GpuTopologyDevice{0, "NVIDIA H200", "0000:19:00.0", 150ull << 30},
               GpuTopologyDevice{1, "NVIDIA H200", "0000:3b:00.0", 150ull << 30}};
  t.links = {GpuPairLink{0, 1, peer, std::move(link)}};
  t.nvml = true;
  return t;
}

TEST(GpuTopologyText, ListsGpusLinksAndTheCamerasEachTakes) {
  // lab (named: GPU 0, 6.9) first; then front (MJPEG 1080p30, 124.4) to the lighter GPU 1; back
  // (62.2) to GPU 0 (6.9 < 124.4); cpu has none.
  const auto placement = placeCameras({cam("front", "auto", PixelFormat::kMJPEG, 1920, 1080, 30),
                                       cam("back", "auto", PixelFormat::kYUYV, 1920, 1080, 30),
                                       cam("lab", "0", PixelFormat::kYUYV, 640, 360, 30),
                                       cam("cpu", "off", PixelFormat::kYUYV, 640, 360, 30)},
                                      2);
  EXPECT_EQ(renderGpuTopology(twoGpus(true, "NVLink"), placement),
            "gpus\n"
            "  GPU 0      NVIDIA H200, 150 GiB, PCI 0000:19:00.0\n"
            "             cameras: back (auto), lab\n"
            "  GPU 1      NVIDIA H200, 150 GiB, PCI 0000:3b:00.0\n"
            "             cameras: front (auto)\n"
            "  GPU 0 <-> GPU 1: NVLink, P2P yes (a reader on one GPU reads the other's ring in place)\n"
            "  no GPU:    cpu\n");
}

TEST(GpuTopologyText, SaysWhenThereIsNoPeerAccessAndNoCameras) {
  const std::string text = renderGpuTopology(twoGpus(false, "PCIe"), {});
  EXPECT_NE(text.find("GPU 0 <-> GPU 1: PCIe, P2P no (a reader on the other GPU gets one device-to-device copy per frame)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("cameras:"), std::string::npos) << text;  // no camera list asked for
  GpuTopology none;
  none.reason = "no NVIDIA driver";
  EXPECT_EQ(renderGpuTopology(none, {}), "gpus\n  none: no NVIDIA driver\n");
}

TEST(GpuTopologyText, ProbeOfThisMachineNeverThrows) {
  const GpuTopology t = probeGpuTopology();
  EXPECT_EQ(t.devices.empty(), !t.reason.empty()) << t.reason;
  EXPECT_EQ(t.links.size(), t.devices.size() * (t.devices.size() - (t.devices.empty() ? 0 : 1)) / 2);
  for (const auto& d : t.devices) EXPECT_FALSE(d.pciBusId.empty()) << "GPU " << d.ordinal;
  for (const auto& l : t.links) EXPECT_FALSE(l.link.empty());
}

}  // namespace
}  // namespace zerohop
