#ifndef ZEROHOP_ZEROHOP_H
#define ZEROHOP_ZEROHOP_H
/*
 * The zerohop C API (C99): read frames that another process publishes as a named share, in place
 * (host memory or GPU memory), and publish frames of your own. For plugins and languages that bind
 * C (Unity, Unreal, OBS, Rust, Go, C#, ...). The C++ API (zerohop/share.hpp) is the same protocol.
 *
 * Errors: every function returns a zh_status: ZH_OK (0) or a negative code. After an error,
 * zh_last_error() gives this thread's message for it: what failed, why, and what to do. No C++
 * exception ever crosses this API. A NULL, closed or wrongly typed handle, or a NULL out-pointer,
 * is ZH_ERR_INVALID_ARGUMENT, never a crash.
 *
 * Handles and ownership:
 *   zh_reader     zh_reader_open() -> zh_reader_close(). Thread-bound: one thread at a time calls
 *                 next/latest on it (different readers on different threads are independent).
 *   zh_frame      a read lease on one published frame, from zh_reader_next()/latest(); the
 *                 publisher spares its slot until zh_frame_release() (or until the share's lease
 *                 timeout, 1 s by default: then the slot may be rewritten and zh_frame_check() says
 *                 so). Its pointers stay mapped until it is released, even after zh_reader_close()
 *                 or the publisher's exit. May be released on any thread.
 *   zh_publisher  zh_publisher_create() -> zh_publisher_close(). Thread-safe.
 *   zh_slot       a slot to write into, from zh_publisher_acquire(); zh_publisher_commit()
 *                 publishes it and zh_slot_abandon() drops it; either ends the handle.
 *   zh_sound_decoder  zh_sound_decoder_create() -> zh_sound_decoder_close(): a sound share's Opus
 *                 packets as PCM. Thread-bound.
 *   zh_ready_semaphore  zh_ready_semaphore_import() -> zh_ready_semaphore_destroy(): a renderer's
 *                 semaphore the GPU signals when a device frame is written. Thread-bound.
 * Every handle must be ended exactly once; ending one twice is ZH_ERR_INVALID_ARGUMENT.
 *
 * GPU memory: a device share's frames carry device pointers valid in the reading process and the
 * producer's CUDA event. Call zh_frame_wait_on_stream(frame, your_stream) before launching work on
 * them (the GPU waits; the host does not), keep the frame until that work has completed, then
 * zh_frame_check(). Publishing device frames: write the slot's device pointers on your stream and
 * commit with that stream; nothing is copied.
 * Renderers (Vulkan, OpenGL) import the ring's memory (zh_frame_get_ring_memory) and have the GPU
 * signal their semaphore when the frame is written (zh_frame_signal_when_ready): docs/textures.md.
 *
 * Info structs (zh_frame_info, zh_share_info, ...) start with struct_size: set it to sizeof the
 * struct before the call (the ZH_*_INIT macros do, initialising every member, so they build
 * warning-free under -Wextra). Later versions only add members at the end, and accept every
 * struct_size from a struct's first release up: members past the caller's struct take their
 * defaults (inputs) or are not written (outputs).
 *
 * Enum values (zh_status, zh_format, zh_memory, zh_stage) are fixed numbers: a released value never
 * changes meaning; a value a function does not know is ZH_ERR_INVALID_ARGUMENT.
 */
#include <stddef.h>
#include <stdint.h>

#include "zerohop/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zh_status {
  ZH_OK = 0,
  ZH_ERR_INVALID_ARGUMENT = -1, /* a NULL/closed handle, a malformed name, a layout the ring refuses */
  ZH_ERR_NOT_FOUND = -2,        /* nobody publishes that share name */
  ZH_ERR_UNAVAILABLE = -3,      /* refused (another user), name taken, or the publisher went away */
  ZH_ERR_UNSUPPORTED = -4,      /* valid, but not with this build or device (e.g. device frames, no CUDA) */
  ZH_ERR_IO = -5,               /* a system call failed */
  ZH_ERR_DEVICE = -6,           /* a CUDA call failed */
  ZH_ERR_PROTOCOL = -7,         /* the peer speaks another protocol version, or is not zerohop */
  ZH_ERR_TIMEOUT = -8,          /* nothing arrived within the timeout */
  ZH_ERR_INTERNAL = -9,         /* a bug in zerohop: please report it with zh_last_error() */
  ZH_ERR_OVERWRITTEN = -10,     /* zh_frame_check(): the publisher rewrote the slot while it was read */
  ZH_STATUS_MAX_ENUM = 0x7fffffff /* not a status: makes every int32 value one of this type (any value a caller passes is defined) */
} zh_status;

