#include "stream/janus_api.hpp"

#include <httplib.h>
#include <sys/random.h>

#include <nlohmann/json.hpp>
#include <string>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::stream {
namespace {

using nlohmann::json;

class JanusHttp {
 public:
  JanusHttp(const std::string& host, std::uint16_t port)
      : where_((host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port)),
        cli_("http://" + where_) {
    cli_.set_connection_timeout(3, 0);
    cli_.set_read_timeout(5, 0);
  }

  /// POSTs `body` (with a transaction id) to /janus<path>; the answer, which must not be an error.
  json call(const std::string& path, json body) {
    unsigned int tx = 0;
    if (getrandom(&tx, sizeof tx, 0) != sizeof tx) tx = static_cast<unsigned int>(++counter_);
    body["transaction"] = "zerohop-" + std::to_string(tx);
    const std::string what = body.value("janus", std::string("?"));
    auto res = cli_.Post(("/janus" + path).c_str(), body.dump(), "application/json");
    if (!res) {
      throw Error(Errc::kUnavailable, "Janus at " + where_ + " (" + what +
                                          "): " + httplib::to_string(res.error()) +
                                          "; is Janus running with its HTTP transport on that port?");
    }
    if (res->status != 200) {
      throw Error(Errc::kUnavailable,
                  "Janus at " + where_ + " answered HTTP " + std::to_string(res->status) + " to " + what);
    }
    json answer = json::parse(res->body, nullptr, false);
    if (answer.is_discarded() || !answer.is_object()) {
      throw Error(Errc::kProtocol, "Janus at " + where_ + " answered " + what + " with something not JSON");
    }
    if (answer.value("janus", std::string()) == "error") {
      throw Error(Errc::kUnavailable, "Janus at " + where_ + " refused " + what + ": " + answer.dump());
    }
    return answer;
  }

  const std::string& where() const { return where_; }

 private:
  std::string where_;
  httplib::Client cli_;
  unsigned counter_ = 0;
};

std::uint64_t idOf(const json& answer, const std::string& what) {
  const auto* data = answer.contains("data") ? &answer["data"] : nullptr;
  if (!data || !data->contains("id") || !(*data)["id"].is_number_unsigned()) {
    throw Error(Errc::kProtocol, "Janus answered " + what + " without data.id: " + answer.dump());
  }
  return (*data)["id"].get<std::uint64_t>();
}

}  // namespace

RtpTarget lookUpJanusMountpoint(const JanusTarget& target) {
  JanusHttp janus(target.rtp.host, target.apiPort);
  const std::uint64_t session = idOf(janus.call("", {{"janus", "create"}}), "create");
  const std::string sessionPath = "/" + std::to_string(session);
  struct Destroy {
    JanusHttp& janus;
    const std::string& path;
    ~Destroy() {
      try {
        janus.call(path, {{"janus", "destroy"}});
      } catch (const std::exception& e) {
        log::debug("janus: destroying the look-up session: ", e.what());
      }
    }
  } destroy{janus, sessionPath};
  const std::uint64_t handle =
      idOf(janus.call(sessionPath, {{"janus", "attach"}, {"plugin", "janus.plugin.streaming"}}), "attach");
  json request = {{"request", "info"}, {"id", target.mountpoint}};
  if (!target.secret.empty()) request["secret"] = target.secret;
  const json answer =
      janus.call(sessionPath + "/" + std::to_string(handle), {{"janus", "message"}, {"body", request}});

  const json data =
      answer.contains("plugindata") ? answer["plugindata"].value("data", json::object()) : json();
  const std::string mp = "mountpoint " + std::to_string(target.mountpoint) + " of Janus at " + janus.where();
  if (!data.is_object() || data.contains("error")) {
    const int code = data.is_object() ? data.value("error_code", 0) : 0;
    const std::string why =
        data.is_object() ? data.value("error", std::string("no answer")) : "no plugin data";
    throw Error(code == 455 ? Errc::kNotFound : Errc::kUnavailable, mp + ": " + why);
  }
  const json info = data.value("info", json::object());
  RtpTarget rtp;
  rtp.host = target.rtp.host;
  for (const json& m : info.value("media", json::array())) {
    if (m.value("type", std::string()) != "audio" || rtp.audioPort != 0) continue;
    // The sound, when the mountpoint takes Opus; another codec is said and left out.
    const std::string codec = m.value("codec", std::string());
    if (codec != "opus") {
      log::warn("janus: ", mp, "'s audio takes ", codec.empty() ? "no codec" : codec,
                ", not opus: the camera's sound is not sent there");
      continue;
    }
    rtp.audioPort = m.value("port", std::uint16_t{0});
    rtp.audioRtcpPort = m.value("rtcpport", std::uint16_t{0});
    rtp.audioPayloadType = m.value("pt", 111);
  }
  for (const json& m : info.value("media", json::array())) {
    if (m.value("type", std::string()) != "video") continue;
    const std::string codec = m.value("codec", std::string());
    if (codec != "h264") {
      throw Error(Errc::kUnsupported, mp + " takes " + (codec.empty() ? "no codec" : codec) + ", not h264");
    }
    if (!m.contains("port")) {
      throw Error(Errc::kUnsupported,
                  mp + " does not say its port: is it an RTP mountpoint (type = \"rtp\"), and "
                       "does it need secret=?");
    }
    rtp.rtpPort = m.value("port", std::uint16_t{0});
    rtp.rtcpPort = m.value("rtcpport", std::uint16_t{0});
    rtp.payloadType = m.value("pt", 96);
    break;
  }
  if (rtp.rtpPort == 0) throw Error(Errc::kUnsupported, mp + " has no video stream");
  if (rtp.rtcpPort == 0) {
    throw Error(Errc::kUnsupported,
                mp + " has no rtcpport: Janus's keyframe requests could not reach the encoder; "
                     "give its video media an rtcpport");
  }
  log::info("janus: ", mp, ": video port ", rtp.rtpPort, ", rtcpport ", rtp.rtcpPort, ", pt ",
            rtp.payloadType,
            rtp.audioPort != 0 ? "; audio (Opus) port " + std::to_string(rtp.audioPort) + ", pt " +
                                     std::to_string(rtp.audioPayloadType)
                               : std::string("; no Opus audio"));
  return rtp;
}

}  // namespace zerohop::stream
