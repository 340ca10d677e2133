#pragma once
// zerohop PixelFormat <-> GStreamer caps for host shares: raw video/x-raw formats, the H.264 share as
// byte-stream access units and the sound share as Opus packets. Pure functions (no share, no
// pipeline); reentrant.

#include <gst/gst.h>
#include <gst/video/video.h>

#include <optional>

#include "zerohop/pixel_format.hpp"

namespace zerohop::gst {

/// GStreamer's name for a zerohop raw format; GST_VIDEO_FORMAT_UNKNOWN where there is none.
GstVideoFormat videoFormatOf(PixelFormat format) noexcept;
/// The zerohop format for a GStreamer raw format; nullopt for formats a share cannot carry.
std::optional<PixelFormat> pixelFormatOf(GstVideoFormat format) noexcept;

/// Caps for what a share publishes: video/x-raw for images, video/x-h264 (byte-stream, au) for an
/// H.264 ring, audio/x-opus for a sound ring (opusCaps(0): the ring does not say its channel count);
/// nullptr for a format this slice cannot express (MJPEG). Caller owns the caps.
GstCaps* capsForShare(const ImageLayout& layout, bool encoded);

/// audio/x-opus as a share carries it: 48 kHz, channel mapping family 0 (mono or stereo, no Ogg
/// header), `channels` 1 or 2, or the range [1, 2] for any other value. Caller owns the caps.
GstCaps* opusCaps(int channels);

/// The always-present pad template both elements have: raw video, H.264 byte-stream access units
/// and Opus packets in system memory, and video/x-raw(memory:CUDAMemory) where the plugin was built with CUDA
/// memory support (cuda_frames.hpp). Floating reference, as gst_element_class_add_pad_template takes it.
GstPadTemplate* shareTemplate(const char* name, GstPadDirection direction);

/// The raw formats both elements accept, as a caps string ("NV12, I420, ...").
#define ZEROHOP_GST_RAW_FORMATS "{ NV12, I420, YUY2, UYVY, RGBA, BGRx, RGB }"

}  // namespace zerohop::gst
