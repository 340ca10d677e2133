// The C API's promises to programs built against an older (or newer) zerohop.h: versioned structs
// accepted from their first released size up, with later members at their defaults and nothing
// written past a caller's struct; the ZH_*_INIT macros warning-free; enum values fixed numbers,
// unknown ones refused. abi_v0_1_client.c is a real 0.1.0 program (built with that release's header).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

#include "abi_v0_1_client.h"
#include "capi/versioned.hpp"
#include "init_macros.h"
#include "zerohop/zerohop.h"

namespace {

class CApiAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zh-capi-abi-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    name_ = "abi" + std::to_string(::getpid());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  zh_publisher_options hostImages() const {
    zh_publisher_options o = ZH_PUBLISHER_OPTIONS_INIT;
    o.format = ZH_FORMAT_NV12;
    o.width = 64;
    o.height = 48;
    o.directory = dir_.c_str();
    return o;
  }
  std::string dir_, name_;
};

TEST_F(CApiAbi, AProgramBuiltAgainstTheFirstReleaseStillWorks) {
  char why[512] = "";
  EXPECT_EQ(zh_abi_v0_1_round_trip(dir_.c_str(), name_.c_str(), why, sizeof why), 0) << why;
}

TEST(CApiAbiMacros, InitMacrosSetEveryStructSize) {
  std::size_t sizes[8] = {};
  zh_test_init_macro_sizes(sizes);  // init_macros.c: built as C99 with -Wextra -Werror
  EXPECT_EQ(sizes[0], sizeof(zh_frame_info));
  EXPECT_EQ(sizes[1], sizeof(zh_share_info));
  EXPECT_EQ(sizes[2], sizeof(zh_reader_options));
  EXPECT_EQ(sizes[3], sizeof(zh_reader_stats));
  EXPECT_EQ(sizes[4], sizeof(zh_publisher_options));
  EXPECT_EQ(sizes[5], sizeof(zh_frame_meta));
  EXPECT_EQ(sizes[6], sizeof(zh_publisher_stats));
  EXPECT_EQ(sizes[7], sizeof(zh_stream_options));
  const zh_reader_options ro = ZH_READER_OPTIONS_INIT;
  EXPECT_EQ(ro.spin_us, -1);
  EXPECT_EQ(ro.cuda_device, -1);
}

// zh_reader_options grew after 0.1.0 (cuda_device, device_copy) into what was the old struct's tail
// padding: a 0.1 caller's struct_size (32) must not make its padding and what follows members.
TEST(CApiAbiVersions, MembersPastAnOlderCallersStructTakeTheirDefaults) {
  using zerohop::capi::kReaderOptionsReleases;
  const zh_reader_options defaults = ZH_READER_OPTIONS_INIT;
  for (const std::uint32_t size : {std::uint32_t{28}, std::uint32_t{32}}) {
    zh_reader_options caller;
    std::memset(&caller, 0xAB, sizeof caller);  // padding and "members" the caller does not have
    caller.struct_size = size;
    caller.directory = "/somewhere";
    caller.open_timeout_ms = 1234;
    caller.handshake_timeout_ms = 55;
    caller.spin_us = 7;
    const zh_reader_options o = zerohop::capi::readVersioned(caller, defaults, kReaderOptionsReleases);
    EXPECT_STREQ(o.directory, "/somewhere");
    EXPECT_EQ(o.open_timeout_ms, 1234);
    EXPECT_EQ(o.handshake_timeout_ms, 55);
    EXPECT_EQ(o.spin_us, 7);
    EXPECT_EQ(o.cuda_device, -1) << "struct_size " << size << ": read a member the caller does not have";
    EXPECT_EQ(o.device_copy, 0) << "struct_size " << size;
  }
  zh_reader_options today = defaults;
  today.cuda_device = 3;
  today.device_copy = 1;
  const zh_reader_options o = zerohop::capi::readVersioned(today, defaults, kReaderOptionsReleases);
  EXPECT_EQ(o.cuda_device, 3);
  EXPECT_EQ(o.device_copy, 1);
}

// zh_stream_options grew after 0.1.0 (audio_channels): a 0.1 caller (struct_size 88) gets no sound
// whatever lies past its struct.
TEST(CApiAbiVersions, AStreamOfAnOlderCallerHasNoSound) {
  using zerohop::capi::kStreamOptionsReleases;
  zh_stream_options caller;
  std::memset(&caller, 0xAB, sizeof caller);
  caller.struct_size = 88;
  caller.width = 640;
  caller.share_name = nullptr;
  const zh_stream_options o =
      zerohop::capi::readVersioned(caller, zh_stream_options ZH_STREAM_OPTIONS_INIT, kStreamOptionsReleases);
  EXPECT_EQ(o.width, 640u);
  EXPECT_EQ(o.share_name, nullptr);
  EXPECT_EQ(o.audio_channels, 0u) << "read a member the 0.1 caller does not have";
}

