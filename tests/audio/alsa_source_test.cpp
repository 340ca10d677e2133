#include "audio/alsa_source.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>
#include <vector>

#include "alsa_test_config.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop::audio {
namespace {

using namespace std::chrono_literals;
using test::alsaTestConfig;

AlsaSettings settingsFor(const std::string& device, std::uint32_t channels = 1, std::uint32_t periods = 4) {
  AlsaSettings s;
  s.device = device;
  s.channels = channels;
  s.periods = periods;
  return s;
}

// Where a test checks that nothing was lost, the device holds 250 ms: a test process descheduled
// for a while on a busy machine (ASan, TSan, 2 cores) must not fail it.
constexpr std::uint32_t kRoomyPeriods = 25;

Error openError(const std::string& device) {
  try {
    AlsaSource source(settingsFor(device));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << device << " opened";
  return Error(Errc::kInternal, "opened");
}

TEST(AlsaSource, ReadsKnownSamplesFromAFileFedPcm) {
  const auto& cfg = alsaTestConfig();
  std::vector<std::int16_t> known(4'800);
  for (std::size_t i = 0; i < known.size(); ++i)
    known[i] = static_cast<std::int16_t>((i * 37) % 65'536 - 32'768);
  std::ofstream(cfg.knownSamples(), std::ios::binary)
      .write(reinterpret_cast<const char*>(known.data()), static_cast<std::streamsize>(known.size() * 2));

  AlsaSource source(settingsFor("zh_known"));
  EXPECT_EQ(source.info().name, "alsa:zh_known");
  std::vector<std::int16_t> got;
  for (int i = 0; i < 10; ++i) {
    auto block = source.next(2s);
    ASSERT_TRUE(block) << "block " << i << " did not come within 2 s";
    EXPECT_EQ(block->frameCount(), 480u);
    EXPECT_EQ(block->sequence, static_cast<std::uint64_t>(i));
    EXPECT_LE(block->captureNs, monotonicNs());
    got.insert(got.end(), block->samples.begin(), block->samples.end());
  }
  EXPECT_EQ(got, known);
  EXPECT_EQ(source.counters().blocks, 10u);
  EXPECT_EQ(source.counters().overruns, 0u);
}

TEST(AlsaSource, CapturesInRealTimeStampedOnTheCaptureClock) {
  alsaTestConfig();
  AlsaSource source(settingsFor("zh_mic", 2, kRoomyPeriods));
  std::uint64_t frame = 0;
  for (int i = 0; i < 10; ++i) {
    auto block = source.next(2s);
    ASSERT_TRUE(block) << "block " << i;
    const std::int64_t now = monotonicNs();
    // Its first sample was captured at least one block's length ago, and not long before that.
    EXPECT_LE(block->captureNs, now - block->durationNs());
    EXPECT_GT(block->captureNs, now - 500'000'000);
    ASSERT_EQ(block->samples.size(), 960u);
    for (std::size_t k = 0; k < 480; ++k, ++frame) {  // the clock PCM's ramp, unbroken, on both channels
      ASSERT_EQ(block->samples[2 * k], static_cast<std::int16_t>(frame % 32'768)) << "frame " << frame;
      ASSERT_EQ(block->samples[2 * k + 1], block->samples[2 * k]);
    }
  }
}

TEST(AlsaSource, OverrunIsRecoveredAndCounted) {
  alsaTestConfig();
  AlsaSource source(settingsFor("zh_mic"));
  ASSERT_TRUE(source.next(2s));
  // The stimulus: not reading for 200 ms, five times the 40 ms the device holds.
  std::this_thread::sleep_for(200ms);
  auto after = source.next(2s);
  ASSERT_TRUE(after) << "no block after the overrun";
  EXPECT_EQ(after->frameCount(), 480u);
  // One for the stimulus; a machine slow enough (sanitizers beside other tests) to miss the 40 ms again
  // while the capture restarts overruns once more, and that is counted too.
  EXPECT_GE(source.counters().overruns, 1u);
  EXPECT_LE(source.counters().overruns, 3u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(source.next(2s)) << "capture did not go on after the overrun";
}

TEST(AlsaSource, MissingDeviceSaysWhichAndHowToFindOne) {
  alsaTestConfig();
  for (const std::string device : {"hw:29,0", "zh_no_such_pcm"}) {
    const Error e = openError(device);
    EXPECT_EQ(e.code(), Errc::kNotFound) << e.what();
    EXPECT_NE(std::string(e.what()).find(device), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("zerohop probe"), std::string::npos) << e.what();
  }
}

TEST(AlsaSource, BusyDeviceIsUnavailableAndSaysSo) {
  alsaTestConfig();
  AlsaSource first(settingsFor("zh_mic"));
  const Error e = openError("zh_mic");
  EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
  EXPECT_NE(std::string(e.what()).find("in use by another program"), std::string::npos) << e.what();
}

TEST(AlsaSource, DeviceWithout48kHzIsRefusedWithTheFix) {
  alsaTestConfig();
  const Error e = openError("zh_44k");
  EXPECT_EQ(e.code(), Errc::kUnsupported) << e.what();
  EXPECT_NE(std::string(e.what()).find("48000 Hz (it offers 44100..44100 Hz)"), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("plug"), std::string::npos) << e.what();
}

TEST(AlsaSource, PlugResamplesADeviceWithout48kHz) {
  alsaTestConfig();
  AlsaSource source(settingsFor("zh_44k_plug", 1, kRoomyPeriods));
  for (int i = 0; i < 20; ++i) {
    auto block = source.next(2s);
    ASSERT_TRUE(block) << "block " << i;
    EXPECT_EQ(block->frameCount(), 480u);
  }
  EXPECT_EQ(source.counters().overruns, 0u);
}

TEST(AlsaSource, OpenedBySpecADeviceWithout48kHzIsResampledThroughPlug) {
  alsaTestConfig();
  auto source = openAlsaSource(settingsFor("zh_44k", 1, kRoomyPeriods));
  EXPECT_EQ(source->info().name, "alsa:plug:zh_44k");
  for (int i = 0; i < 5; ++i) {
    auto block = source->next(2s);
    ASSERT_TRUE(block) << "block " << i;
    EXPECT_EQ(block->frameCount(), 480u);
  }
  EXPECT_EQ(convertingDevice("hw:1,0"), "plughw:1,0");
  EXPECT_EQ(convertingDevice("plughw:1,0"), "");
  EXPECT_EQ(convertingDevice("default"), "");
}

TEST(AlsaSource, ResumesAfterTheDeviceIsUnpluggedAndBack) {
  const auto& cfg = alsaTestConfig();
  auto source =
      openAlsaSource(settingsFor("zh_mic"), {std::chrono::milliseconds(10), std::chrono::milliseconds(50)});
  ASSERT_TRUE(source->next(2s));

  std::ofstream(cfg.goneFile()).put('x');  // unplugged
  // Blocks stop: next() keeps answering (nullopt) instead of throwing.
  const auto unplugDeadline = std::chrono::steady_clock::now() + 5s;
  while (source->next(50ms)) ASSERT_LT(std::chrono::steady_clock::now(), unplugDeadline) << "still capturing";
  EXPECT_GE(source->counters().errors, 1u);
  EXPECT_EQ(source->counters().reopens, 0u);

  std::filesystem::remove(cfg.goneFile());  // plugged back
  std::optional<AudioFrame> block;
  const auto replugDeadline = std::chrono::steady_clock::now() + 5s;
  while (!block && std::chrono::steady_clock::now() < replugDeadline) block = source->next(100ms);
  ASSERT_TRUE(block) << "capture did not resume within 5 s of the device coming back";
  EXPECT_EQ(source->counters().reopens, 1u);
}

}  // namespace
}  // namespace zerohop::audio
