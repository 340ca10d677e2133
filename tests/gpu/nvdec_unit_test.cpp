// NVDEC pieces that need no device (label unit): splitting the committed clips into access units,
// and probeNvdec / GpuH264Decoder answering with a reason on a machine without a GPU or driver.
#include <gtest/gtest.h>

#include "nvdec_clip.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_decode.hpp"

namespace zerohop {
namespace {

std::vector<int> nalTypesOf(const std::vector<std::uint8_t>& unit) {
  std::vector<int> types;
  for (std::size_t i = 0; i + 3 < unit.size(); ++i) {
    if (unit[i] == 0 && unit[i + 1] == 0 && unit[i + 2] == 1) types.push_back(unit[i + 3] & 0x1F);
  }
  return types;
}

TEST(NvdecAccessUnits, SplitsEveryClipIntoItsPicturesLosslessly) {
  for (const char* name : {"nvdec_baseline_320x240", "nvdec_high_640x480", "nvdec_high_bframes_640x480",
                           "nvdec_high_1920x1080"}) {
    const auto bytes = test::readFile(test::clipDir() + "/" + name + ".h264");
    const auto units = nvdec::splitAccessUnits(bytes.data(), bytes.size());
    ASSERT_EQ(units.size(), 30u) << name;
    std::vector<std::uint8_t> joined;
    for (const auto& u : units) joined.insert(joined.end(), u.begin(), u.end());
    EXPECT_EQ(joined, bytes) << name << ": bytes lost or reordered";
    for (std::size_t i = 0; i < units.size(); ++i) {
      const auto types = nalTypesOf(units[i]);
      const int slices = static_cast<int>(std::count(types.begin(), types.end(), 1) +
                                          std::count(types.begin(), types.end(), 5));
      EXPECT_EQ(slices, 1) << name << " unit " << i;
      const bool idr = std::count(types.begin(), types.end(), 5) == 1;
      // The clips have an IDR every 10 pictures (the 1080p one only at the start), SPS/PPS before each.
      const bool wantIdr = std::string(name).find("1920") != std::string::npos ? i == 0 : i % 10 == 0;
      EXPECT_EQ(idr, wantIdr) << name << " unit " << i;
      if (idr) {
        EXPECT_EQ(types.front(), 7) << name << " unit " << i << " does not start with its SPS";
      }
    }
  }
}

TEST(NvdecAccessUnits, SplitsTheH265ClipIntoItsPicturesLosslessly) {
  const auto bytes = test::readFile(test::clipDir() + "/nvdec_hevc_main_320x240.h265");
  const auto units = nvdec::splitAccessUnits(bytes.data(), bytes.size(), /*hevc=*/true);
  ASSERT_EQ(units.size(), 30u);
  std::vector<std::uint8_t> joined;
  for (const auto& u : units) joined.insert(joined.end(), u.begin(), u.end());
  EXPECT_EQ(joined, bytes) << "bytes lost or reordered";
  for (std::size_t i = 0; i < units.size(); ++i) {
    std::vector<int> types;  // H.265: nal_unit_type in bits 1..6 of the first header byte
    for (std::size_t b = 0; b + 3 < units[i].size(); ++b) {
      if (units[i][b] == 0 && units[i][b + 1] == 0 && units[i][b + 2] == 1)
        types.push_back((units[i][b + 3] >> 1) & 0x3F);
    }
    EXPECT_EQ(std::count_if(types.begin(), types.end(), [](int t) { return t < 32; }), 1) << "unit " << i;
    const bool idr =
        std::count(types.begin(), types.end(), 19) + std::count(types.begin(), types.end(), 20) == 1;
    EXPECT_EQ(idr, i % 10 == 0) << "unit " << i;
    if (idr) {
      EXPECT_EQ(types.front(), 32) << "unit " << i << " does not start with its VPS";
    }
  }
}

TEST(NvdecAccessUnits, SplitsFourByteStartCodesAndSkipsLeadingBytes) {
  const std::vector<std::uint8_t> s = {0xFF, 0, 0, 0,    1,    0x67, 0x42,
                                       0,    0, 1, 0x68, 0xCE,              // junk, SPS, PPS
                                       0,    0, 1, 0x65, 0x88, 0x11,        // IDR, first_mb 0
                                       0,    0, 0, 1,    0x41, 0x9A, 0x22,  // P, first_mb 0
                                       0,    0, 1, 0x41, 0x40, 0x33};       // P, first_mb 1: same picture
  const auto units = nvdec::splitAccessUnits(s.data(), s.size());
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0], std::vector<std::uint8_t>(s.begin() + 1, s.begin() + 18));
  EXPECT_EQ(units[1], std::vector<std::uint8_t>(s.begin() + 18, s.end()));
  EXPECT_TRUE(nvdec::splitAccessUnits(s.data(), 3).empty());
}

TEST(NvdecProbe, AnswersWithoutCrashing) {
  const NvdecInfo info = probeNvdec();
  const std::string line = describe(info);
  std::printf("nvdec probe: %s\n", line.c_str());
  if (!info.available) {
    EXPECT_FALSE(info.reason.empty());
    EXPECT_NE(line.find(info.reason), std::string::npos);
    // The decoder refuses with the same kind of reason instead of crashing.
    try {
      GpuH264Decoder dec(0);
      ADD_FAILURE() << "a decoder opened where the probe says: " << info.reason;
    } catch (const Error& e) {
      EXPECT_FALSE(std::string(e.what()).empty());
    }
  } else {
    EXPECT_GE(info.maxWidth, 1920u);
    EXPECT_NE(line.find("H.264"), std::string::npos);
  }
}

TEST(NvdecProbe, MissingDeviceIsAReasonNotACrash) {
  const NvdecInfo info = probeNvdec(4096);
  EXPECT_FALSE(info.available);
  EXPECT_FALSE(info.reason.empty());
}

}  // namespace
}  // namespace zerohop
