/* A program built against zerohop 0.1.0: compiled with that release's header (v0_1/zerohop_0_1.h,
 * whose structs are shorter than today's) and linked with today's library. Every call must work
 * as it did, and no output may be written past the struct sizes this program knows.
 * Built as C99 with -Wall -Wextra -Werror: the 0.1 ZH_*_INIT macros warn under -Wextra
 * (-Wmissing-field-initializers), so that one warning is allowed here; tests/capi/init_macros.c
 * checks that today's macros are clean. */
#include "abi_v0_1_client.h"

#include <stdio.h>
#include <string.h>

#include "v0_1/zerohop_0_1.h"

#define GUARD 0xAB
#define GUARD_BYTES 32

static int failed(char* why, size_t size, const char* what) {
  snprintf(why, size, "%s: %s", what, zh_last_error());
  return 1;
}

static int guardIntact(const unsigned char* guard) {
  size_t i;
  for (i = 0; i < GUARD_BYTES; ++i)
    if (guard[i] != GUARD) return 0;
  return 1;
}

int zh_abi_v0_1_round_trip(const char* directory, const char* name, char* why, size_t whySize) {
  zh_publisher* pub = NULL;
  zh_reader* reader = NULL;
  zh_slot* slot = NULL;
  zh_frame* frame = NULL;
  int rc = 1;
  /* Inputs: 0.1-sized structs, each followed by bytes a careless library would read as members. */
  struct {
    zh_publisher_options o;
    unsigned char guard[GUARD_BYTES];
  } po;
  struct {
    zh_reader_options o;
    unsigned char guard[GUARD_BYTES];
  } ro;
  struct {
    zh_share_info info;
    unsigned char guard[GUARD_BYTES];
  } share;
  struct {
    zh_frame_info info;
    unsigned char guard[GUARD_BYTES];
  } fi;
  struct {
    zh_frame_meta meta;
    unsigned char guard[GUARD_BYTES];
  } meta;
  struct {
    zh_reader_stats stats;
    unsigned char guard[GUARD_BYTES];
  } rs;
  struct {
    zh_publisher_stats stats;
    unsigned char guard[GUARD_BYTES];
  } ps;
  const zh_publisher_options poInit = ZH_PUBLISHER_OPTIONS_INIT;
  const zh_reader_options roInit = ZH_READER_OPTIONS_INIT;
  const zh_share_info shareInit = ZH_SHARE_INFO_INIT;
  const zh_frame_info fiInit = ZH_FRAME_INFO_INIT;
  const zh_frame_meta metaInit = ZH_FRAME_META_INIT;
  const zh_reader_stats rsInit = ZH_READER_STATS_INIT;
  const zh_publisher_stats psInit = ZH_PUBLISHER_STATS_INIT;

  memset(&po, GUARD, sizeof po);
  po.o = poInit;
  po.o.format = ZH_FORMAT_NV12;
  po.o.width = 64;
  po.o.height = 48;
  po.o.slots = 3;
  po.o.directory = directory;
  if (zh_publisher_create(name, &po.o, &pub) != ZH_OK) return failed(why, whySize, "zh_publisher_create");

  memset(&ro, GUARD, sizeof ro);
  ro.o = roInit;
  ro.o.directory = directory;
  if (zh_reader_open_with(name, &ro.o, &reader) != ZH_OK) {
    failed(why, whySize, "zh_reader_open_with (0.1 zh_reader_options)");
    goto out;
  }
  memset(&share, GUARD, sizeof share);
  share.info = shareInit;
  if (zh_reader_get_info(reader, &share.info) != ZH_OK) {
    failed(why, whySize, "zh_reader_get_info (0.1 zh_share_info)");
    goto out;
  }
  if (!guardIntact(share.guard) || share.info.format != ZH_FORMAT_NV12 || share.info.width != 64 ||
      strcmp(share.info.transport, "host-memfd") != 0) {
    snprintf(why, whySize, "zh_reader_get_info: wrote past a 0.1 zh_share_info, or said format %d %ux%u '%s'",
             (int)share.info.format, share.info.width, share.info.height, share.info.transport);
    goto out;
  }

  if (zh_publisher_acquire(pub, &slot) != ZH_OK) {
    failed(why, whySize, "zh_publisher_acquire");
    goto out;
  }
  memset(&fi, GUARD, sizeof fi);
  fi.info = fiInit;
  if (zh_slot_get_info(slot, &fi.info) != ZH_OK || !guardIntact(fi.guard)) {
    failed(why, whySize, "zh_slot_get_info (0.1 zh_frame_info; or it wrote past it)");
    goto out;
  }
  memset(fi.info.planes[0], 0x5A, (size_t)fi.info.pitches[0] * fi.info.height);
  memset(&meta, GUARD, sizeof meta);
  meta.meta = metaInit;
  meta.meta.sequence = 77;
  meta.meta.stage_ns[ZH_STAGE_CAPTURE] = 123456789;
  if (zh_publisher_commit(pub, slot, &meta.meta, NULL) != ZH_OK) {
    slot = NULL;
    failed(why, whySize, "zh_publisher_commit (0.1 zh_frame_meta)");
    goto out;
  }
  slot = NULL;

  if (zh_reader_next(reader, 5000, &frame) != ZH_OK) {
    failed(why, whySize, "zh_reader_next");
    goto out;
  }
  memset(&fi, GUARD, sizeof fi);
  fi.info = fiInit;
  if (zh_frame_get_info(frame, &fi.info) != ZH_OK || !guardIntact(fi.guard)) {
    failed(why, whySize, "zh_frame_get_info (0.1 zh_frame_info; or it wrote past it)");
    goto out;
  }
  if (fi.info.sequence != 77 || fi.info.stage_ns[ZH_STAGE_CAPTURE] != 123456789 ||
      ((const unsigned char*)fi.info.planes[0])[0] != 0x5A || fi.info.memory != ZH_MEMORY_HOST) {
    snprintf(why, whySize, "the frame read back is not the one committed (sequence %llu)",
             (unsigned long long)fi.info.sequence);
    goto out;
  }
  zh_frame_release(frame);
  frame = NULL;

  memset(&rs, GUARD, sizeof rs);
  rs.stats = rsInit;
  memset(&ps, GUARD, sizeof ps);
  ps.stats = psInit;
  if (zh_reader_get_stats(reader, &rs.stats) != ZH_OK || zh_publisher_get_stats(pub, &ps.stats) != ZH_OK) {
    failed(why, whySize, "zh_reader_get_stats / zh_publisher_get_stats (0.1 structs)");
    goto out;
  }
  if (!guardIntact(rs.guard) || !guardIntact(ps.guard) || rs.stats.frames != 1 || ps.stats.publishes != 1) {
    snprintf(why, whySize, "stats wrote past their 0.1 structs, or count %llu frames, %llu publishes",
             (unsigned long long)rs.stats.frames, (unsigned long long)ps.stats.publishes);
    goto out;
  }
  rc = 0;
out:
  zh_frame_release(frame);
  zh_slot_abandon(slot);
  zh_reader_close(reader);
  zh_publisher_close(pub);
  return rc;
}
