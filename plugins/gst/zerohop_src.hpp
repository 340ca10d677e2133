#pragma once
// zerohopsrc: a live GstPushSrc that reads a zerohop share (zerohop::Subscriber) and pushes each
// frame as a GstBuffer wrapping the ring slot in place (no copy); the buffer holds the frame's read
// lease until GStreamer frees it. Host shares only in this slice (device shares: a later slice).
// Thread-safety: GObject rules; the Subscriber is used only on the streaming thread, properties
// read counters the streaming thread publishes atomically.

#include <gst/base/gstpushsrc.h>

G_BEGIN_DECLS

#define ZEROHOP_TYPE_SRC (zerohop_src_get_type())
G_DECLARE_FINAL_TYPE(ZerohopSrc, zerohop_src, ZEROHOP, SRC, GstPushSrc)

G_END_DECLS
