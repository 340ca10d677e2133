/* A capture PCM that runs on the clock, as a sound card does, for the audio tests: an alsa-lib
 * external (ioplug) plugin, loaded through the same snd_pcm_* calls a card is. Built by the tests only.
 *
 *   pcm_type.zhclock { lib "/path/libasound_module_pcm_zhclock.so" }
 *   pcm.mic { type zhclock rate 48000 gone "/tmp/x.gone" lock "/tmp/x.lock" }
 *
 * rate:  the only rate it offers (48000 by default; 44100 makes a device that refuses 48 kHz).
 * gone:  while this file exists the device is unplugged: open fails with ENODEV, a running stream
 *        turns DISCONNECTED.
 * lock:  an exclusive flock() taken at open: a second open answers EBUSY, as a card in use does.
 * The hardware pointer advances with CLOCK_MONOTONIC from start; a reader more than a buffer behind
 * gets an overrun (EPIPE). Samples are a ramp: sample frame k of the stream holds k modulo 32768. */
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  snd_pcm_ioplug_t io;
  unsigned rate;
  char *gone;
  int lock_fd;
  int64_t start_ns;      /* 0 while not running */
  uint64_t delivered;    /* frames handed to the reader since prepare */
} zh_clock_t;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int is_gone(const zh_clock_t *c) { return c->gone && access(c->gone, F_OK) == 0; }

static uint64_t produced(const zh_clock_t *c) {
  if (c->start_ns == 0) return 0;
  return (uint64_t)((now_ns() - c->start_ns) * (int64_t)c->rate / 1000000000);
}

static snd_pcm_sframes_t zh_pointer(snd_pcm_ioplug_t *io) {
  zh_clock_t *c = io->private_data;
  if (is_gone(c)) {
    /* As the kernel marks a card's streams on unplug; the pointer stands still. */
    snd_pcm_ioplug_set_state(io, SND_PCM_STATE_DISCONNECTED);
    return (snd_pcm_sframes_t)(c->delivered % io->buffer_size);
  }
  const uint64_t p = produced(c);
  /* The reader is a whole buffer behind: a card stops there too. */
  if (p > io->appl_ptr && p - io->appl_ptr >= io->buffer_size) return -EPIPE;
  return (snd_pcm_sframes_t)(p % io->buffer_size);
}

static snd_pcm_sframes_t zh_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
                                     snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
  zh_clock_t *c = io->private_data;
  for (snd_pcm_uframes_t i = 0; i < size; ++i) {
    const int16_t v = (int16_t)((c->delivered + i) % 32768);
    for (unsigned ch = 0; ch < io->channels; ++ch) {
      const snd_pcm_channel_area_t *a = &areas[ch];
      int16_t *dst = (int16_t *)((char *)a->addr + (a->first + (offset + i) * a->step) / 8);
      *dst = v;
    }
  }
  c->delivered += size;
  return (snd_pcm_sframes_t)size;
}

static int zh_start(snd_pcm_ioplug_t *io) {
  zh_clock_t *c = io->private_data;
  if (is_gone(c)) return -ENODEV;
  c->start_ns = now_ns();
  struct itimerspec t = {{0, 5000000}, {0, 5000000}}; /* wake the reader every 5 ms */
  timerfd_settime(io->poll_fd, 0, &t, NULL);
  return 0;
}

static int zh_stop(snd_pcm_ioplug_t *io) {
  zh_clock_t *c = io->private_data;
  c->start_ns = 0;
  struct itimerspec t = {{0, 0}, {0, 0}};
  timerfd_settime(io->poll_fd, 0, &t, NULL);
  return 0;
}

static int zh_prepare(snd_pcm_ioplug_t *io) {
  zh_clock_t *c = io->private_data;
  if (is_gone(c)) return -ENODEV;
  c->start_ns = 0;
  c->delivered = 0;
  return 0;
}

