#pragma once
// An Error about one setting the caller chose, named in the library's terms, so that a front end
// can point at its own spelling of that setting (the CLI names its flag) without parsing the
// message. Thread-safety: a value type.

#include <string>

#include "zerohop/error.hpp"
#include "zerohop/export.h"

namespace zerohop {

/// The settings a SettingError names: the field of the C++ config and, where it has one, of the C
/// API's options (zh_stream_options). A front end maps each to its own spelling (the CLI: a flag).
namespace setting {
inline constexpr const char* kListen = "listen";    ///< StreamConfig host/port; zh_stream_options listen_host/port
inline constexpr const char* kEncoder = "encoder";  ///< EncoderConfig::encoder; zh_stream_options.encoder
inline constexpr const char* kSource = "source";    ///< PipelineConfig::source, CameraConfig::source (a SourceSpec)
inline constexpr const char* kGpu = "gpu";          ///< PipelineConfig::gpu, FrameStreamConfig::gpu, CameraConfig::gpu
inline constexpr const char* kTlsCert = "tls_cert_file";    ///< StreamConfig::tlsCertFile
inline constexpr const char* kTlsKey = "tls_key_file";      ///< StreamConfig::tlsKeyFile
inline constexpr const char* kIceServers = "ice_servers";   ///< StreamConfig::iceServers
inline constexpr const char* kTurnSecret = "turn_secret";   ///< StreamConfig::turnSecret
inline constexpr const char* kIceHost = "ice_host";         ///< StreamConfig::iceHost
inline constexpr const char* kUdpPorts = "udp_ports";       ///< StreamConfig::udpPortMin/udpPortMax
inline constexpr const char* kPlayoutDelay = "playout_delay";  ///< StreamConfig::playoutDelayMinMs/MaxMs
inline constexpr const char* kWhipUrl = "whip_url";  ///< PipelineConfig::whipUrl; zh_stream_options.whip_url
inline constexpr const char* kJanus = "janus";       ///< PipelineConfig::janus
inline constexpr const char* kRenditions = "renditions";  ///< PipelineConfig::renditions

/// Every name above, for a front end to check that it maps each one.
inline constexpr const char* kAll[] = {kListen,    kEncoder,    kSource,  kGpu,      kTlsCert,
                                       kTlsKey,    kIceServers, kTurnSecret, kIceHost, kUdpPorts,
                                       kPlayoutDelay, kWhipUrl, kJanus,   kRenditions};
}  // namespace setting

/// Thrown like any Error (catch Error& still catches it); setting() says which choice to change.
class ZEROHOP_API SettingError : public Error {
 public:
  SettingError(Errc code, std::string setting, std::string message)
      : Error(code, std::move(message)), setting_(std::move(setting)) {}
  ~SettingError() override;
  /// One of the setting:: names.
  const std::string& setting() const noexcept { return setting_; }

 private:
  std::string setting_;
};

}  // namespace zerohop
