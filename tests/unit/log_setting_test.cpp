// Log lines about one setting carry it (zerohop/setting_error.hpp's log::setSettingNote,
// core/setting_log.hpp): "(setting NAME)" by default, a front end's own note when it installs one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/setting_log.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {
namespace {

// Captures the lines the library writes while it lives; restores stderr and the default note after.
class CapturedLog {
 public:
  CapturedLog() {
    log::setSink([this](log::Level, std::string_view line) { lines.emplace_back(line); });
  }
  ~CapturedLog() {
    log::setSink(nullptr);
    log::setSettingNote(nullptr);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::vector<std::string> lines;  // written on this thread only: the log calls below are synchronous
};

TEST(LogSetting, ALineAboutASettingEndsWithItsNameByDefault) {
  CapturedLog log;
  log::warnAbout(setting::kRenditions, "renditions: the nvenc path has no ladder yet");
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.lines[0], "renditions: the nvenc path has no ladder yet (setting renditions)");
}

TEST(LogSetting, AFrontEndsNoteReplacesTheDefault) {
  CapturedLog log;
  log::setSettingNote([](std::string_view s) { return "(option --" + std::string(s) + ")"; });
  log::warnAbout(setting::kUdpPorts, "stream: the UDP port range ", 1, "-", 2, " has 2 ports");
  log::setSettingNote([](std::string_view) { return std::string(); });
  log::warnAbout(setting::kSource, "plain");
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_EQ(log.lines[0], "stream: the UDP port range 1-2 has 2 ports (option --udp_ports)");
  EXPECT_EQ(log.lines[1], "plain") << "an empty note adds nothing";
}

TEST(LogSetting, ALineBelowTheLevelIsNotWritten) {
  CapturedLog log;
  const log::Level before = log::level();
  log::setLevel(log::Level::kError);
  log::warnAbout(setting::kGpu, "not written");
  log::setLevel(before);
  EXPECT_TRUE(log.lines.empty());
}

}  // namespace
}  // namespace zerohop
