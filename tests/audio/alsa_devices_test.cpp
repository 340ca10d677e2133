#include "audio/alsa_devices.hpp"

#include <gtest/gtest.h>

namespace zerohop::audio {
namespace {

TEST(AlsaDevices, UsbPathMatchesWhatV4l2ReportsForTheCamera) {
  // A webcam's microphone: the sound interface 1.1 of USB device 1-1.2 on controller 0000:00:14.0; the
  // same camera's V4L2 bus_info reads "usb-0000:00:14.0-1.2".
  EXPECT_EQ(usbPathFromSysfs("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1.2/1-1.2:1.1"),
            "usb-0000:00:14.0-1.2");
  EXPECT_EQ(usbPathFromSysfs("/sys/devices/pci0000:00/0000:00:14.0/usb3/3-4/3-4:1.3"), "usb-0000:00:14.0-4");
  // Behind a PCI bridge; on a SoC (no PCI).
  EXPECT_EQ(usbPathFromSysfs("/sys/devices/pci0000:00/0000:00:1c.0/0000:02:00.0/usb2/2-1/2-1:1.2"),
            "usb-0000:02:00.0-1");
  EXPECT_EQ(usbPathFromSysfs("/sys/devices/platform/soc/fe980000.usb/usb1/1-1/1-1.3/1-1.3:1.3"),
            "usb-fe980000.usb-1.3");
}

TEST(AlsaDevices, NoUsbPathForACardThatIsNotUsb) {
  EXPECT_EQ(usbPathFromSysfs("/sys/devices/pci0000:00/0000:00:1f.3"), "");
  EXPECT_EQ(usbPathFromSysfs(""), "");
}

TEST(AlsaDevices, ProbeAnswersWithoutAnErrorWhateverTheMachineHas) {
  // CI has no sound card at all: the answer is an empty list, not an error.
  const auto devices = probeAudioCaptureDevices();
  for (const auto& d : devices) {
    EXPECT_GE(d.card, 0);
    EXPECT_GE(d.device, 0);
    EXPECT_EQ(d.pcmName(), "hw:" + std::to_string(d.card) + "," + std::to_string(d.device));
    EXPECT_NE(describe(d).find("alsa:hw:"), std::string::npos);
  }
}

}  // namespace
}  // namespace zerohop::audio