static int zh_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds, unsigned short *revents) {
  (void)nfds;
  uint64_t ticks;
  if (pfd[0].revents & POLLIN) {
    if (read(io->poll_fd, &ticks, sizeof ticks) < 0) { /* nothing to clear */ }
  }
  *revents = (pfd[0].revents & POLLIN) ? POLLIN : 0;
  return 0;
}

static int zh_close(snd_pcm_ioplug_t *io) {
  zh_clock_t *c = io->private_data;
  close(io->poll_fd);
  if (c->lock_fd >= 0) close(c->lock_fd);
  free(c->gone);
  free(c);
  return 0;
}

static const snd_pcm_ioplug_callback_t zh_callback = {
    .start = zh_start,
    .stop = zh_stop,
    .pointer = zh_pointer,
    .transfer = zh_transfer,
    .prepare = zh_prepare,
    .poll_revents = zh_poll_revents,
    .close = zh_close,
};

SND_PCM_PLUGIN_DEFINE_FUNC(zhclock) {
  (void)root;
  snd_config_iterator_t i, next;
  long rate = 48000;
  const char *gone = NULL, *lock = NULL;
  snd_config_for_each(i, next, conf) {
    snd_config_t *n = snd_config_iterator_entry(i);
    const char *id;
    if (snd_config_get_id(n, &id) < 0) continue;
    if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint")) continue;
    if (!strcmp(id, "rate")) { snd_config_get_integer(n, &rate); continue; }
    if (!strcmp(id, "gone")) { snd_config_get_string(n, &gone); continue; }
    if (!strcmp(id, "lock")) { snd_config_get_string(n, &lock); continue; }
    SNDERR("zhclock: unknown field %s", id);
    return -EINVAL;
  }
  if (stream != SND_PCM_STREAM_CAPTURE) return -EINVAL;
  zh_clock_t *c = calloc(1, sizeof *c);
  if (!c) return -ENOMEM;
  c->rate = (unsigned)rate;
  c->gone = gone ? strdup(gone) : NULL;
  c->lock_fd = -1;
  if (is_gone(c)) { free(c->gone); free(c); return -ENODEV; }
  if (lock) {
    c->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (c->lock_fd < 0 || flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0) {
      if (c->lock_fd >= 0) close(c->lock_fd);
      free(c->gone); free(c);
      return -EBUSY;
    }
  }
  c->io.version = SND_PCM_IOPLUG_VERSION;
  c->io.name = "zerohop test clock PCM";
  c->io.callback = &zh_callback;
  c->io.private_data = c;
  c->io.poll_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  c->io.poll_events = POLLIN;
  c->io.mmap_rw = 0;
  int err = snd_pcm_ioplug_create(&c->io, name, stream, mode);
  if (err < 0) {
    close(c->io.poll_fd);
    if (c->lock_fd >= 0) close(c->lock_fd);
    free(c->gone); free(c);
    return err;
  }
  static const unsigned int access[] = {SND_PCM_ACCESS_RW_INTERLEAVED, SND_PCM_ACCESS_MMAP_INTERLEAVED};
  static const unsigned int formats[] = {SND_PCM_FORMAT_S16_LE};
  unsigned int rates[] = {c->rate};
  if ((err = snd_pcm_ioplug_set_param_list(&c->io, SND_PCM_IOPLUG_HW_ACCESS, 2, access)) < 0 ||
      (err = snd_pcm_ioplug_set_param_list(&c->io, SND_PCM_IOPLUG_HW_FORMAT, 1, formats)) < 0 ||
      (err = snd_pcm_ioplug_set_param_minmax(&c->io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 2)) < 0 ||
      (err = snd_pcm_ioplug_set_param_list(&c->io, SND_PCM_IOPLUG_HW_RATE, 1, rates)) < 0 ||
      (err = snd_pcm_ioplug_set_param_minmax(&c->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64, 64 * 1024)) < 0 ||
      (err = snd_pcm_ioplug_set_param_minmax(&c->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 64)) < 0) {
    snd_pcm_ioplug_delete(&c->io);
    return err;
  }
  *pcmp = c->io.pcm;
  return 0;
}

SND_PCM_PLUGIN_SYMBOL(zhclock);