typedef enum zh_format {
  ZH_FORMAT_UNKNOWN = 0,
  ZH_FORMAT_YUYV = 1,  /* packed 4:2:2 Y0 U Y1 V */
  ZH_FORMAT_UYVY = 2,  /* packed 4:2:2 U Y0 V Y1 */
  ZH_FORMAT_NV12 = 3,  /* Y plane + interleaved UV plane, 4:2:0 */
  ZH_FORMAT_I420 = 4,  /* Y, U, V planes, 4:2:0 */
  ZH_FORMAT_RGB24 = 5, /* packed R G B */
  ZH_FORMAT_BGRX = 6,  /* packed B G R x, 32 bits */
  ZH_FORMAT_RGBA = 7,  /* packed R G B A, 32 bits */
  ZH_FORMAT_MJPEG = 8, /* one JPEG per frame */
  ZH_FORMAT_H264 = 9,  /* one H.264 Annex B access unit per frame */
  ZH_FORMAT_OPUS = 10, /* sound: one Opus packet (48 kHz) per frame, in NAME.opus shares (after 0.1.0) */
  ZH_FORMAT_MAX_ENUM = 0x7fffffff
} zh_format;

typedef enum zh_memory {
  ZH_MEMORY_HOST = 0,   /* ordinary host memory */
  ZH_MEMORY_PINNED = 1, /* page-locked host memory */
  ZH_MEMORY_DEVICE = 2, /* GPU memory: device pointers, never dereference on the host */
  ZH_MEMORY_MAX_ENUM = 0x7fffffff
} zh_memory;

/* The stages a frame passes; stage_ns[] holds CLOCK_MONOTONIC ns when each was done (0 = not reached). */
typedef enum zh_stage {
  ZH_STAGE_CAPTURE = 0, /* the camera (driver timestamp) or the producer made the frame */
  ZH_STAGE_INGEST = 1,  /* the frame was where the next stage could read it (in VRAM on the GPU path) */
  ZH_STAGE_CONVERT = 2, /* decoded / colour-converted */
  ZH_STAGE_ENCODE = 3,  /* encoded */
  ZH_STAGE_SEND = 4,    /* handed to the WebRTC sender */
  ZH_STAGE_COUNT = 5,
  ZH_STAGE_MAX_ENUM = 0x7fffffff
} zh_stage;

/* How much the library says (zh_set_log_callback). */
typedef enum zh_log_level {
  ZH_LOG_TRACE = 0,
  ZH_LOG_DEBUG = 1,
  ZH_LOG_INFO = 2,
  ZH_LOG_WARN = 3,
  ZH_LOG_ERROR = 4,
  ZH_LOG_OFF = 5, /* as min_level: nothing */
  ZH_LOG_LEVEL_MAX_ENUM = 0x7fffffff
} zh_log_level;

#define ZH_MAX_PLANES 3

typedef struct zh_reader zh_reader;
typedef struct zh_frame zh_frame;
typedef struct zh_publisher zh_publisher;
typedef struct zh_slot zh_slot;
typedef struct zh_ready_semaphore zh_ready_semaphore;

/* One frame (or one slot to write), as zh_frame_get_info() / zh_slot_get_info() describe it. */
typedef struct zh_frame_info {
  uint32_t struct_size;
  zh_format format;
  uint32_t width;
  uint32_t height;
  zh_memory memory;
  int32_t cuda_device; /* the CUDA device ordinal of device frames; -1 for host frames */
  uint32_t plane_count;
  void* planes[ZH_MAX_PLANES]; /* reader frames: read-only. Device frames: device pointers */
  uint32_t pitches[ZH_MAX_PLANES];
  size_t bytes_used;           /* images: the image's bytes; encoded shares: the unit's size */
  size_t capacity;             /* bytes the slot holds */
  uint64_t sequence;           /* the producer's frame number (gaps are the producer's drops) */
  uint64_t publish_index;      /* 1-based count of publishes on the share (gaps: frames this reader missed) */
  int64_t publish_ns;          /* CLOCK_MONOTONIC ns of the commit */
  int64_t wall_clock_ms;       /* CLOCK_REALTIME ms at capture */
  int64_t stage_ns[ZH_STAGE_COUNT];
  int32_t keyframe;            /* encoded shares: 1 for a self-contained unit (IDR) */
  void* cuda_event;            /* device frames: the producer's cudaEvent_t (opaque); NULL otherwise */
} zh_frame_info;
#define ZH_FRAME_INFO_INIT \
  {sizeof(zh_frame_info), ZH_FORMAT_UNKNOWN, 0, 0, ZH_MEMORY_HOST, 0, 0, {NULL, NULL, NULL}, {0, 0, 0}, 0, 0, 0, 0, 0, 0, \
   {0, 0, 0, 0, 0}, 0, NULL}

