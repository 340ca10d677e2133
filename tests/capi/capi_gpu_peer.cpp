// The reading side of the C API's gpu test, in a process of its own, through the C API only (plus a
// checking kernel): capi_gpu_peer NAME DIR COUNT. For each of COUNT frames: zh_reader_next, make its
// own stream wait on the frame's event (zh_frame_wait_on_stream), count mismatching bytes with a
// kernel on that stream, zh_frame_check after the kernel finished, release. Prints
// "frame SEQ mismatches N intact B" per frame and "done N"; exit 0 when all frames were intact and exact.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "gpu_pattern.hpp"
#include "zerohop/zerohop.h"

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  zh_reader_options o = ZH_READER_OPTIONS_INIT;
  o.directory = argv[2];
  o.open_timeout_ms = 10000;
  zh_reader* reader = nullptr;
  if (zh_reader_open_with(argv[1], &o, &reader) != ZH_OK) {
    std::printf("error %s\n", zh_last_error());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  zerohop::share_test::PatternChecker checker(0);
  const int count = std::atoi(argv[3]);
  int bad = 0;
  for (int n = 0; n < count; ++n) {
    zh_frame* frame = nullptr;
    if (zh_reader_next(reader, 5000, &frame) != ZH_OK) {
      std::printf("error %s\n", zh_last_error());
      return 1;
    }
    zh_frame_info info = ZH_FRAME_INFO_INIT;
    zh_frame_get_info(frame, &info);
    if (info.memory != ZH_MEMORY_DEVICE || !info.cuda_event) ++bad;
    if (zh_frame_wait_on_stream(frame, stream) != ZH_OK) {
      std::printf("error %s\n", zh_last_error());
      return 1;
    }
    zerohop::Frame f;
    f.format = static_cast<zerohop::PixelFormat>(info.format);
    f.width = info.width;
    f.height = info.height;
    f.memory = zerohop::MemoryKind::kDevice;
    f.planeCount = info.plane_count;
    for (unsigned i = 0; i < info.plane_count; ++i) {
      f.data[i] = static_cast<std::uint8_t*>(info.planes[i]);
      f.pitch[i] = info.pitches[i];
    }
    const auto layout = zerohop::computeLayout(f.format, f.width, f.height, 256);
    const std::uint32_t mismatches = checker.check(f, layout, info.sequence, stream);  // waits for the kernel
    const bool intact = zh_frame_check(frame) == ZH_OK;
    std::printf("frame %llu mismatches %u intact %d\n", (unsigned long long)info.sequence, mismatches, intact ? 1 : 0);
    if (mismatches || !intact) ++bad;
    zh_frame_release(frame);
  }
  std::printf("done %d\n", count);
  std::fflush(stdout);
  zh_reader_close(reader);
  cudaStreamDestroy(stream);
  return bad ? 3 : 0;
}
