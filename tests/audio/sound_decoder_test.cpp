// SoundDecoder (include/zerohop/sound_decoder.hpp): a sound share's Opus packets as PCM. The packets are
// the test tone through the encoder serve runs (OpusAudioEncoder); the reference is libopus's own
// opus_decode of the same packets, which the PCM must equal sample for sample. A lost packet is concealed
// (continuous, counted); stereo and mono convert either way; bad input is refused, saying why.
#include "zerohop/sound_decoder.hpp"

#include <gtest/gtest.h>
#include <opus/opus.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "tone_packets.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

// One second of the tone (tone_packets.hpp): in stereo, on the left, silence on the right.
std::vector<audio::OpusPacket> tonePackets(std::uint32_t channels) {
  return audio::tonePackets(channels, 50);
}

// Decodes every packet with `decoder` into one interleaved buffer.
std::vector<std::int16_t> decodeAll(SoundDecoder& decoder, const std::vector<audio::OpusPacket>& packets) {
  std::vector<std::int16_t> pcm;
  std::vector<std::int16_t> block(SoundDecoder::kMaxPacketFrames * decoder.channels());
  for (const audio::OpusPacket& p : packets) {
    const std::size_t n =
        decoder.decode(p.data.data(), p.data.size(), block.data(), SoundDecoder::kMaxPacketFrames);
    pcm.insert(pcm.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(n * decoder.channels()));
  }
  return pcm;
}

