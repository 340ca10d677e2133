#pragma once
// zerohopsink: a GstBaseSink that publishes every buffer into a host zerohop share
// (zerohop::Publisher, created when caps arrive). One copy per frame (Publisher::publish copies the
// buffer into a ring slot); never blocks upstream: the publisher does not wait for readers.
// Thread-safety: GObject rules; the Publisher is used on the streaming thread only.

#include <gst/base/gstbasesink.h>

G_BEGIN_DECLS

#define ZEROHOP_TYPE_SINK (zerohop_sink_get_type())
G_DECLARE_FINAL_TYPE(ZerohopSink, zerohop_sink, ZEROHOP, SINK, GstBaseSink)

G_END_DECLS
