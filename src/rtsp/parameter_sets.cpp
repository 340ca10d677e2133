#include "rtsp/parameter_sets.hpp"

#include <glib.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#define GST_USE_UNSTABLE_API  // the codec parsers' API is marked unstable; stable since 1.0 in what is used here
#include <gst/codecparsers/gsth264parser.h>
#include <gst/codecparsers/gsth265parser.h>

namespace zerohop::rtsp {
namespace {

/// One NAL unit as the parsers take it: a 4-byte start code, then the unit.
std::vector<std::uint8_t> withStartCode(const std::string& base64) {
  gsize size = 0;
  std::unique_ptr<guchar, decltype(&g_free)> bytes(g_base64_decode(base64.c_str(), &size), g_free);
  if (!bytes || size == 0) return {};
  std::vector<std::uint8_t> unit(4 + size, 0);
  unit[3] = 1;
  std::copy_n(bytes.get(), size, unit.begin() + 4);
  return unit;
}

std::optional<StatedVideo> statedH264(const std::vector<std::string>& units) {
  std::unique_ptr<GstH264NalParser, decltype(&gst_h264_nal_parser_free)> parser(gst_h264_nal_parser_new(),
                                                                                  gst_h264_nal_parser_free);
  for (const std::string& b64 : units) {
    const std::vector<std::uint8_t> data = withStartCode(b64);
    if (data.size() <= 5) continue;
    GstH264NalUnit nalu{};
    if (gst_h264_parser_identify_nalu_unchecked(parser.get(), data.data(), 0, data.size(), &nalu) != GST_H264_PARSER_OK ||
        nalu.type != GST_H264_NAL_SPS)
      continue;
    GstH264SPS sps{};
    if (gst_h264_parser_parse_sps(parser.get(), &nalu, &sps) != GST_H264_PARSER_OK) continue;
    StatedVideo v;
    v.width = static_cast<unsigned>(sps.frame_cropping_flag ? sps.crop_rect_width : sps.width);
    v.height = static_cast<unsigned>(sps.frame_cropping_flag ? sps.crop_rect_height : sps.height);
    gint num = 0, den = 1;
    gst_h264_video_calculate_framerate(&sps, 0, 0, &num, &den);
    if (num > 0 && den > 0) v.fps = static_cast<double>(num) / den;
    gst_h264_sps_clear(&sps);
    if (v.width > 0 && v.height > 0) return v;
  }
  return std::nullopt;
}

std::optional<StatedVideo> statedH265(const std::vector<std::string>& units) {
  std::unique_ptr<GstH265Parser, decltype(&gst_h265_parser_free)> parser(gst_h265_parser_new(), gst_h265_parser_free);
  std::optional<StatedVideo> stated;
  for (const std::string& b64 : units) {  // the VPS first (the SPS refers to it), as the caller orders them
    const std::vector<std::uint8_t> data = withStartCode(b64);
    if (data.size() <= 6) continue;
    GstH265NalUnit nalu{};
    if (gst_h265_parser_identify_nalu_unchecked(parser.get(), data.data(), 0, data.size(), &nalu) != GST_H265_PARSER_OK)
      continue;
    if (nalu.type == GST_H265_NAL_VPS) {
      GstH265VPS vps{};
      gst_h265_parser_parse_vps(parser.get(), &nalu, &vps);
      continue;
    }
    if (nalu.type != GST_H265_NAL_SPS || stated) continue;
    GstH265SPS sps{};
    if (gst_h265_parser_parse_sps(parser.get(), &nalu, &sps, TRUE) != GST_H265_PARSER_OK) continue;
    StatedVideo v;
    v.width = static_cast<unsigned>(sps.conformance_window_flag ? sps.crop_rect_width : sps.width);
    v.height = static_cast<unsigned>(sps.conformance_window_flag ? sps.crop_rect_height : sps.height);
    if (sps.vui_parameters_present_flag && sps.vui_params.timing_info_present_flag &&
        sps.vui_params.num_units_in_tick > 0 && sps.vui_params.time_scale > 0) {
      v.fps = static_cast<double>(sps.vui_params.time_scale) / sps.vui_params.num_units_in_tick;
    } else if (sps.fps_num > 0 && sps.fps_den > 0) {
      v.fps = static_cast<double>(sps.fps_num) / sps.fps_den;  // the VPS's timing
    }
    if (v.width > 0 && v.height > 0) stated = v;
  }
  return stated;
}

}  // namespace

std::optional<StatedVideo> statedVideo(VideoCodec codec, const std::vector<std::string>& base64Units) {
  return codec == VideoCodec::kH264 ? statedH264(base64Units) : statedH265(base64Units);
}

std::vector<std::string> spropItems(const std::string& value) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = value.find(',', start);
    const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

}  // namespace zerohop::rtsp