// Channel `c` of interleaved `pcm`: its RMS and its frequency (rising zero crossings a second), past the
// decoder's first 100 ms.
struct Channel {
  double rms = 0, hz = 0;
};
Channel channelOf(const std::vector<std::int16_t>& pcm, std::uint32_t channels, std::uint32_t c) {
  const std::size_t frames = pcm.size() / channels;
  double squares = 0;
  int rising = 0;
  std::size_t counted = 0;
  for (std::size_t i = 4'800; i < frames; ++i, ++counted) {
    const double v = pcm[i * channels + c];
    squares += v * v;
    if (pcm[(i - 1) * channels + c] < 0 && v >= 0) ++rising;
  }
  return {std::sqrt(squares / static_cast<double>(counted)),
          rising * 48'000.0 / static_cast<double>(counted)};
}

TEST(SoundDecoder, ATonesPacketsDecodeToTheToneAsLibopusDecodesThem) {
  const auto packets = tonePackets(1);
  ASSERT_EQ(packets.size(), 50u) << "20 ms packets";
  SoundDecoder decoder(1);
  const std::vector<std::int16_t> pcm = decodeAll(decoder, packets);
  ASSERT_EQ(pcm.size(), 50u * 960u);
  EXPECT_EQ(decoder.packetsDecoded(), 50u);
  EXPECT_EQ(decoder.packetsConcealed(), 0u);

  int rc = OPUS_OK;
  std::unique_ptr<OpusDecoder, void (*)(OpusDecoder*)> reference(opus_decoder_create(48'000, 1, &rc),
                                                                 opus_decoder_destroy);
  ASSERT_EQ(rc, OPUS_OK);
  std::vector<std::int16_t> expected(960);
  for (std::size_t p = 0; p < packets.size(); ++p) {
    ASSERT_EQ(opus_decode(reference.get(), packets[p].data.data(),
                          static_cast<opus_int32>(packets[p].data.size()), expected.data(), 960, 0),
              960);
    ASSERT_TRUE(
        std::equal(expected.begin(), expected.end(), pcm.begin() + static_cast<std::ptrdiff_t>(p * 960)))
        << "packet " << p << " differs from libopus's decode";
  }
  const Channel tone = channelOf(pcm, 1, 0);
  EXPECT_NEAR(tone.hz, 440.0, 5.0);
  EXPECT_NEAR(tone.rms, 0.25 * 32767 / std::sqrt(2.0), 600.0) << "a sine at a quarter of full scale";
}

TEST(SoundDecoder, StereoAndMonoConvertEitherWay) {
  const auto stereo = tonePackets(2);
  SoundDecoder asStereo(2);
  const auto both = decodeAll(asStereo, stereo);
  const Channel left = channelOf(both, 2, 0), right = channelOf(both, 2, 1);
  EXPECT_NEAR(left.hz, 440.0, 5.0);
  EXPECT_GT(left.rms, 4'000.0);
  EXPECT_LT(right.rms, left.rms / 10) << "the right side is silent in the source";

  SoundDecoder mixedDown(1);
  const Channel mixed = channelOf(decodeAll(mixedDown, stereo), 1, 0);
  EXPECT_NEAR(mixed.hz, 440.0, 5.0);
  EXPECT_GT(mixed.rms, left.rms / 4) << "the mix keeps the left side's tone";
  EXPECT_LT(mixed.rms, left.rms * 1.1);

  SoundDecoder copied(2);
  const auto fromMono = decodeAll(copied, tonePackets(1));
  ASSERT_EQ(fromMono.size(), 50u * 960u * 2u);
  for (std::size_t i = 0; i < fromMono.size(); i += 2)
    ASSERT_EQ(fromMono[i], fromMono[i + 1]) << "frame " << i / 2;
}

// A packet that never came: decode(nullptr, 0) conceals one packet's length (20 ms), so the PCM keeps its
// length and the next packet decodes as before; counted apart from the decoded ones.
TEST(SoundDecoder, ALostPacketIsConcealedAndCounted) {
  const auto packets = tonePackets(1);
  SoundDecoder decoder(1);
  std::vector<std::int16_t> pcm(SoundDecoder::kMaxPacketFrames);
  std::size_t total = 0;
  for (std::size_t p = 0; p < packets.size(); ++p) {
    const bool lost = p % 10 == 5;
    total += lost ? decoder.decode(nullptr, 0, pcm.data(), pcm.size())
                  : decoder.decode(packets[p].data.data(), packets[p].data.size(), pcm.data(), pcm.size());
  }
  EXPECT_EQ(total, 50u * 960u) << "each lost packet concealed as 20 ms";
  EXPECT_EQ(decoder.packetsDecoded(), 45u);
  EXPECT_EQ(decoder.packetsConcealed(), 5u);
  SoundDecoder fresh(2);
  std::vector<std::int16_t> two(2 * 960);
  EXPECT_EQ(fresh.decode(nullptr, 0, two.data(), 960), 960u) << "before any packet: 20 ms";
}

TEST(SoundDecoder, BadInputIsRefusedSayingWhy) {
  try {
    SoundDecoder three(3);
    FAIL() << "3 channels taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("1 (mono) or 2 (stereo)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SoundDecoder(0), Error);

  SoundDecoder decoder(1);
  const auto packets = tonePackets(1);
  std::vector<std::int16_t> pcm(SoundDecoder::kMaxPacketFrames);
  try {
    decoder.decode(packets[0].data.data(), packets[0].data.size(), pcm.data(), 480);
    FAIL() << "a 20 ms packet into room for 10 ms";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("decodes to 960"), std::string::npos) << e.what();
  }
  const std::uint8_t code3WithoutCount[] = {0x03};  // a code-3 packet must say its frame count
  EXPECT_THROW(decoder.decode(code3WithoutCount, sizeof code3WithoutCount, pcm.data(), pcm.size()), Error);
  EXPECT_THROW(decoder.decode(packets[0].data.data(), packets[0].data.size(), nullptr, 960), Error);
  EXPECT_EQ(decoder.packetsDecoded(), 0u) << "nothing refused counts";
  // Every 1- and 2-byte packet, and random bytes: refused or decoded, never a crash or an overrun.
  std::uint32_t seed = 12345;
  for (int n = 0; n < 2000; ++n) {
    std::vector<std::uint8_t> junk(1 + n % 60);
    for (auto& b : junk) b = static_cast<std::uint8_t>((seed = seed * 1'103'515'245u + 12'345u) >> 24);
    if (n < 256) junk = {static_cast<std::uint8_t>(n)};
    try {
      EXPECT_LE(decoder.decode(junk.data(), junk.size(), pcm.data(), pcm.size()),
                SoundDecoder::kMaxPacketFrames);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace zerohop
