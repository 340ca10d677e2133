#include <gtest/gtest.h>

#include "beside_program.hpp"
#include "audio/alsa_devices.hpp"
#include "beside_program.hpp"
#include "child_process.hpp"

namespace zerohop::audio {
namespace {

using namespace std::chrono_literals;

TEST(AudioProbeCli, ListsTheCaptureDevicesThisMachineHas) {
  testing::ChildProcess probe({testing::besideProgram(ZEROHOP_CLI_PATH), "probe"});
  const auto code = probe.waitExit(60s);
  ASSERT_TRUE(code) << "zerohop probe did not finish within 60 s";
  ASSERT_EQ(*code, 0) << probe.stderrText();
  const std::string& out = probe.stdoutText();
  ASSERT_NE(out.find("\naudio capture\n"), std::string::npos) << out;
  const auto devices = probeAudioCaptureDevices();  // what the machine has, asked the same way
  if (devices.empty()) {
    EXPECT_NE(out.find("no capture devices"), std::string::npos) << out;
  }
  for (const auto& d : devices) EXPECT_NE(out.find(describe(d)), std::string::npos) << out;
}

}  // namespace
}  // namespace zerohop::audio
