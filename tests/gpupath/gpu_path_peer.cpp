// Helper process for the gpu path tests: a reader of a device share ring in a process of its own.
//   zerohop_gpu_path_peer NAME DIR COUNT
// Reads COUNT frames with next(); for each, orders a download after the frame's ready event on its own
// stream and prints "SEQ HASH" (FNV-1a of every pixel byte of each plane, pitch padding excluded),
// then "done". Exit status: 0 success, 1 failure (a line says which), 2 zerohop::Error.
#include <cuda_runtime_api.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu_path_hash.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

using namespace zerohop;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cout << "usage: zerohop_gpu_path_peer NAME DIR COUNT" << std::endl;
    return 3;
  }
  try {
    SubscribeOptions o;
    o.directory = argv[2];
    Subscriber sub(argv[1], o);
    CudaStream stream(0);
    const int count = std::stoi(argv[3]);
    for (int i = 0; i < count; ++i) {
      auto f = sub.next(10s);
      if (!f) {
        std::cout << "timeout" << std::endl;
        return 1;
      }
      const Frame& fr = f->frame();
      if (fr.memory != MemoryKind::kDevice || fr.gpu.readyEvent == nullptr) {
        std::cout << "not a device frame with a ready event" << std::endl;
        return 1;
      }
      cuda::check(cudaStreamWaitEvent(stream.get(), static_cast<cudaEvent_t>(fr.gpu.readyEvent), 0),
                  "cudaStreamWaitEvent(readyEvent)");
      std::vector<std::vector<std::uint8_t>> planes(fr.planeCount);
      for (std::uint32_t p = 0; p < fr.planeCount; ++p) {
        const std::uint32_t rows = p == 0 ? fr.height : fr.height / 2;
        planes[p].resize(std::size_t{fr.width} * rows);
        cuda::check(cudaMemcpy2DAsync(planes[p].data(), fr.width, fr.data[p], fr.pitch[p], fr.width, rows,
                                      cudaMemcpyDeviceToHost, stream.get()),
                    "cudaMemcpy2DAsync(peer download)");
      }
      stream.synchronize();
      if (!f->valid()) continue;  // overwritten while we read it: never report it
      std::cout << fr.sequence << " " << test::hashPlanes(planes) << std::endl;
    }
    std::cout << "done" << std::endl;
    return 0;
  } catch (const Error& e) {
    std::cout << "error " << errcName(e.code()) << ": " << e.what() << std::endl;
    return 2;
  }
}
