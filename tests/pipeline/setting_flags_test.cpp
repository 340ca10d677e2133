// The CLI's mapping of the settings the library names (zerohop/setting_error.hpp) to its own flags
// (apps/zerohop/setting_flags.cpp): every setting a SettingError can name gets a flag, so a CLI user
// is always told which option to change, while the library's messages stay in its own terms.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "setting_flags.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {
namespace {

TEST(SettingFlags, EverySettingTheLibraryNamesHasACliFlag) {
  std::set<std::string> names;
  for (const char* setting : setting::kAll) {
    EXPECT_TRUE(names.insert(setting).second) << "two settings share the name " << setting;
    const char* flag = cli::flagFor(setting);
    ASSERT_NE(flag, nullptr) << "no CLI flag for setting '" << setting << "'";
    EXPECT_EQ(std::string(flag).rfind("--", 0), 0u) << setting << " -> " << flag;
  }
  EXPECT_EQ(cli::flagFor("no_such_setting"), nullptr);
}

TEST(SettingFlags, LogLinesAboutASettingNameItsOption) {
  EXPECT_EQ(cli::settingNote(setting::kUdpPorts), "(option --udp-ports MIN-MAX)");
  EXPECT_EQ(cli::settingNote(setting::kWhepToken), "(option --whep-token)");
  EXPECT_EQ(cli::settingNote("no_such_setting"), "(setting no_such_setting)");
}

TEST(SettingFlags, TheFlagsAreServesOwn) {
  EXPECT_STREQ(cli::flagFor(setting::kListen), "--listen HOST:PORT");
  EXPECT_STREQ(cli::flagFor(setting::kEncoder), "--encoder");
  EXPECT_STREQ(cli::flagFor(setting::kGpu), "--gpu");
  EXPECT_STREQ(cli::flagFor(setting::kIceServers), "--ice-server");
  EXPECT_STREQ(cli::flagFor(setting::kWhipUrl), "--whip");
  EXPECT_STREQ(cli::flagFor(setting::kTlsKey), "--tls-key");
}

TEST(SettingFlags, ASettingErrorIsAnErrorThatNamesItsSetting) {
  try {
    throw SettingError(Errc::kInvalidArgument, setting::kJanus, "Janus / RTP target \"x\": no :PORT");
  } catch (const Error& e) {  // a catch of Error& still catches it, with the code and the message
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_STREQ(e.what(), "Janus / RTP target \"x\": no :PORT");
    const auto* about = dynamic_cast<const SettingError*>(&e);
    ASSERT_NE(about, nullptr);
    EXPECT_STREQ(cli::flagFor(about->setting()), "--janus");
  }
}

}  // namespace
}  // namespace zerohop
