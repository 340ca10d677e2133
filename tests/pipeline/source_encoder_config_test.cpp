#include "source_encoder_config.hpp"

#include <gtest/gtest.h>

namespace zerohop {
namespace {

SourceInfo source(PixelFormat format, ColorDesc color) {
  SourceInfo info;
  info.format = format;
  info.width = 1920;
  info.height = 1080;
  info.fps = 59.94;
  info.color = color;
  return info;
}

EncoderConfig userChoice() {
  EncoderConfig config;
  config.encoder = "auto";
  config.bitrateKbps = 4000;
  config.keyframeIntervalFrames = 60;
  config.preset = "veryfast";
  config.inputMemory = MemoryKind::kDevice;
  config.gpuDevice = 3;
  return config;
}

TEST(EncoderConfigFor, TakesThePictureFromTheSourceAndKeepsTheUsersChoices) {
  const EncoderConfig c = encoderConfigFor(userChoice(), source(PixelFormat::kYUYV, {}), PixelFormat::kNV12);
  EXPECT_EQ(c.width, 1920u);
  EXPECT_EQ(c.height, 1080u);
  EXPECT_DOUBLE_EQ(c.fps, 59.94);
  EXPECT_EQ(c.inputFormat, PixelFormat::kNV12);
  EXPECT_EQ(c.encoder, "auto");
  EXPECT_EQ(c.bitrateKbps, 4000u);
  EXPECT_EQ(c.keyframeIntervalFrames, 60u);
  EXPECT_EQ(c.preset, "veryfast");
  EXPECT_EQ(c.inputMemory, MemoryKind::kDevice);
  EXPECT_EQ(c.gpuDevice, 3);
  EXPECT_EQ(encoderConfigFor(userChoice(), source(PixelFormat::kYUYV, {}), PixelFormat::kI420).inputFormat,
            PixelFormat::kI420);
}

TEST(EncoderConfigFor, RawYuvKeepsTheSourcesColourDescription) {
  const ColorDesc bt709Full{ColorMatrix::kBt709, ColorRange::kFull};
  EXPECT_EQ(encoderConfigFor({}, source(PixelFormat::kYUYV, bt709Full), PixelFormat::kI420).color, bt709Full);
  const ColorDesc bt601Limited{ColorMatrix::kBt601, ColorRange::kLimited};
  EXPECT_EQ(encoderConfigFor({}, source(PixelFormat::kNV12, bt601Limited), PixelFormat::kNV12).color,
            bt601Limited);
}

TEST(EncoderConfigFor, MjpegIsBt601FullRangeWhateverTheSourceSays) {
  const ColorDesc jfif{ColorMatrix::kBt601, ColorRange::kFull};
  const ColorDesc claimed{ColorMatrix::kBt709, ColorRange::kLimited};
  EXPECT_EQ(encoderConfigFor({}, source(PixelFormat::kMJPEG, claimed), PixelFormat::kI420).color, jfif);
  EXPECT_EQ(encoderConfigFor({}, source(PixelFormat::kMJPEG, claimed), PixelFormat::kNV12).color, jfif);
}

}  // namespace
}  // namespace zerohop
