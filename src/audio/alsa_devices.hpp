#pragma once
// The ALSA capture devices of this machine (card/device enumeration through alsa-lib's control
// interface), each with its USB path when the card is a USB audio device, in the form V4L2 reports a
// camera's bus_info ("usb-0000:00:14.0-1.2"), so a camera's microphone can be matched to the camera.
// Thread-safety: reentrant.

#include <string>
#include <string_view>
#include <vector>

namespace zerohop::audio {

struct AudioCaptureDevice {
  int card = -1;
  int device = -1;
  std::string cardId;      ///< "C920"
  std::string cardName;    ///< "HD Pro Webcam C920"
  std::string deviceName;  ///< the PCM's own name, "USB Audio"
  std::string usbPath;     ///< "usb-0000:00:14.0-1.2", empty when not a USB device
  /// The string to give `alsa:`: "hw:CARD,DEV" (plughw: converts and resamples).
  std::string pcmName() const { return "hw:" + std::to_string(card) + "," + std::to_string(device); }
};

/// Every capture PCM of every card. Empty when there is no sound card; throws Error (kIo) only when
/// alsa-lib fails on a card it reported.
std::vector<AudioCaptureDevice> probeAudioCaptureDevices();

/// The V4L2-style USB path ("usb-<host controller>-<port path>") of a sysfs device path, e.g.
/// "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1.2/1-1.2:1.1" -> "usb-0000:00:14.0-1.2";
/// empty when the path is not under a USB device. Pure: the caller resolves the symlink.
std::string usbPathFromSysfs(std::string_view devicePath);

/// One line a device, as `zerohop probe` prints it.
std::string describe(const AudioCaptureDevice& d);

}  // namespace zerohop::audio
