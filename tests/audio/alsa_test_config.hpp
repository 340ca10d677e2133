#pragma once
// The capture PCMs the audio tests open, defined in a test-local ALSA configuration (alsa.conf, then
// ours: ALSA_CONFIG_PATH), all going through the same snd_pcm_* calls a sound card does:
//   zh_known       a file-fed PCM (alsa-lib's file plugin over null) that captures known samples
//   zh_mic         the test clock PCM (clock_pcm_plugin.c): real-time, overruns, unplug (gone file), busy
//   (lock) zh_44k         the clock PCM offering only 44.1 kHz;  zh_44k_plug  the same behind alsa-lib's plug
//   (resampled)
// Written once per process into a directory named after the process, removed at exit.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "beside_program.hpp"

namespace zerohop::audio::test {

struct AlsaTestConfig {
  std::filesystem::path dir;
  std::filesystem::path knownSamples() const { return dir / "known.raw"; }
  std::filesystem::path goneFile() const { return dir / "mic.gone"; }

  AlsaTestConfig() {
    dir = std::filesystem::path(::testing::TempDir()) / ("zh_audio_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string d = dir.string();
    std::ofstream conf(dir / "asound.conf");
    conf << "pcm_type.zhclock { lib \"" << zerohop::testing::besideProgram(ZEROHOP_TEST_CLOCK_PCM_PLUGIN)
         << "\" }\n"
         << "pcm.zh_known { type file slave { pcm { type null } } file \"/dev/null\" infile \"" << d
         << "/known.raw\" format \"raw\" }\n"
         << "pcm.zh_mic { type zhclock gone \"" << d << "/mic.gone\" lock \"" << d << "/mic.lock\" }\n"
         << "pcm.zh_44k { type zhclock rate 44100 }\n"
         << "pcm.zh_44k_plug { type plug slave.pcm \"zh_44k\" }\n";
    conf.close();
    const std::string path = "/usr/share/alsa/alsa.conf:" + (dir / "asound.conf").string();
    ::setenv("ALSA_CONFIG_PATH", path.c_str(), 1);
  }
  ~AlsaTestConfig() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

/// The process's configuration, set up before the first snd_pcm_open.
inline const AlsaTestConfig& alsaTestConfig() {
  static const AlsaTestConfig config;
  return config;
}

}  // namespace zerohop::audio::test