// whip_simulcast came after audio_channels: a caller of that release (struct_size 96) has tail padding
// where it now is, and gets no simulcast whatever that padding holds.
TEST(CApiAbiVersions, AStreamOfTheAudioReleaseHasNoSimulcast) {
  using zerohop::capi::kStreamOptionsReleases;
  zh_stream_options caller;
  std::memset(&caller, 0xAB, sizeof caller);
  caller.struct_size = static_cast<std::uint32_t>(kStreamOptionsReleases[1].size);
  caller.audio_channels = 2;
  const zh_stream_options o =
      zerohop::capi::readVersioned(caller, zh_stream_options ZH_STREAM_OPTIONS_INIT, kStreamOptionsReleases);
  EXPECT_EQ(o.audio_channels, 2u);
  EXPECT_EQ(o.whip_simulcast, nullptr) << "read a member the audio release's caller does not have";
#if defined(__x86_64__) || defined(__aarch64__)
  EXPECT_EQ(kStreamOptionsReleases[1].size, 96u) << "the audio release's struct_size on LP64";
  EXPECT_GE(offsetof(zh_stream_options, whip_simulcast), 96u) << "the new member lies in the old padding";
#endif
}

// A program built against a later header passes bigger structs: accepted, the extra members
// ignored, and nothing written past what this build knows.
TEST_F(CApiAbi, ACallerWithLargerStructsIsAccepted) {
  struct {
    zh_publisher_options o;
    std::uint64_t later[2];
  } po{hostImages(), {~0ull, ~0ull}};
  po.o.struct_size = sizeof po;
  zh_publisher* pub = nullptr;
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po.o, &pub), ZH_OK) << zh_last_error();
  struct {
    zh_publisher_stats s;
    unsigned char later[16];
  } stats;
  std::memset(&stats, 0xCD, sizeof stats);
  stats.s.struct_size = sizeof stats;
  ASSERT_EQ(zh_publisher_get_stats(pub, &stats.s), ZH_OK) << zh_last_error();
  EXPECT_EQ(stats.s.publishes, 0u);
  EXPECT_EQ(stats.later[0], 0xCD) << "wrote past the struct this build knows";
  EXPECT_EQ(stats.s.struct_size, sizeof stats) << "struct_size is the caller's";
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
}

TEST_F(CApiAbi, AStructBelowItsFirstReleasedSizeIsRefusedNamingIt) {
  zh_publisher_options po = hostImages();
  po.struct_size = static_cast<std::uint32_t>(zerohop::capi::kPublisherOptionsFirstSize - 4);
  zh_publisher* pub = nullptr;
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  const std::string msg = zh_last_error();
  EXPECT_NE(msg.find("first released size"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(zerohop::capi::kPublisherOptionsFirstSize)), std::string::npos) << msg;
}

// Enum values are fixed numbers: one the API does not define is refused, never cast.
TEST_F(CApiAbi, UnknownEnumValuesAreInvalidArguments) {
  zh_publisher_options po = hostImages();
  po.format = static_cast<zh_format>(42);
  zh_publisher* pub = nullptr;
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("42 is not a zh_format"), std::string::npos) << zh_last_error();
  po = hostImages();
  po.memory = static_cast<zh_memory>(7);
  EXPECT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zh_format_name(static_cast<zh_format>(42)), "unknown");
  EXPECT_STREQ(zh_format_name(static_cast<zh_format>(-1)), "unknown");
  EXPECT_STREQ(zh_format_name(ZH_FORMAT_H264), "h264");
  EXPECT_STREQ(zh_format_name(ZH_FORMAT_BGRX), "bgrx");

  po = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  std::uint8_t pixels[64 * 48 * 3 / 2] = {};
  zh_frame_info frame = ZH_FRAME_INFO_INIT;
  frame.format = ZH_FORMAT_NV12;
  frame.width = 64;
  frame.height = 48;
  frame.plane_count = 2;
  frame.planes[0] = pixels;
  frame.planes[1] = pixels + 64 * 48;
  frame.pitches[0] = frame.pitches[1] = 64;
  frame.memory = static_cast<zh_memory>(9);
  EXPECT_EQ(zh_publisher_publish(pub, &frame, nullptr, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("9 is not a zh_memory"), std::string::npos) << zh_last_error();
  frame.memory = ZH_MEMORY_HOST;
  EXPECT_EQ(zh_publisher_publish(pub, &frame, nullptr, nullptr), ZH_OK) << zh_last_error();
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
}

}  // namespace