/* What a share holds, as a reader sees it. */
typedef struct zh_share_info {
  uint32_t struct_size;
  zh_format format;
  uint32_t width;        /* encoded shares: the picture size of the newest unit seen; 0x0 before the first */
  uint32_t height;
  int32_t encoded;       /* 1: slots hold encoded units (H.264, MJPEG) */
  uint32_t slots;
  size_t slot_capacity;
  zh_memory memory;
  int32_t publisher_pid;
  uint64_t session_id;   /* changes when the publisher restarts */
  char transport[24];    /* "host-memfd", "cuda-vmm-fd", "cuda-ipc-legacy" */
  /* Device shares (docs/multi-gpu.md); filled only when struct_size covers them. */
  int32_t ring_device;     /* the publisher's CUDA device, as an ordinal of this process; -1 for host shares */
  int32_t reader_device;   /* the device this reader's frames are on (zh_reader_options.cuda_device) */
  char device_access[16];  /* "same-gpu", "peer" (read over the link in place), "copy" (one device-to-device copy a frame); "" for host shares */
} zh_share_info;
#define ZH_SHARE_INFO_INIT \
  {sizeof(zh_share_info), ZH_FORMAT_UNKNOWN, 0, 0, 0, 0, 0, ZH_MEMORY_HOST, 0, 0, {0}, 0, 0, {0}}

typedef struct zh_reader_options {
  uint32_t struct_size;
  const char* directory;        /* NULL: the publisher's default ($XDG_RUNTIME_DIR/zerohop or /tmp/zerohop-UID) */
  int32_t open_timeout_ms;      /* how long zh_reader_open_with() waits for the share to appear; 0: not at all */
  int32_t handshake_timeout_ms; /* 0: 2000 */
  int32_t spin_us;              /* next() spins this long before sleeping; -1: the default (50) */
  int32_t cuda_device;          /* device shares: the CUDA device whose kernels read the frames; -1: the share's own */
  int32_t device_copy;          /* device shares: 1 = always copy each frame into a buffer on cuda_device; 0: in place where it can */
} zh_reader_options;
#define ZH_READER_OPTIONS_INIT {sizeof(zh_reader_options), NULL, 0, 0, -1, -1, 0}

typedef struct zh_reader_stats {
  uint32_t struct_size;
  uint64_t frames;     /* frames handed out */
  uint64_t overruns;   /* reads that found their slot rewritten */
  uint64_t missed;     /* publishes next() skipped because they were already overwritten */
  uint64_t reconnects;
} zh_reader_stats;
#define ZH_READER_STATS_INIT {sizeof(zh_reader_stats), 0, 0, 0, 0}

typedef struct zh_publisher_options {
  uint32_t struct_size;
  zh_format format;
  uint32_t width;          /* images */
  uint32_t height;
  uint32_t pitch_align;    /* images: each row padded to this power of two; 0: 1 (host), 256 (device) */
  size_t unit_capacity;    /* encoded formats (H264, MJPEG): the largest unit, in bytes */
  uint32_t slots;          /* 0: 4 */
  zh_memory memory;        /* ZH_MEMORY_HOST or ZH_MEMORY_DEVICE (images only) */
  int32_t cuda_device;     /* device shares */
  const char* directory;   /* NULL: the default */
  uint32_t max_readers;    /* 0: 32 */
  int32_t lease_timeout_ms; /* 0: 1000 */
} zh_publisher_options;
#define ZH_PUBLISHER_OPTIONS_INIT \
  {sizeof(zh_publisher_options), ZH_FORMAT_UNKNOWN, 0, 0, 0, 0, 0, ZH_MEMORY_HOST, 0, NULL, 0, 0}

