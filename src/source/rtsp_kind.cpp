// The `rtsp` source kind: an IP camera,
// `rtsp://[user:password@]host[:port]/path[?protocols=tcp|udp&latency=MS&format=h264|i420|nv12]` (src/rtsp:
// RtspSource; format=i420 decodes on the CPU, DecodedH264Source; format=nv12 into VRAM by NVDEC). The URL is the camera's own, query
// included, so the kind parses the whole text.
#include "rtsp/rtsp_source.hpp"
#include "source_kind.hpp"

namespace zerohop {
namespace {

void print(const SourceSpec& spec, SourceSpecText& text) {
  const std::string url = rtspSourceString(spec);  // "rtsp://***@host/path": credentials masked
  text.target(std::string_view(url).substr(url.find(':') + 1));
}

}  // namespace

SourceKind rtspSourceKind() {
  SourceKind kind{"rtsp",
                  "rtsp://[user:password@]host[:port]/path[?protocols=tcp|udp&latency=MS&format=h264|i420|nv12]",
                  "rtsp://user:pw@192.168.1.20/stream1",
                  nullptr,
                  nullptr,
                  print,
                  openRtspSource};
  kind.parseText = parseRtspSourceSpec;
  return kind;
}

}  // namespace zerohop
