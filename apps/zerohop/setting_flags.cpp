#include "setting_flags.hpp"

#include "zerohop/setting_error.hpp"

namespace zerohop::cli {

const char* flagFor(const std::string& setting) {
  struct Flag {
    const char* setting;
    const char* flag;
  };
  // serve's options, and the [serve] keys of --config that set them (the same names without "--").
  static constexpr Flag kFlags[] = {
      {setting::kListen, "--listen HOST:PORT"},
      {setting::kEncoder, "--encoder"},
      {setting::kSource, "--source"},
      {setting::kGpu, "--gpu"},
      {setting::kTlsCert, "--tls-cert"},
      {setting::kTlsKey, "--tls-key"},
      {setting::kIceServers, "--ice-server"},
      {setting::kTurnSecret, "--turn-secret"},
      {setting::kIceHost, "--ice-host"},
      {setting::kUdpPorts, "--udp-ports MIN-MAX"},
      {setting::kPlayoutDelay, "--playout-delay"},
      {setting::kWhipUrl, "--whip"},
      {setting::kJanus, "--janus"},
      {setting::kRenditions, "--renditions"},
      {setting::kWhepToken, "--whep-token"},
  };
  for (const Flag& f : kFlags) {
    if (setting == f.setting) return f.flag;
  }
  return nullptr;
}

std::string settingNote(std::string_view setting) {
  const char* flag = flagFor(std::string(setting));
  return flag ? "(option " + std::string(flag) + ")" : "(setting " + std::string(setting) + ")";
}

}  // namespace zerohop::cli