/* What travels with a committed or published frame. */
typedef struct zh_frame_meta {
  uint32_t struct_size;
  uint64_t sequence;
  int64_t wall_clock_ms;   /* 0: now */
  int64_t stage_ns[ZH_STAGE_COUNT]; /* stage_ns[ZH_STAGE_CAPTURE] 0: now */
  size_t bytes_used;       /* encoded shares: the unit's size */
  int32_t keyframe;
  void* cuda_event;        /* device shares, commit without a stream: a cudaEvent_t recorded after the write */
} zh_frame_meta;
#define ZH_FRAME_META_INIT {sizeof(zh_frame_meta), 0, 0, {0, 0, 0, 0, 0}, 0, 0, NULL}

typedef struct zh_publisher_stats {
  uint32_t struct_size;
  uint32_t readers_connected;
  uint64_t publishes;
  uint64_t overruns;     /* publishes that had to overwrite a slot a reader leased */
  uint64_t bytes_copied; /* payload bytes the publisher copied (commits of acquired slots copy none) */
} zh_publisher_stats;
#define ZH_PUBLISHER_STATS_INIT {sizeof(zh_publisher_stats), 0, 0, 0, 0}

/* ---- library ------------------------------------------------------------------------------- */
/* "0.1.0". Reentrant. */
ZEROHOP_API const char* zh_version(void);
/* This thread's message for the last error a zh_ call returned ("" before any). The string stays
 * valid until the next zh_ call on this thread. */
ZEROHOP_API const char* zh_last_error(void);
/* "ZH_ERR_TIMEOUT", ... Reentrant. */
ZEROHOP_API const char* zh_status_name(zh_status status);
/* "nv12", "h264", ... Reentrant. */
ZEROHOP_API const char* zh_format_name(zh_format format);

/* The shares published in `directory` (NULL: the default, $XDG_RUNTIME_DIR/zerohop or
 * /tmp/zerohop-UID): the live ones' names, each followed by '\n', sorted, NUL-terminated into buf
 * (ZH_ERR_INVALID_ARGUMENT when it does not fit, with the size needed in *needed when needed is not
 * NULL). Connects to none of them; a dead publisher's left-over socket is not listed. Reentrant. */
ZEROHOP_API zh_status zh_list_shares(const char* directory, char* buf, size_t size, size_t* needed);

/* Receives the library's log lines: `message` is one line, NUL-terminated, valid during the call. */
typedef void (*zh_log_callback)(zh_log_level level, const char* message, void* user_data);
/* From now on the library's log lines at min_level and above go to `callback` (NULL: to stderr, the
 * default) with `user_data`. It is called on whichever zerohop thread logs, one call at a time; it
 * must return quickly and must not call zh_ functions. Meant for start-up; the level is
 * process-wide (the C++ zerohop::log::setLevel). Lines that codec libraries (libx264, FFmpeg's own)
 * write to stderr themselves do not pass through it. ZH_ERR_INVALID_ARGUMENT for an unknown level. */
ZEROHOP_API zh_status zh_set_log_callback(zh_log_callback callback, void* user_data, zh_log_level min_level);

/* ---- reader -------------------------------------------------------------------------------- */
/* Connects to share `name`, waiting up to timeout_ms (0: not at all) for it to be published: also
 * when its publisher died and left its socket file, until a restarted publisher replaces it.
 * ZH_ERR_NOT_FOUND when nobody published it by then, ZH_ERR_UNAVAILABLE when its publisher died
 * and none came back by then, ZH_ERR_PROTOCOL on a version mismatch. */
ZEROHOP_API zh_status zh_reader_open(const char* name, int32_t timeout_ms, zh_reader** reader);
ZEROHOP_API zh_status zh_reader_open_with(const char* name, const zh_reader_options* options, zh_reader** reader);
/* Ends the reader (NULL: nothing to do). Frames it handed out stay valid until released. */
ZEROHOP_API zh_status zh_reader_close(zh_reader* reader);
/* The first frame published after the last one this reader returned; waits up to timeout_ms.
 * ZH_ERR_TIMEOUT if none came, ZH_ERR_UNAVAILABLE once the publisher has gone (see reconnect). */
