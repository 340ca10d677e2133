#include "audio/opus_encoder.hpp"

#include <gtest/gtest.h>
#include <opus/opus.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "audio/tone_source.hpp"
#include "zerohop/error.hpp"

namespace zerohop::audio {
namespace {

struct DecoderCloser {
  void operator()(OpusDecoder* d) const noexcept { opus_decoder_destroy(d); }
};
using Decoder = std::unique_ptr<OpusDecoder, DecoderCloser>;

Decoder makeDecoder(int channels) {
  int rc = OPUS_OK;
  Decoder d(opus_decoder_create(48'000, channels, &rc));
  EXPECT_EQ(rc, OPUS_OK);
  return d;
}

// `count` 10 ms blocks of the tone `s` describes, the first sample at `startNs`, stamped from there.
std::vector<AudioFrame> blocksOf(const ToneSettings& s, std::int64_t startNs, std::uint64_t count) {
  std::vector<AudioFrame> blocks;
  for (std::uint64_t i = 0; i < count; ++i) {
    AudioFrame f;
    f.channels = s.channels;
    f.samples.resize(480 * s.channels);
    f.captureNs = startNs + static_cast<std::int64_t>(i) * 10'000'000;
    f.sequence = i;
    renderTone(f.samples, startNs, i * 480, s);
    blocks.push_back(std::move(f));
  }
  return blocks;
}

// One second of a 1 kHz tone (no clicks), in 10 ms blocks stamped from `startNs`.
std::vector<AudioFrame> toneBlocks(std::int64_t startNs, std::uint32_t channels, double amplitude = 0.25) {
  ToneSettings s;
  s.channels = channels;
  s.frequencyHz = 1'000;
  s.amplitude = amplitude;
  s.clickNs = 0;
  return blocksOf(s, startNs, 100);
}

// The instant the energy of `samples` (interleaved, the first at `firstNs`) is centred on, counting only
// samples in [fromNs, toNs): where a click is, however the codec spreads it. add() accumulates.
struct EnergyCentre {
  double energy = 0, weightedNs = 0;
  void add(const std::vector<std::int16_t>& samples, std::uint32_t channels, std::int64_t firstNs,
           std::int64_t fromNs, std::int64_t toNs) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const std::int64_t t = firstNs + framesToNs(static_cast<std::int64_t>(i / channels));
      if (t < fromNs || t >= toNs) continue;
      const double e = static_cast<double>(samples[i]) * samples[i];
      energy += e;
      weightedNs += e * static_cast<double>(t - fromNs);
    }
  }
  double atNs(std::int64_t fromNs) const { return static_cast<double>(fromNs) + weightedNs / energy; }
};

TEST(OpusEncoder, RoundTripKeepsATonesEnergyAndPhase) {
  OpusSettings settings;  // mono, 20 ms, 64 kb/s
  OpusAudioEncoder enc(settings);
  Decoder dec = makeDecoder(1);
  std::vector<std::int16_t> in, out;
  for (const auto& b : toneBlocks(1'000'000'000, 1)) {
    in.insert(in.end(), b.samples.begin(), b.samples.end());
    for (const auto& p : enc.encode(b)) {
      std::vector<std::int16_t> pcm(960);
      const int n =
          opus_decode(dec.get(), p.data.data(), static_cast<opus_int32>(p.data.size()), pcm.data(), 960, 0);
      ASSERT_EQ(n, 960);
      out.insert(out.end(), pcm.begin(), pcm.end());
    }
  }
  ASSERT_EQ(out.size(), in.size());
  opus_int32 lookahead = 0;
  // The decoded tone is the input delayed by the encoder's lookahead (6.5 ms): find the lag that
  // matches best and check it is that one, with the tone's energy kept.
  OpusEncoder* probe = opus_encoder_create(48'000, 1, OPUS_APPLICATION_VOIP, nullptr);
  opus_encoder_ctl(probe, OPUS_GET_LOOKAHEAD(&lookahead));
  opus_encoder_destroy(probe);
  const std::size_t from = 4'800, to = in.size() - 2'000;  // past the codec's start-up
  auto correlation = [&](std::size_t lag) {
    double xy = 0, xx = 0, yy = 0;
    for (std::size_t i = from; i < to; ++i) {
      const double x = in[i], y = out[i + lag];
      xy += x * y;
      xx += x * x;
      yy += y * y;
    }
    return std::pair{xy / std::sqrt(xx * yy), yy / xx};
  };
  std::size_t bestLag = 0;
  double best = -1;
  for (std::size_t lag = 0; lag < 1'000; ++lag) {
    if (const double c = correlation(lag).first; c > best) {
      best = c;
      bestLag = lag;
    }
  }
  // A 1 kHz tone repeats every 48 samples: the lag is the lookahead modulo that period, give or take
  // the decoder's resampler (libopus 1.3.1 at 64 kb/s: 3 samples early); 4 samples is 30 degrees of phase.
  const auto d = static_cast<long>((bestLag + 48 - static_cast<std::size_t>(lookahead) % 48) % 48);
  EXPECT_LE(std::min(d, 48 - d), 4) << "decoded tone delayed by " << bestLag << " samples mod 48; lookahead "
                                    << lookahead;
  EXPECT_GT(best, 0.99) << "decoded tone does not match the input";
  const double energyRatio = correlation(bestLag).second;
  EXPECT_GT(energyRatio, 0.8);
  EXPECT_LT(energyRatio, 1.25);
}

TEST(OpusEncoder, TheLookaheadIsLibopusOwn) {
  OpusAudioEncoder enc(OpusSettings{});
  OpusEncoder* probe = opus_encoder_create(48'000, 1, OPUS_APPLICATION_VOIP, nullptr);
  ASSERT_NE(probe, nullptr);
  opus_int32 lookahead = 0;
  opus_encoder_ctl(probe, OPUS_GET_LOOKAHEAD(&lookahead));
  opus_encoder_destroy(probe);
  EXPECT_EQ(enc.lookaheadFrames(), static_cast<std::uint32_t>(lookahead));
  EXPECT_EQ(enc.lookaheadNs(), framesToNs(lookahead));
  EXPECT_GT(enc.lookaheadFrames(), 0u);
}

// 5 ms packets: CELT alone, in its low-delay mode, whose lookahead is 2.5 ms (120 frames at 48 kHz).
TEST(OpusEncoder, FiveMillisecondPacketsUseTheLowDelayModeAndItsShorterLookahead) {
  OpusSettings settings;
  settings.frameMs = 5;
  OpusAudioEncoder enc(settings);
  EXPECT_EQ(enc.lookaheadFrames(), 120u);
  EXPECT_EQ(enc.frameSize(), 240u);
  AudioFrame block;
  block.channels = 1;
  block.captureNs = 1'000'000'000;
  block.samples.assign(480, 1000);
  const auto packets = enc.encode(block);
  ASSERT_EQ(packets.size(), 2u) << "a 10 ms block is two 5 ms packets";
  EXPECT_EQ(packets[0].frames, 240u);
  EXPECT_EQ(packets[1].captureNs - packets[0].captureNs, 5'000'000);
  EXPECT_EQ(packets[0].captureNs, block.captureNs - 2'500'000) << "the stamp less the 2.5 ms lookahead";
}

// The claim the stamps make: a packet's decoded sound, laid out from the packet's stamp, sits where the
// sound was captured. The tone's click (silence around it) is located by its energy in the input, by
// the blocks' stamps, and in the decoded packets, by theirs; without the lookahead taken out, the
// decoded click would sit 6.5 ms late.
TEST(OpusEncoder, DecodedSoundPlaysAtItsCaptureInstant) {
  for (const std::uint32_t frameMs : {5u, 10u, 20u}) {
    for (const std::uint32_t channels : {1u, 2u}) {
      SCOPED_TRACE(std::to_string(frameMs) + " ms, " + std::to_string(channels) + " channel(s)");
      OpusSettings settings;
      settings.frameMs = frameMs;
      settings.channels = channels;
      OpusAudioEncoder enc(settings);
      ToneSettings tone;
      tone.channels = channels;
      tone.amplitude = 0;  // the click alone: its energy is where it is
      // Blocks from 0.5 s to 1.5 s of the capture clock: the click at the 1 s marker, half a second in.
      const std::int64_t startNs = 500'000'000, clickNs = 1'000'000'000;
      const std::int64_t fromNs = clickNs - 20'000'000, toNs = clickNs + 40'000'000;
      Decoder dec = makeDecoder(static_cast<int>(channels));
      EnergyCentre in, out;
      for (const auto& b : blocksOf(tone, startNs, 100)) {
        in.add(b.samples, channels, b.captureNs, fromNs, toNs);
        for (const auto& p : enc.encode(b)) {
          std::vector<std::int16_t> pcm(static_cast<std::size_t>(p.frames) * channels);
          ASSERT_EQ(opus_decode(dec.get(), p.data.data(), static_cast<opus_int32>(p.data.size()), pcm.data(),
                                static_cast<int>(p.frames), 0),
                    static_cast<int>(p.frames));
          out.add(pcm, channels, p.captureNs, fromNs, toNs);
        }
      }
      ASSERT_GT(in.energy, 0) << "no click in the input";
      ASSERT_GT(out.energy, 0.3 * in.energy) << "the click did not survive the codec";
      const double lateNs = out.atNs(fromNs) - in.atNs(fromNs);
      // The codec spreads the click's energy a little, more after it than before (libopus 1.3.1, 64 kb/s:
      // 0.10-0.16 ms late mono, 0.38-0.49 ms stereo); 1 ms is 48 samples, the lookahead 312.
      EXPECT_LT(std::abs(lateNs), 1'000'000.0)
          << "the decoded click plays " << lateNs / 1e6 << " ms after it was captured (lookahead "
          << enc.lookaheadNs() / 1e6 << " ms)";
    }
  }
}

TEST(OpusEncoder, PacketsCarryTheCaptureInstantOfTheirFirstSampleCountedInSamples) {
  OpusSettings settings;
  settings.channels = 2;
  settings.frameMs = 10;
  OpusAudioEncoder enc(settings);
  std::vector<OpusPacket> packets;
  auto blocks = toneBlocks(5'000'000'000, 2);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (i >= 50) blocks[i].captureNs += 1'000'000'000;  // 50 blocks went missing upstream: a gap of 1 s
    blocks[i].captureNs += (i % 2 == 0 ? 1 : -1) * 2'000'000;  // a device's jitter: +-2 ms, not a gap
    for (auto& p : enc.encode(blocks[i])) packets.push_back(std::move(p));
  }
  ASSERT_EQ(packets.size(), 100u);  // 10 ms packets of 10 ms blocks
  for (std::size_t k = 0; k < packets.size(); ++k) {
    EXPECT_EQ(packets[k].frames, 480u);
    EXPECT_EQ(packets[k].sequence, k);
    // From the first block's stamp (+2 ms of jitter), then from the first block after the gap (+2 ms);
    // less the lookahead: the decoded sound starts that much before the packet's first input sample.
    // The jitter reaches them only as its average, slewed in at most 5 us a block: here toward the
    // stamps' average, 2 ms earlier than the origin, so at most 5 us a block earlier than counted.
    const std::int64_t origin = k >= 50 ? 6'000'000'000 + 2'000'000 : 5'000'000'000 + 2'000'000;
    const std::int64_t counted = origin + static_cast<std::int64_t>(k) * 10'000'000 - enc.lookaheadNs();
    const auto blocksSinceOrigin = static_cast<std::int64_t>(k >= 50 ? k - 50 : k);
    EXPECT_LE(packets[k].captureNs, counted) << k;
    EXPECT_GE(packets[k].captureNs, counted - 5'000 * blocksSinceOrigin) << k;
  }
}

// A sound card whose clock runs 200 ppm slow against CLOCK_MONOTONIC (its 10 ms blocks are stamped
// 10.002 ms apart): the packet stamps follow the device's stamps smoothly, never by a jump, which a
// receiver would hear as a gap or an overlap of sound (RTP timestamps come from these stamps).
TEST(OpusEncoder, ADriftingCardClockIsFollowedSmoothlyWithoutAJump) {
  OpusAudioEncoder enc(OpusSettings{});  // 20 ms packets
  auto blocks = toneBlocks(1'000'000'000, 1);
  std::vector<OpusPacket> packets;
  std::int64_t lastBlockNs = 0;
  for (int second = 0; second < 60; ++second) {  // a minute: 12 ms of drift, past the 5 ms of a jump
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      AudioFrame b = blocks[i];
      const std::int64_t index = second * 100 + static_cast<std::int64_t>(i);
      b.captureNs = 1'000'000'000 + index * 10'002'000;
      lastBlockNs = b.captureNs;
      for (auto& p : enc.encode(b)) packets.push_back(std::move(p));
    }
  }
  ASSERT_EQ(packets.size(), 3000u);
  std::int64_t widest = 0;
  for (std::size_t k = 1; k < packets.size(); ++k)
    widest = std::max<std::int64_t>(widest,
                                    std::llabs(packets[k].captureNs - packets[k - 1].captureNs - 20'000'000));
  EXPECT_LE(widest, 10'000) << "a step of the stamps more than 10 us off 20 ms: a jump";
  // The last packet began at the second-to-last block, stamped by the device; the slew keeps up with
  // 200 ppm (4 us a 20 ms packet) with an error of a few 64ths of a block's.
  const std::int64_t deviceNs = lastBlockNs - 10'002'000 - enc.lookaheadNs();
  EXPECT_NEAR(packets.back().captureNs, deviceNs, 500'000) << "the stamps did not follow the device's clock";
}

TEST(OpusEncoder, TwentyMillisecondPacketsSpanTwoBlocks) {
  OpusAudioEncoder enc(OpusSettings{});
  auto blocks = toneBlocks(0, 1);
  EXPECT_TRUE(enc.encode(blocks[0]).empty());
  const auto p = enc.encode(blocks[1]);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].frames, 960u);
  EXPECT_EQ(p[0].captureNs, -enc.lookaheadNs());
}

TEST(OpusEncoder, FecRecoversALostPacketFromTheNext) {
  OpusSettings settings;
  settings.inbandFec = true;
  settings.expectedLossPercent = 20;
  OpusAudioEncoder enc(settings);
  std::vector<OpusPacket> packets;
  for (const auto& b : toneBlocks(0, 1))
    for (auto& p : enc.encode(b)) packets.push_back(std::move(p));
  ASSERT_EQ(packets.size(), 50u);
  Decoder dec = makeDecoder(1);
  std::vector<std::int16_t> pcm(960);
  for (std::size_t k = 0; k < 20; ++k)
    ASSERT_EQ(opus_decode(dec.get(), packets[k].data.data(), static_cast<opus_int32>(packets[k].data.size()),
                          pcm.data(), 960, 0),
              960);
  // Packet 20 is lost: its sound comes from the redundancy in packet 21 (decode_fec = 1).
  ASSERT_EQ(opus_decode(dec.get(), packets[21].data.data(), static_cast<opus_int32>(packets[21].data.size()),
                        pcm.data(), 960, 1),
            960);
  double energy = 0;
  for (auto v : pcm) energy += static_cast<double>(v) * v;
  const double toneEnergy = 960 * (0.25 * 32'767) * (0.25 * 32'767) / 2;
  EXPECT_GT(energy, 0.3 * toneEnergy) << "the lost packet was not recovered from FEC";
}

// Bytes of the packets after the first half second of silence.
std::size_t silenceBytes(bool dtx) {
  OpusSettings settings;
  settings.dtx = dtx;
  OpusAudioEncoder enc(settings);
  std::size_t bytes = 0, packets = 0;
  for (auto& b : toneBlocks(0, 1, 0.0)) {
    for (const auto& p : enc.encode(b)) {
      if (p.sequence >= 25) {
        ++packets;
        bytes += p.data.size();
      }
    }
  }
  EXPECT_EQ(packets, 25u);
  return bytes;
}

TEST(OpusEncoder, DtxSendsAlmostNothingDuringSilence) {
  const std::size_t with = silenceBytes(true), without = silenceBytes(false);
  // Measured with libopus 1.3.1: 99 bytes against 1887 (DTX sends 1-byte packets and a comfort-noise
  // update every 400 ms).
  EXPECT_LT(with * 5, without) << "DTX on: " << with << " bytes, off: " << without;
  EXPECT_LT(with, 25u * 8) << "more than 8 bytes a packet of silence with DTX on";
}

TEST(OpusEncoder, RefusesSettingsItCannotUseAndSaysWhich) {
  OpusSettings s;
  s.channels = 3;
  try {
    OpusAudioEncoder enc(s);
    FAIL() << "3 channels accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("1 or 2"), std::string::npos) << e.what();
  }
  OpusAudioEncoder enc(OpusSettings{});
  EXPECT_THROW(enc.setBitrate(1'000), Error);
  EXPECT_EQ(enc.settings().bitrateBps, 64'000u);
  enc.setBitrate(32'000);
  enc.setExpectedLoss(10);
  enc.setInbandFec(false);
  enc.setDtx(true);
  EXPECT_EQ(enc.settings().bitrateBps, 32'000u);
  EXPECT_EQ(enc.settings().expectedLossPercent, 10u);
  AudioFrame stereo;
  stereo.channels = 2;
  stereo.samples.resize(960);
  EXPECT_THROW(enc.encode(stereo), Error);
}

}  // namespace
}  // namespace zerohop::audio
