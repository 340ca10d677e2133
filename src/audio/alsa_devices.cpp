#include "audio/alsa_devices.hpp"

#include <alsa/asoundlib.h>

#include <cctype>
#include <filesystem>
#include <memory>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::audio {
namespace {

bool allDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// A USB device's sysfs name: "BUS-PORT[.PORT...]" (an interface adds ":CONFIG.IFACE").
bool isUsbDeviceName(std::string_view s) {
  const auto dash = s.find('-');
  if (dash == std::string_view::npos || !allDigits(s.substr(0, dash))) return false;
  const std::string_view ports = s.substr(dash + 1);
  if (ports.empty() || ports.find(':') != std::string_view::npos) return false;
  for (char c : ports)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  return true;
}

struct CtlCloser {
  void operator()(snd_ctl_t* c) const noexcept { snd_ctl_close(c); }
};

std::string usbPathOfCard(int card) {
  std::error_code ec;
  const auto link = std::filesystem::path("/sys/class/sound") / ("card" + std::to_string(card)) / "device";
  const auto real = std::filesystem::canonical(link, ec);
  if (ec) return {};
  return usbPathFromSysfs(real.string());
}

}  // namespace

std::string usbPathFromSysfs(std::string_view devicePath) {
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (pos <= devicePath.size()) {
    const auto slash = devicePath.find('/', pos);
    const auto end = slash == std::string_view::npos ? devicePath.size() : slash;
    if (end > pos) parts.push_back(devicePath.substr(pos, end - pos));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  // The last USB device on the path (the interface below it is the sound function), and the component
  // before its root hub ("usbN"): the host controller, as the kernel names it in bus_info.
  std::size_t dev = parts.size();
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (isUsbDeviceName(parts[i])) dev = i;
  if (dev == parts.size()) return {};
  std::size_t hub = parts.size();
  for (std::size_t i = 0; i < dev; ++i)
    if (parts[i].size() > 3 && parts[i].substr(0, 3) == "usb" && allDigits(parts[i].substr(3))) hub = i;
  if (hub == parts.size() || hub == 0) return {};
  const std::string_view name = parts[dev];
  return "usb-" + std::string(parts[hub - 1]) + "-" + std::string(name.substr(name.find('-') + 1));
}

std::vector<AudioCaptureDevice> probeAudioCaptureDevices() {
  std::vector<AudioCaptureDevice> out;
  int card = -1;
  for (;;) {
    if (const int rc = snd_card_next(&card); rc < 0) {
      throw Error(Errc::kIo, std::string("snd_card_next failed: ") + snd_strerror(rc));
    }
    if (card < 0) break;
    const std::string hw = "hw:" + std::to_string(card);
    snd_ctl_t* raw = nullptr;
    if (const int rc = snd_ctl_open(&raw, hw.c_str(), 0); rc < 0) {
      log::warn("alsa card ", card, ": snd_ctl_open(", hw, ") failed: ", snd_strerror(rc), "; skipped");
      continue;
    }
    std::unique_ptr<snd_ctl_t, CtlCloser> ctl(raw);
    snd_ctl_card_info_t* info = nullptr;
    snd_ctl_card_info_alloca(&info);
    std::string cardId, cardName;
    if (snd_ctl_card_info(ctl.get(), info) == 0) {
      cardId = snd_ctl_card_info_get_id(info);
      cardName = snd_ctl_card_info_get_name(info);
    }
    const std::string usb = usbPathOfCard(card);
    int device = -1;
    for (;;) {
      if (snd_ctl_pcm_next_device(ctl.get(), &device) < 0 || device < 0) break;
      snd_pcm_info_t* pcm = nullptr;
      snd_pcm_info_alloca(&pcm);
      snd_pcm_info_set_device(pcm, static_cast<unsigned>(device));
      snd_pcm_info_set_subdevice(pcm, 0);
      snd_pcm_info_set_stream(pcm, SND_PCM_STREAM_CAPTURE);
      if (snd_ctl_pcm_info(ctl.get(), pcm) < 0) continue;  // this device does not capture
      AudioCaptureDevice d;
      d.card = card;
      d.device = device;
      d.cardId = cardId;
      d.cardName = cardName;
      d.deviceName = snd_pcm_info_get_name(pcm);
      d.usbPath = usb;
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::string describe(const AudioCaptureDevice& d) {
  std::string s = "  alsa:" + d.pcmName() + "  " + d.cardName;
  if (!d.deviceName.empty() && d.deviceName != d.cardName) s += " / " + d.deviceName;
  s += " (" + d.cardId + (d.usbPath.empty() ? std::string() : ", " + d.usbPath) + ")";
  return s;
}

}  // namespace zerohop::audio