ZEROHOP_API zh_status zh_reader_next(zh_reader* reader, int32_t timeout_ms, zh_frame** frame);
/* The newest published frame (possibly one returned before); waits up to timeout_ms for the first. */
ZEROHOP_API zh_status zh_reader_latest(zh_reader* reader, int32_t timeout_ms, zh_frame** frame);
/* Handshakes again, e.g. with a restarted publisher (no wait: ZH_ERR_UNAVAILABLE or
 * ZH_ERR_NOT_FOUND while none is there; call again later, or open a new reader with a timeout). */
ZEROHOP_API zh_status zh_reader_reconnect(zh_reader* reader);
/* A file descriptor to poll (POLLIN; select, epoll, an event loop's fd watch), so a reader needs no
 * thread of its own blocked in zh_reader_next: it turns readable when a frame may be ready (the
 * publisher signals every publish) and when the publisher went away or closed the share. Then read
 * without waiting, zh_reader_next(reader, 0, &frame), until it returns ZH_ERR_TIMEOUT: each call
 * resets the readiness before it looks at the share, so a frame published after that makes the
 * descriptor readable again (readable may be spurious: ZH_ERR_TIMEOUT at once). A publisher that
 * went away makes zh_reader_next return ZH_ERR_UNAVAILABLE (then zh_reader_reconnect, as without
 * the descriptor). The first call registers with the publisher (one round trip, up to the
 * handshake timeout); the descriptor belongs to the reader, stays the same across
 * zh_reader_reconnect and is closed by zh_reader_close: do not read or close it yourself.
 * ZH_ERR_UNAVAILABLE when the publisher went away, ZH_ERR_TIMEOUT when it did not answer. */
ZEROHOP_API zh_status zh_reader_get_fd(zh_reader* reader, int* fd);
ZEROHOP_API zh_status zh_reader_get_info(zh_reader* reader, zh_share_info* info);
ZEROHOP_API zh_status zh_reader_get_stats(zh_reader* reader, zh_reader_stats* stats);

/* ---- frames -------------------------------------------------------------------------------- */
ZEROHOP_API zh_status zh_frame_get_info(const zh_frame* frame, zh_frame_info* info);
/* Device frames: makes `cuda_stream` (a cudaStream_t; NULL is the legacy default stream) wait on
 * the GPU for the producer's write (cudaStreamWaitEvent); the host does not wait. Host frames:
 * nothing to wait for, ZH_OK. Thread-safe. */
ZEROHOP_API zh_status zh_frame_wait_on_stream(const zh_frame* frame, void* cuda_stream);
/* After reading (device frames: after the reading work completed): ZH_OK while the slot still
 * holds this frame, ZH_ERR_OVERWRITTEN if the publisher rewrote it (what was read may be torn). */
ZEROHOP_API zh_status zh_frame_check(const zh_frame* frame);
/* Host frames from zerohop's test camera (and other producers that draw it): reads the pixel
 * timecode in the frame's top rows, the capture wall clock (ms, modulo 2^44) and frame sequence
 * (modulo 2^20), so a reader can measure capture -> here without trusting metadata.
 * ZH_ERR_NOT_FOUND when the frame carries no readable timecode; ZH_ERR_UNSUPPORTED for device
 * or encoded frames. */
ZEROHOP_API zh_status zh_frame_read_timecode(const zh_frame* frame, uint64_t* wall_clock_ms, uint32_t* sequence);
/* Gives the lease back (NULL: nothing to do). Any thread. */
ZEROHOP_API zh_status zh_frame_release(zh_frame* frame);

/* ---- device frames for renderers (Vulkan, OpenGL; docs/textures.md) -------------------------- */
/* A device ring another process shares as CUDA VMM fds: the memory a renderer imports once per
 * publisher session (Vulkan VK_KHR_external_memory_fd, OpenGL GL_EXT_memory_object_fd, opaque fd).
 * *fd is borrowed: the reader's, valid while the frame lives; Vulkan and GL own what they import, so
 * give them a dup(). *allocation_bytes is the allocation's size, the frame's slot starts at
 * *slot_offset (slot x *slot_stride), *session_id changes when the publisher restarts (import again).
 * Any out-pointer may be NULL. ZH_ERR_NOT_FOUND for host rings, legacy CUDA IPC rings and readers in
 * the publisher's own process (no fd to import: use the frame's device pointers). */
