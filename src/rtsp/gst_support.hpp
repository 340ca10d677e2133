#pragma once
// What the RTSP connections (the camera's picture, rtsp_session.hpp, and its sound,
// rtsp_audio_source.hpp) share of GStreamer: its initialisation, element creation that names the
// missing package, the last line of an error's debug text, and the caps of rtspsrc's NTP timestamps.
// Thread-safety: every function is thread-safe.

#include <gst/gst.h>

#include <string>

namespace zerohop::rtsp {

/// gst_init_check once per process; Error(kUnavailable) with GStreamer's words when it failed.
void ensureGstInit();

/// A new element of `factory`, floating; Error(kUnsupported) naming it, what needs it (`neededBy`, "an
/// RTSP camera") and the Debian package to install when it is missing.
GstElement* makeElement(const char* factory, const char* neededBy, const char* package);

/// The last line of a GStreamer error's debug text ("Failed to connect. (Generic error)"); empty for a
/// single line or none.
std::string lastLine(const gchar* debug);

/// The caps of the reference-timestamp metas rtspsrc attaches from the camera's sender reports
/// (`timestamp/x-ntp`); lives as long as the process.
GstCaps* ntpCaps();

}  // namespace zerohop::rtsp
