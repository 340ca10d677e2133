#pragma once
// RTSP camera addresses: `rtsp://[user:password@]host[:port]/path[?query]` taken apart, with the
// credentials kept out of everything that is printed. Pure (no network, no GStreamer): the source spec
// parser and the RTSP source both use it.
//
// Query keys zerohop knows (protocols, latency, format=h264|i420|nv12; size and fps are refused: they are the
// camera's own) are zerohop's; every other key stays in the camera's own URL, since many
// cameras select their stream there (`/cam/realmonitor?channel=1&subtype=0`).
// User and password are percent-decoded (a password holding '@', ':', '/' or '?' is written %40, %3A, %2F,
// %3F). Thread-safety: reentrant.

#include <cstdint>
#include <string>
#include <string_view>

#include "zerohop/pixel_format.hpp"

namespace zerohop::rtsp {

struct RtspUrl {
  std::string host;  ///< "192.168.1.20", "cam.local", "[fe80::1]" (brackets kept)
  std::uint16_t port = 554;
  std::string path;               ///< "/stream1", with the camera's own query ("/cam/realmonitor?channel=1")
  std::string user;               ///< decoded; empty = no credentials
  std::string password;           ///< decoded; never printed
  std::string protocols = "tcp";  ///< lower transports: "tcp", "udp", "udp-mcast" joined with '+'
  std::uint32_t latencyMs = 200;  ///< the jitter buffer's hold for a missing packet (UDP reordering, loss)
  /// kH264 (`format=h264`, the default): passed through undecoded; kI420 (`format=i420`): decoded on the
  /// CPU (DecodedH264Source); kNV12 (`format=nv12`): decoded into VRAM by NVDEC (gpupath::makeNvdecSource).
  PixelFormat format = PixelFormat::kH264;

  /// The URL the client connects to: no credentials, no zerohop options.
  std::string location() const;
  /// The URL as printed everywhere (logs, toString of the spec, errors): credentials as `***@`, and
  /// zerohop's options where they are not the defaults.
  std::string masked() const;
};

/// Parses `text` (the whole `--source` argument). Throws Error(kInvalidArgument) saying what is
/// wrong, with an example; the message never holds the password.
RtspUrl parseRtspUrl(std::string_view text);

/// `text` with the user information of an rtsp:// URL in it replaced by `***` (for error texts and
/// log lines that quote a library's words, which may contain the URL as given).
std::string maskCredentials(std::string_view text);

}  // namespace zerohop::rtsp
