#include "caps.hpp"

#include <string>

#include "cuda_frames.hpp"

namespace zerohop::gst {

GstVideoFormat videoFormatOf(PixelFormat format) noexcept {
  switch (format) {
    case PixelFormat::kNV12:
      return GST_VIDEO_FORMAT_NV12;
    case PixelFormat::kI420:
      return GST_VIDEO_FORMAT_I420;
    case PixelFormat::kYUYV:
      return GST_VIDEO_FORMAT_YUY2;
    case PixelFormat::kUYVY:
      return GST_VIDEO_FORMAT_UYVY;
    case PixelFormat::kRGBA:
      return GST_VIDEO_FORMAT_RGBA;
    case PixelFormat::kBGRx:
      return GST_VIDEO_FORMAT_BGRx;
    case PixelFormat::kRGB24:
      return GST_VIDEO_FORMAT_RGB;
    default:
      return GST_VIDEO_FORMAT_UNKNOWN;
  }
}

std::optional<PixelFormat> pixelFormatOf(GstVideoFormat format) noexcept {
  switch (format) {
    case GST_VIDEO_FORMAT_NV12:
      return PixelFormat::kNV12;
    case GST_VIDEO_FORMAT_I420:
      return PixelFormat::kI420;
    case GST_VIDEO_FORMAT_YUY2:
      return PixelFormat::kYUYV;
    case GST_VIDEO_FORMAT_UYVY:
      return PixelFormat::kUYVY;
    case GST_VIDEO_FORMAT_RGBA:
      return PixelFormat::kRGBA;
    case GST_VIDEO_FORMAT_BGRx:
      return PixelFormat::kBGRx;
    case GST_VIDEO_FORMAT_RGB:
      return PixelFormat::kRGB24;
    default:
      return std::nullopt;
  }
}

GstCaps* capsForShare(const ImageLayout& layout, bool encoded) {
  if (encoded || isCompressed(layout.format)) {
    if (layout.format == PixelFormat::kOpus) return opusCaps(0);
    if (layout.format != PixelFormat::kH264) return nullptr;
    return gst_caps_new_simple("video/x-h264", "stream-format", G_TYPE_STRING, "byte-stream", "alignment",
                               G_TYPE_STRING, "au", nullptr);
  }
  const GstVideoFormat f = videoFormatOf(layout.format);
  if (f == GST_VIDEO_FORMAT_UNKNOWN || layout.width == 0 || layout.height == 0) return nullptr;
  GstVideoInfo info;
  gst_video_info_init(&info);
  if (!gst_video_info_set_format(&info, f, layout.width, layout.height)) return nullptr;
  // The share does not carry a frame rate: 0/1 is GStreamer's "variable"; buffers carry timestamps.
  GST_VIDEO_INFO_FPS_N(&info) = 0;
  GST_VIDEO_INFO_FPS_D(&info) = 1;
  return gst_video_info_to_caps(&info);
}

GstCaps* opusCaps(int channels) {
  GstCaps* caps = gst_caps_from_string("audio/x-opus, rate=(int)48000, channel-mapping-family=(int)0");
  if (channels == 1 || channels == 2) {
    gst_caps_set_simple(caps, "channels", G_TYPE_INT, channels, nullptr);
  } else {
    GValue range = G_VALUE_INIT;
    g_value_init(&range, GST_TYPE_INT_RANGE);
    gst_value_set_int_range(&range, 1, 2);
    gst_caps_set_value(caps, "channels", &range);
    g_value_unset(&range);
  }
  return caps;
}

GstPadTemplate* shareTemplate(const char* name, GstPadDirection direction) {
  std::string caps = GST_VIDEO_CAPS_MAKE(ZEROHOP_GST_RAW_FORMATS) "; "
                     "video/x-h264, stream-format=(string)byte-stream, alignment=(string)au; "
                     "audio/x-opus, rate=(int)48000, channels=(int)[ 1, 2 ], channel-mapping-family=(int)0";
  if (const std::string cuda = cudaTemplateCaps(); !cuda.empty()) caps += "; " + cuda;
  GstCaps* c = gst_caps_from_string(caps.c_str());
  GstPadTemplate* t = gst_pad_template_new(name, direction, GST_PAD_ALWAYS, c);
  gst_caps_unref(c);
  return t;
}

}  // namespace zerohop::gst
