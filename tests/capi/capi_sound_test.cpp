// zh_sound_decoder (zerohop.h): a C reader of a sound share turns its Opus packets into PCM. The share
// carries the test tone's packets as serve publishes NAME.opus (one packet a frame, its sequence number
// and capture time), one of them never published; the reader conceals it where the sequence numbers
// jump, and its PCM equals the C++ SoundDecoder's of the same packets (the same libopus decode). Misuse
// (bad handles, NULL out-pointers, a channel count, too little room) is an error with its reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tone_packets.hpp"
#include "zerohop/sound_decoder.hpp"
#include "zerohop/zerohop.h"

namespace {

using namespace zerohop;

class CApiSound : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zh-capi-sound-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    name_ = "sound" + std::to_string(::getpid()) + ".opus";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Half a second of the tone as serve's encoder makes it with --audio-frame-ms 20 (tone_packets.hpp):
  // 25 packets of 20 ms.
  static std::vector<audio::OpusPacket> tonePackets() { return audio::tonePackets(1, 25); }

  std::string dir_, name_;
};

TEST_F(CApiSound, AReaderDecodesTheSharesPacketsAndConcealsTheOneThatNeverCame) {
  const std::vector<audio::OpusPacket> packets = tonePackets();
  ASSERT_EQ(packets.size(), 25u);
  constexpr std::size_t kLost = 12;

  zh_publisher_options po = ZH_PUBLISHER_OPTIONS_INIT;
  po.format = ZH_FORMAT_OPUS;
  po.unit_capacity = 1500;
  po.directory = dir_.c_str();
  zh_publisher* pub = nullptr;
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  zh_reader_options ro = ZH_READER_OPTIONS_INIT;
  ro.directory = dir_.c_str();
  zh_reader* reader = nullptr;
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  zh_sound_decoder* decoder = nullptr;
  ASSERT_EQ(zh_sound_decoder_create(1, &decoder), ZH_OK) << zh_last_error();

  std::vector<std::int16_t> pcm;
  std::vector<std::int16_t> block(ZH_SOUND_MAX_PACKET_FRAMES);
  std::uint64_t expectedSequence = 0;
  for (std::size_t p = 0; p < packets.size(); ++p) {
    if (p == kLost) continue;  // never published: the reader sees sequence kLost + 1 after kLost - 1
    zh_frame_info src = ZH_FRAME_INFO_INIT;
    src.format = ZH_FORMAT_OPUS;
    src.plane_count = 1;
    src.planes[0] = const_cast<std::uint8_t*>(packets[p].data.data());
    src.bytes_used = packets[p].data.size();
    zh_frame_meta meta = ZH_FRAME_META_INIT;
    meta.keyframe = 1;
    meta.sequence = p;
    meta.stage_ns[ZH_STAGE_CAPTURE] = packets[p].captureNs;
    ASSERT_EQ(zh_publisher_publish(pub, &src, &meta, nullptr), ZH_OK) << zh_last_error();

    zh_frame* frame = nullptr;
    ASSERT_EQ(zh_reader_next(reader, 1000, &frame), ZH_OK) << zh_last_error();
    zh_frame_info info = ZH_FRAME_INFO_INIT;
    ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK) << zh_last_error();
    size_t frames = 0;
    for (; expectedSequence < info.sequence; ++expectedSequence) {  // what never came, concealed
      ASSERT_EQ(zh_sound_decode(decoder, nullptr, 0, block.data(), block.size(), &frames), ZH_OK)
          << zh_last_error();
      pcm.insert(pcm.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(frames));
    }
    ASSERT_EQ(zh_sound_decode(decoder, info.planes[0], info.bytes_used, block.data(), block.size(), &frames),
              ZH_OK)
        << zh_last_error();
    EXPECT_EQ(frames, 960u);
    pcm.insert(pcm.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(frames));
    expectedSequence = info.sequence + 1;
    zh_frame_release(frame);
  }
  EXPECT_EQ(pcm.size(), 25u * 960u) << "the lost packet's 20 ms concealed, not skipped";

  // The reference: the C++ decoder over the same packets, the lost one concealed.
  SoundDecoder reference(1);
  std::vector<std::int16_t> expected;
  for (std::size_t p = 0; p < packets.size(); ++p) {
    const std::size_t n = p == kLost ? reference.decode(nullptr, 0, block.data(), block.size())
                                     : reference.decode(packets[p].data.data(), packets[p].data.size(),
                                                        block.data(), block.size());
    expected.insert(expected.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(n));
  }
  EXPECT_EQ(pcm, expected);

  EXPECT_EQ(zh_sound_decoder_close(decoder), ZH_OK);
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
}

TEST_F(CApiSound, MisuseIsAnErrorWithItsReason) {
  zh_sound_decoder* decoder = nullptr;
  EXPECT_EQ(zh_sound_decoder_create(3, &decoder), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(decoder, nullptr);
  EXPECT_NE(std::string(zh_last_error()).find("1 (mono) or 2 (stereo)"), std::string::npos)
      << zh_last_error();
  EXPECT_EQ(zh_sound_decoder_create(2, nullptr), ZH_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(zh_sound_decoder_create(2, &decoder), ZH_OK) << zh_last_error();

  const std::vector<audio::OpusPacket> packets = tonePackets();
  std::vector<std::int16_t> pcm(2 * ZH_SOUND_MAX_PACKET_FRAMES);
  size_t frames = 7;
  EXPECT_EQ(
      zh_sound_decode(decoder, packets[0].data.data(), packets[0].data.size(), pcm.data(), 100, &frames),
      ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(frames, 0u);
  EXPECT_NE(std::string(zh_last_error()).find("zh_sound_decode: SoundDecoder: room for 100 sample frames"),
            std::string::npos)
      << zh_last_error();
  EXPECT_EQ(
      zh_sound_decode(decoder, packets[0].data.data(), packets[0].data.size(), pcm.data(), 960, nullptr),
      ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_sound_decode(decoder, packets[0].data.data(), packets[0].data.size(), nullptr, 960, &frames),
            ZH_ERR_INVALID_ARGUMENT);
  const std::uint8_t notOpus[] = {0x03};
  EXPECT_EQ(zh_sound_decode(decoder, notOpus, sizeof notOpus, pcm.data(), 960, &frames),
            ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("not an Opus packet"), std::string::npos) << zh_last_error();
  ASSERT_EQ(
      zh_sound_decode(decoder, packets[0].data.data(), packets[0].data.size(), pcm.data(), 960, &frames),
      ZH_OK)
      << zh_last_error();
  EXPECT_EQ(frames, 960u);

  EXPECT_EQ(zh_sound_decoder_close(decoder), ZH_OK);
  EXPECT_EQ(zh_sound_decoder_close(decoder), ZH_ERR_INVALID_ARGUMENT) << "closed twice";
  EXPECT_EQ(zh_sound_decode(decoder, nullptr, 0, pcm.data(), 960, &frames), ZH_ERR_INVALID_ARGUMENT)
      << "a closed decoder";
  EXPECT_NE(std::string(zh_last_error()).find("already closed"), std::string::npos) << zh_last_error();
  EXPECT_EQ(zh_sound_decoder_close(nullptr), ZH_OK);
}

}  // namespace
