/* Publishes COUNT 1280x720 NV12 frames at 30 fps as share NAME, written in place into the share's
 * slots: in GPU memory on a CUDA device (`device`, nothing is copied: the frame is drawn on a
 * stream and committed with that stream) or in host memory (`host`).
 *   c_publisher NAME device|host [COUNT]      then: zerohop tap NAME, or any zerohop reader
 * Frame n has every luma byte = n % 256 and every chroma byte = 128, so a reader can check it. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep under -std=c99 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zerohop/zerohop.h>
#ifdef WITH_CUDA
#include <cuda_runtime_api.h>
#endif

static int fail(const char* what, zh_status st) {
  fprintf(stderr, "%s: %s: %s\n", what, zh_status_name(st), zh_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s NAME device|host [COUNT]\n", argv[0]);
    return 2;
  }
  const int device = strcmp(argv[2], "device") == 0;
  const int count = argc > 3 ? atoi(argv[3]) : 300;
#ifndef WITH_CUDA
  if (device) {
    fprintf(stderr, "built without the CUDA toolkit: only host frames\n");
    return 2;
  }
#else
  cudaStream_t stream = NULL;
  if (device && cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    fprintf(stderr, "cudaStreamCreate failed: no usable CUDA device?\n");
    return 1;
  }
#endif
  zh_publisher_options options = ZH_PUBLISHER_OPTIONS_INIT;
  options.format = ZH_FORMAT_NV12;
  options.width = 1280;
  options.height = 720;
  options.memory = device ? ZH_MEMORY_DEVICE : ZH_MEMORY_HOST;
  options.cuda_device = 0;
  zh_publisher* pub = NULL;
  zh_status st = zh_publisher_create(argv[1], &options, &pub);
  if (st != ZH_OK) return fail("create", st);

  for (int n = 1; n <= count; ++n) {
    zh_slot* slot = NULL;
    if ((st = zh_publisher_acquire(pub, &slot)) != ZH_OK) return fail("acquire", st);
    zh_frame_info s = ZH_FRAME_INFO_INIT;
    zh_slot_get_info(slot, &s);
    void* stream_arg = NULL;
#ifdef WITH_CUDA
    if (device) { /* your renderer or decoder writes here, on its own stream */
      cudaMemset2DAsync(s.planes[0], s.pitches[0], n % 256, s.width, s.height, stream);
      cudaMemset2DAsync(s.planes[1], s.pitches[1], 128, s.width, s.height / 2, stream);
      stream_arg = stream;
    }
#endif
    if (!device) {
      for (uint32_t r = 0; r < s.height; ++r) memset((char*)s.planes[0] + (size_t)r * s.pitches[0], n % 256, s.width);
      for (uint32_t r = 0; r < s.height / 2; ++r) memset((char*)s.planes[1] + (size_t)r * s.pitches[1], 128, s.width);
    }
    zh_frame_meta meta = ZH_FRAME_META_INIT; /* capture time and wall clock: now */
    meta.sequence = (uint64_t)n;
    if ((st = zh_publisher_commit(pub, slot, &meta, stream_arg)) != ZH_OK) return fail("commit", st);
    const struct timespec period = {0, 33333333};
    nanosleep(&period, NULL);
  }
  zh_publisher_stats stats = ZH_PUBLISHER_STATS_INIT;
  zh_publisher_get_stats(pub, &stats);
  printf("published %llu frames, %llu bytes copied, %u readers\n", (unsigned long long)stats.publishes,
         (unsigned long long)stats.bytes_copied, stats.readers_connected);
  zh_publisher_close(pub);
#ifdef WITH_CUDA
  if (stream) cudaStreamDestroy(stream);
#endif
  return 0;
}
