/* Reads COUNT frames of share NAME in place and prints how long after capture each arrived.
 *   c_reader NAME [COUNT]        e.g. next to `zerohop serve --share cam0`: c_reader cam0 60 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep under -std=c99 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <zerohop/zerohop.h>

static int fail(const char* what, zh_status st) {
  fprintf(stderr, "%s: %s: %s\n", what, zh_status_name(st), zh_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s NAME [COUNT]\n", argv[0]);
    return 2;
  }
  const int count = argc > 2 ? atoi(argv[2]) : 60;
  zh_reader* reader = NULL;
  zh_status st = zh_reader_open(argv[1], 5000, &reader); /* waits up to 5 s for the publisher */
  if (st != ZH_OK) return fail("open", st);

  uint64_t last = 0;
  int bad = 0, first = 1;
  for (int n = 0; n < count; ++n) {
    zh_frame* frame = NULL;
    if ((st = zh_reader_next(reader, 2000, &frame)) != ZH_OK) return fail("next", st);
    zh_frame_info info = ZH_FRAME_INFO_INIT;
    zh_frame_get_info(frame, &info);
    uint64_t tc_ms = 0;
    uint32_t tc_seq = 0;
    const zh_status tc = zh_frame_read_timecode(frame, &tc_ms, &tc_seq); /* read the pixels... */
    const int intact = zh_frame_check(frame) == ZH_OK;               /* ...then check they held */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const double after_capture_ms =
        ((double)now.tv_sec * 1e9 + (double)now.tv_nsec - (double)info.stage_ns[ZH_STAGE_CAPTURE]) / 1e6;
    printf("seq %llu %s %ux%u %s, %.2f ms after capture, timecode %s (seq %u)%s\n",
           (unsigned long long)info.sequence, zh_format_name(info.format), info.width, info.height,
           info.memory == ZH_MEMORY_DEVICE ? "device" : "host", after_capture_ms,
           tc == ZH_OK ? "ok" : "none", tc_seq, intact ? "" : " OVERWRITTEN");
    if ((!first && info.sequence <= last) || !intact) ++bad; /* sequences rise */
    last = info.sequence;
    first = 0;
    zh_frame_release(frame);
  }
  zh_reader_close(reader);
  return bad ? 3 : 0;
}
