// gstzerohop: GStreamer elements over zerohop shares (docs/gstreamer.md).
#include <gst/gst.h>

#include "zerohop_sink.hpp"
#include "zerohop_src.hpp"

#ifndef PACKAGE
#define PACKAGE "zerohop"
#endif

static gboolean pluginInit(GstPlugin* plugin) {
  return gst_element_register(plugin, "zerohopsrc", GST_RANK_NONE, ZEROHOP_TYPE_SRC) &&
         gst_element_register(plugin, "zerohopsink", GST_RANK_NONE, ZEROHOP_TYPE_SINK);
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, zerohop,
                  "Read and publish zerohop shares (cross-process frame rings) from GStreamer pipelines",
                  pluginInit, ZEROHOP_GST_VERSION, "unknown" /* the project names no licence yet */,
                  "zerohop", "docs/gstreamer.md")
