#pragma once
// An Error about one setting the caller chose, named in the library's terms, so that a front end
// can point at its own spelling of that setting (the CLI names its flag) without parsing the
// message; log lines about one setting carry it the same way (log::setSettingNote).
// Thread-safety: SettingError is a value type; setSettingNote is thread-safe.

#include <functional>
#include <string>
#include <string_view>

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
inline constexpr const char* kWhepToken = "whep_token";  ///< StreamConfig::whepToken; zh_stream_options.whep_token

/// Every name above, for a front end to check that it maps each one.
inline constexpr const char* kAll[] = {kListen,    kEncoder,    kSource,  kGpu,      kTlsCert,
                                       kTlsKey,    kIceServers, kTurnSecret, kIceHost, kUdpPorts,
                                       kPlayoutDelay, kWhipUrl, kJanus,   kRenditions, kWhepToken};
}  // namespace setting

namespace log {
/// The library's log lines about one setting the caller chose (a warning that the camera gives the
/// nearest mode, a port range too small for the viewers, a renditions ladder a path cannot do) end
/// with a note naming it, as a SettingError names it: "(setting NAME)" by default, where NAME is one
/// of setting::kAll. A front end that spells its settings otherwise returns its own note from `note`
/// (the CLI: "(option --flag)"; "" adds nothing); nullptr restores the default. The note goes
/// wherever the line goes (stderr, log::setSink's sink, the C API's zh_set_log_callback). `note` is
/// called under the log's lock: it must not log. Meant for start-up.
using SettingNote = std::function<std::string(std::string_view setting)>;
ZEROHOP_API void setSettingNote(SettingNote note);
}  // namespace log

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
