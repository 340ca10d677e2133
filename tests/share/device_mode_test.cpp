// Device-memory mode pieces that need no GPU (label unit): the DeviceSlots/DeviceEvents messages,
// a device ring in a program without zerohop::share_cuda, and MPS detection on a fake pipe dir.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "share/wire.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop::share_detail {
namespace {

TEST(DeviceWire, SlotsMessageRoundTrips) {
  DeviceSlotsInfo in;
  in.slotCount = 4;
  in.slotStride = 3 << 20;
  in.allocationBytes = 4 * in.slotStride;
  in.pciBusId = "0000:01:00.0";
  for (std::size_t i = 0; i < in.memHandle.size(); ++i)
    in.memHandle[i] = static_cast<std::uint8_t>(i * 3 + 1);
  const auto bytes = encodeDeviceSlots(in);
  const DeviceSlotsInfo out = decodeDeviceSlots(bytes);
  EXPECT_EQ(out.transport, Transport::kCudaIpcLegacy);
  EXPECT_EQ(out.slotCount, 4u);
  EXPECT_EQ(out.slotStride, in.slotStride);
  EXPECT_EQ(out.allocationBytes, in.allocationBytes);
  EXPECT_EQ(out.pciBusId, in.pciBusId);
  EXPECT_EQ(out.memHandle, in.memHandle);
}

TEST(DeviceWire, SlotsMessageNamesEitherDeviceTransportAndNothingElse) {
  DeviceSlotsInfo in;
  in.slotCount = 2;
  in.slotStride = 4096;
  in.allocationBytes = 2 << 20;  // a VMM allocation is rounded up to the granularity
  in.transport = Transport::kCudaVmmFd;
  EXPECT_EQ(decodeDeviceSlots(encodeDeviceSlots(in)).transport, Transport::kCudaVmmFd);
  in.transport = Transport::kHostMemfd;
  EXPECT_THROW(decodeDeviceSlots(encodeDeviceSlots(in)), Error);
  in.transport = static_cast<Transport>(9);
  EXPECT_THROW(decodeDeviceSlots(encodeDeviceSlots(in)), Error);
}

TEST(DeviceWire, SlotsMessageWithGeometryBeyondTheAllocationIsRejected) {
  DeviceSlotsInfo in;
  in.slotCount = 4;
  in.slotStride = 4096;
  in.allocationBytes = 3 * 4096;
  EXPECT_THROW(decodeDeviceSlots(encodeDeviceSlots(in)), Error);
  in.allocationBytes = 4 * 4096;
  in.slotCount = kMaxDeviceSlots + 1;
  in.allocationBytes = std::uint64_t{in.slotCount} * 4096;
  EXPECT_THROW(decodeDeviceSlots(encodeDeviceSlots(in)), Error);
}

TEST(DeviceWire, EventsMessageRoundTripsAndFitsTheMessageBound) {
  DeviceEventsInfo in;
  in.events.resize(kMaxDeviceSlots);
  for (std::size_t e = 0; e < in.events.size(); ++e) in.events[e].fill(static_cast<std::uint8_t>(e));
  const auto bytes = encodeDeviceEvents(in);
  EXPECT_LE(bytes.size(), kMaxMessageBytes);
  const DeviceEventsInfo out = decodeDeviceEvents(bytes);
  ASSERT_EQ(out.events.size(), in.events.size());
  EXPECT_EQ(out.events.back(), in.events.back());
  auto truncated = bytes;
  truncated.resize(truncated.size() - 64);
  truncated[8] = static_cast<std::uint8_t>(truncated.size() - kHeaderBytes);  // keep the header honest
  truncated[9] = static_cast<std::uint8_t>((truncated.size() - kHeaderBytes) >> 8);
  EXPECT_THROW(decodeDeviceEvents(truncated), Error);
}

TEST(DeviceMode, DeviceRingWithoutTheCudaTransportIsUnsupported) {
  char tmpl[] = "/tmp/zerohop-share-dev-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  ShareOptions o;
  o.directory = tmpl;
  try {
    Publisher pub("devring", SlotLayout::deviceImages(share_test::testLayout(), 3), o);
    FAIL() << "this test program does not link zerohop::share_cuda";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("zerohop::share_cuda"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(tmpl);
}

TEST(DeviceMode, MpsIsNotRunningWithoutAControlPipe) {
  char tmpl[] = "/tmp/zerohop-mps-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const char* old = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string saved = old ? old : "";
  ::setenv("CUDA_MPS_PIPE_DIRECTORY", tmpl, 1);
  MpsStatus s = detectMps();
  EXPECT_FALSE(s.active);
  EXPECT_EQ(s.pipeDirectory, tmpl);
  EXPECT_NE(mpsHandoffNote(s).find("nvidia-cuda-mps-control -d"), std::string::npos);
  // A control pipe left behind by a daemon that is gone is not "running" (no such process here).
  const std::string control = std::string(tmpl) + "/control";
  ASSERT_EQ(::mkfifo(control.c_str(), 0600), 0);
  s = detectMps();
  EXPECT_FALSE(s.active) << s.detail;
  EXPECT_NE(s.detail.find("stale"), std::string::npos) << s.detail;
  if (old) {
    ::setenv("CUDA_MPS_PIPE_DIRECTORY", saved.c_str(), 1);
  } else {
    ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
  }
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace zerohop::share_detail
