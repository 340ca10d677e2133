// zerohop_opus_bench: the CPU one sound costs, per packet: the Opus encode serve runs
// (OpusAudioEncoder: 48 kHz, 64 kb/s, in-band FEC, complexity 5) and a reader's decode of it
// (SoundDecoder), mono and stereo, with 20, 10 and 5 ms packets (serve --audio-frame-ms), on the test
// tone. Thread CPU time per packet, median and p99, and the share of one core that is (the packet's CPU
// over its duration). Plain main; prints a markdown table.
//
// usage: zerohop_opus_bench [--seconds N]   (default 60: 3,000 packets a row of 20 ms, 12,000 of 5 ms)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "audio/opus_encoder.hpp"
#include "audio/tone_source.hpp"
#include "zerohop/sound_decoder.hpp"

using namespace zerohop;

namespace {

std::int64_t threadCpuNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

struct Row {
  std::uint32_t channels;
  std::vector<double> encodeUs, decodeUs;
  std::size_t bytes = 0;
};

Row measure(std::uint32_t channels, std::uint32_t frameMs, int seconds) {
  Row row{channels, {}, {}};
  audio::ToneSettings tone;
  tone.channels = channels;
  audio::OpusSettings settings;
  settings.channels = channels;
  settings.frameMs = frameMs;
  audio::OpusAudioEncoder encoder(settings);
  SoundDecoder decoder(channels);
  std::vector<std::int16_t> pcm(SoundDecoder::kMaxPacketFrames * channels);
  std::int64_t blockCpu = 0;
  for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(seconds) * 100; ++i) {  // 10 ms blocks
    audio::AudioFrame block;
    block.channels = channels;
    block.captureNs = static_cast<std::int64_t>(i) * 10'000'000;
    block.sequence = i;
    block.samples.resize(480 * channels);
    audio::renderTone(block.samples, 0, i * 480, tone);
    const std::int64_t t0 = threadCpuNs();
    std::vector<audio::OpusPacket> packets = encoder.encode(block);
    blockCpu += threadCpuNs() - t0;
    // A packet's encode: the CPU of the blocks it waited for, shared between the packets a block made
    // (5 ms packets: two a 10 ms block).
    const double share =
        packets.empty() ? 0 : static_cast<double>(blockCpu) / static_cast<double>(packets.size());
    if (!packets.empty()) blockCpu = 0;
    for (const audio::OpusPacket& p : packets) {
      row.encodeUs.push_back(share / 1e3);
      row.bytes += p.data.size();
      const std::int64_t d0 = threadCpuNs();
      decoder.decode(p.data.data(), p.data.size(), pcm.data(), SoundDecoder::kMaxPacketFrames);
      row.decodeUs.push_back(static_cast<double>(threadCpuNs() - d0) / 1e3);
    }
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 60;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--seconds N]\n", argv[0]);
      return 2;
    }
  }
  if (seconds < 1) seconds = 1;
  std::printf(
      "| sound | packet | packets | kb/s | encode µs p50 / p99 | decode µs p50 / p99 | encode + decode, %% "
      "of a core |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const std::uint32_t channels : {1u, 2u}) {
    for (const std::uint32_t frameMs : {20u, 10u, 5u}) {
      const Row r = measure(channels, frameMs, seconds);
      const double e50 = percentile(r.encodeUs, 0.5), d50 = percentile(r.decodeUs, 0.5);
      std::printf("| %s | %u ms | %zu | %.0f | %.1f / %.1f | %.1f / %.1f | %.2f %% |\n",
                  channels == 1 ? "mono" : "stereo", frameMs, r.encodeUs.size(),
                  static_cast<double>(r.bytes) * 8 / 1000 / seconds, e50, percentile(r.encodeUs, 0.99), d50,
                  percentile(r.decodeUs, 0.99), (e50 + d50) / (frameMs * 1000.0) * 100);
    }
  }
  return 0;
}