ZEROHOP_API zh_status zh_frame_get_ring_memory(const zh_frame* frame, int* fd, uint64_t* allocation_bytes,
                                               uint64_t* slot_stride, uint64_t* slot_offset,
                                               uint64_t* session_id);
/* Imports a renderer's semaphore into CUDA on `cuda_device` (the frames' zh_frame_info.cuda_device), so
 * zh_frame_signal_when_ready has the GPU signal it: `fd` is an opaque fd (vkGetSemaphoreFdKHR,
 * VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT) of a timeline semaphore (timeline = 1) or a binary
 * one (0). Takes ownership of `fd` in every case. ZH_ERR_UNSUPPORTED in a build without CUDA,
 * ZH_ERR_DEVICE naming the CUDA call that refused it. End it with zh_ready_semaphore_destroy. */
ZEROHOP_API zh_status zh_ready_semaphore_import(int fd, int timeline, int cuda_device,
                                                zh_ready_semaphore** out);
/* Waits for the signals it queued, then destroys the import (NULL: nothing to do). Destroy the
 * renderer's semaphore after this, and only after the work that waits on it completed. */
ZEROHOP_API zh_status zh_ready_semaphore_destroy(zh_ready_semaphore* semaphore);
/* Device frames: the GPU signals `semaphore` (a timeline one to `value`) once the producer's write of
 * this frame completed; the host does not wait. The renderer's submission that reads the frame waits
 * on the semaphore. ZH_ERR_INVALID_ARGUMENT for a host frame (complete at commit) or a semaphore
 * imported on another device than the frame's. Thread-safe per frame; one thread per semaphore. */
ZEROHOP_API zh_status zh_frame_signal_when_ready(const zh_frame* frame, zh_ready_semaphore* semaphore,
                                                 uint64_t value);
/* The next frame, read before it exists (docs/textures.md, "The next frame, submitted before it
 * exists"). Device rings: hands the publisher `fd`, an opaque fd of a timeline semaphore of the
 * renderer's, which the publisher's GPU then signals to each frame's publish index once it wrote that
 * frame, from its own CUDA context. One per reader session (a new one replaces it; after
 * zh_reader_reconnect hand a new one over: publish indices start at 1 again). Takes ownership of `fd`.
 * ZH_ERR_UNSUPPORTED for a host ring or a publisher without CUDA, ZH_ERR_DEVICE when its CUDA refuses
 * the fd, ZH_ERR_TIMEOUT when the publisher does not answer (one older than this library),
 * ZH_ERR_UNAVAILABLE when it is gone, or answered this before and is stalled now (ask again once it
 * publishes). */
ZEROHOP_API zh_status zh_reader_signal_on_publish(zh_reader* reader, int fd);
/* The frame the publisher will publish next, as it announced when it committed the one before: its
 * publish index (the semaphore value to wait for), ring slot and the slot's byte offset in the ring's
 * memory (zh_frame_get_ring_memory). Any out-pointer may be NULL. ZH_ERR_NOT_FOUND when it announced
 * nothing (host rings, before the first publish). Never blocks. */
ZEROHOP_API zh_status zh_reader_upcoming(zh_reader* reader, uint64_t* publish_index, uint32_t* slot,
                                         uint64_t* slot_offset);
/* After the GPU work that read that slot (waiting on the semaphore at publish_index) completed: the
 * frame, leased, when the slot holds it (the work read it whole); ZH_ERR_NOT_FOUND (*frame NULL) when
 * the publisher wrote it elsewhere or overwrote it since: read it as usual (zh_reader_next). */
ZEROHOP_API zh_status zh_reader_confirm(zh_reader* reader, uint64_t publish_index, uint32_t slot,
                                        zh_frame** frame);

/* ---- publisher ----------------------------------------------------------------------------- */
/* Creates share `name` (letters, digits, '.', '_', '-'). ZH_ERR_UNAVAILABLE when the name is
 * published already; ZH_ERR_INVALID_ARGUMENT for a layout the ring refuses; ZH_ERR_UNSUPPORTED
 * for device memory in a build without CUDA. */
ZEROHOP_API zh_status zh_publisher_create(const char* name, const zh_publisher_options* options,
                                          zh_publisher** publisher);
/* Closes the share (readers see it go) and ends the handle (NULL: nothing to do). A slot acquired
 * and not committed can then only be abandoned. */
