// Device-ring publisher for the Python device-mode test (test_share_device.py): NV12 96x48 frames
// (share_test::testLayout) written IN PLACE into a device ring by a kernel (the pattern of
// tests/share/share_test_support.hpp, from the frame sequence), committed with the writing stream,
// one per millisecond until killed. Prints "ready" once the share exists, "nogpu REASON" (exit 77)
// without a usable CUDA device. Usage: zerohop_py_share_device_publisher NAME DIR SLOTS
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "gpu/cuda_handles.hpp"
#include "gpu_pattern.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

using namespace zerohop;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  log::setLevel(log::Level::kWarn);
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " NAME DIR SLOTS\n";
    return 3;
  }
  const GpuInfo gpu = probeGpu();
  if (!gpu.available) {
    std::cout << "nogpu " << gpu.reason << std::endl;
    return 77;
  }
  try {
    const ImageLayout layout = share_test::testLayout();
    ShareOptions o;
    o.directory = argv[2];
    Publisher pub(
        argv[1],
        SlotLayout::deviceImages(layout, static_cast<std::uint32_t>(std::stoul(argv[3])), gpu.device), o);
    CudaStream stream(gpu.device);
    std::cout << "ready" << std::endl;
    for (std::uint64_t seq = 1;; ++seq) {
      WriteSlot ws = pub.acquireWrite();
      share_test::launchFillPattern(ws.frame(), layout, seq, stream.get());
      Frame meta;
      meta.sequence = seq;
      meta.times.mark(Stage::kCapture, static_cast<std::int64_t>(seq) * 1000);
      pub.commit(std::move(ws), meta, stream.get());
      std::this_thread::sleep_for(1ms);
    }
  } catch (const Error& e) {
    std::cout << "error " << errcName(e.code()) << ": " << e.what() << std::endl;
    return 2;
  }
}