ZEROHOP_API zh_status zh_publisher_close(zh_publisher* publisher);
/* A slot to write in place (never one a reader leases unless all are): zh_slot_get_info() gives its
 * plane pointers (device pointers on a device share) and pitches. Never waits for readers. */
ZEROHOP_API zh_status zh_publisher_acquire(zh_publisher* publisher, zh_slot** slot);
ZEROHOP_API zh_status zh_slot_get_info(const zh_slot* slot, zh_frame_info* info);
/* Publishes the slot and ends the handle (also on error). Device shares: `cuda_stream` is the
 * stream that wrote the slot (the slot's event is recorded on it: no host wait, no copy); with a
 * NULL stream, meta->cuda_event must name an event recorded after the write. Host shares ignore
 * both. meta may be NULL (sequence 0, capture time now). */
ZEROHOP_API zh_status zh_publisher_commit(zh_publisher* publisher, zh_slot* slot, const zh_frame_meta* meta,
                                          void* cuda_stream);
/* Drops an acquired slot unpublished and ends the handle (NULL: nothing to do). */
ZEROHOP_API zh_status zh_slot_abandon(zh_slot* slot);
/* Copies a frame described by `frame` (format, size, planes, pitches, memory; encoded shares:
 * planes[0] and bytes_used) into the next slot and publishes it. Device shares copy on the GPU on
 * `cuda_stream` (NULL: the publisher's own stream, and the host waits for the copy). */
ZEROHOP_API zh_status zh_publisher_publish(zh_publisher* publisher, const zh_frame_info* frame,
                                           const zh_frame_meta* meta, void* cuda_stream);
ZEROHOP_API zh_status zh_publisher_get_stats(zh_publisher* publisher, zh_publisher_stats* stats);

/* ---- stream your own frames ------------------------------------------------------------------
 * zh_stream encodes frames you make (host or GPU memory) and sends them to WebRTC viewers (WHEP on
 * the address you choose) and, when given, to a WHIP endpoint. Write frames through its input
 * publisher: zh_publisher_acquire + zh_publisher_commit (in place; device slots: commit with the
 * stream that wrote them) or zh_publisher_publish (copies). The input is in process (a bounded queue
 * of slots the stream's encoder reads: no share, no socket). The encoder never makes you wait: when
 * it falls behind, the oldest frames are dropped. Thread-safe. Libraries built without the stream
 * part answer ZH_ERR_UNSUPPORTED. */
typedef struct zh_stream zh_stream;

typedef struct zh_stream_options {
  uint32_t struct_size;
  zh_format format;        /* NV12, I420, RGBA, BGRX, YUYV, UYVY, RGB24 */
  uint32_t width;
  uint32_t height;
  double fps;              /* the rate you push at */
  zh_memory memory;        /* ZH_MEMORY_HOST or ZH_MEMORY_DEVICE (GPU path; NVENC from VRAM where it runs) */
  int32_t cuda_device;
  const char* listen_host; /* NULL: "127.0.0.1" */
  uint16_t port;           /* 0: a free port (zh_stream_url says which) */
  uint32_t bitrate_kbps;   /* 0: 2500 */
  const char* encoder;     /* NULL: "auto" (NVENC from GPU frames where a session opens, else x264); "x264", "nvenc" */
  const char* whep_token;  /* NULL: viewers need no token */
  const char* whip_url;    /* NULL: no WHIP; else also publish there (reconnects with back-off) */
  const char* whip_token;
  const char* share_name;  /* NULL: none; else also share the frames as NAME and H.264 as NAME.h264 */
  /* after 0.1.0 (a 0.1.0 caller's struct_size leaves it 0): */
  uint32_t audio_channels; /* 0: no sound; 1 or 2: 48 kHz PCM you push with zh_stream_push_audio */
  /* after 0.1.0 + audio_channels: */
  const char* whip_simulcast; /* NULL or "off": WHIP gets the full-size stream; "on": the ladder as simulcast
                                 layers h, m, l for an SFU (docs/stream.md, "Simulcast over WHIP") */
} zh_stream_options;
#define ZH_STREAM_OPTIONS_INIT                                                                          \
  {                                                                                                     \
    sizeof(zh_stream_options), ZH_FORMAT_UNKNOWN, 0, 0, 0.0, ZH_MEMORY_HOST, 0, NULL, 0, 0, NULL, NULL, \
        NULL, NULL, NULL, 0, NULL                                                                       \
  }

ZEROHOP_API zh_status zh_stream_create(const zh_stream_options* options, zh_stream** stream);
/* Ends every viewer session, stops, frees (NULL: nothing to do). The input publisher ends with it. */
ZEROHOP_API zh_status zh_stream_close(zh_stream* stream);
/* The stream's input: a publisher handle owned by the stream (zh_publisher_close refuses it). Its
 * zh_publisher_get_stats: readers_connected 1 (the stream), publishes = frames committed, overruns 0. */
ZEROHOP_API zh_status zh_stream_input(zh_stream* stream, zh_publisher** input);
/* Your sound (options.audio_channels 1 or 2): `frames` sample frames of interleaved signed 16-bit PCM
 * at 48 kHz (frames x channels values); capture_ns: the CLOCK_MONOTONIC instant of its first sample,
 * the clock of your frames' capture times (0: now). One Opus encode for every viewer whose offer has
 * audio, in the picture's MediaStream. Never waits (blocks the encoder has not taken within a second
 * are dropped, oldest first). ZH_ERR_INVALID_ARGUMENT: a stream without sound, NULL samples, 0 frames or
 * more than 48000. Thread-safe. */
ZEROHOP_API zh_status zh_stream_push_audio(zh_stream* stream, const int16_t* samples, size_t frames, int64_t capture_ns);
/* The viewer page's URL, "http://127.0.0.1:PORT/", NUL-terminated into buf (ZH_ERR_INVALID_ARGUMENT
 * when it does not fit, with the size needed in *needed when needed is not NULL). */
ZEROHOP_API zh_status zh_stream_url(zh_stream* stream, char* buf, size_t size, size_t* needed);
/* The same JSON as GET /stats (per-stage p50/p99 ms, fps, drops, viewers), into buf as above. */
ZEROHOP_API zh_status zh_stream_stats_json(zh_stream* stream, char* buf, size_t size, size_t* needed);
/* ZH_OK while the stream runs; once an error has ended it (the encoder or the input failed), that
 * error's code (ZH_ERR_DEVICE, ZH_ERR_IO, ...) with its message in zh_last_error(), every call after.
 * Cheap: poll it beside zh_stream_stats_json. */
ZEROHOP_API zh_status zh_stream_check(zh_stream* stream);

/* ---- PCM from a sound share ------------------------------------------------------------------------
 * zh_sound_decoder: the Opus packets of a NAME.opus share (frames of ZH_FORMAT_OPUS: the packet at
 * planes[0], bytes_used bytes) as 48 kHz interleaved signed 16-bit PCM in the channel count you ask for
 * (a stereo packet mixed down for 1, a mono one copied to both sides for 2). Thread-bound: one decoder per
 * reading thread (it keeps the sound's state). Libraries built without the stream part answer
 * ZH_ERR_UNSUPPORTED. (after 0.1.0) */
typedef struct zh_sound_decoder zh_sound_decoder;
/* 120 ms at 48 kHz, Opus's longest packet: room for this many sample frames always suffices. */
#define ZH_SOUND_MAX_PACKET_FRAMES 5760

/* channels: 1 or 2 (ZH_ERR_INVALID_ARGUMENT otherwise). */
ZEROHOP_API zh_status zh_sound_decoder_create(uint32_t channels, zh_sound_decoder** decoder);
/* Frees the decoder (NULL: nothing to do). */
ZEROHOP_API zh_status zh_sound_decoder_close(zh_sound_decoder* decoder);
/* One packet into pcm, which has room for max_frames sample frames (max_frames x channels values);
 * *frames: the sample frames written (960 for a 20 ms packet). packet NULL or bytes 0: a packet that
 * never came (a gap in zh_frame_info.sequence), concealed as long as the last one, so the sound stays
 * continuous. ZH_ERR_INVALID_ARGUMENT: not an Opus packet, NULL pcm or frames, or too little room (the
 * message says how many frames the packet needs). */
ZEROHOP_API zh_status zh_sound_decode(zh_sound_decoder* decoder, const void* packet, size_t bytes,
                                      int16_t* pcm, size_t max_frames, size_t* frames);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* ZEROHOP_ZEROHOP_H */
