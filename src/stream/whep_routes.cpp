// The HTTP front: WHEP (POST /whep and /whep/<stream>, DELETE/PATCH /whep/<session id>), CORS, GET /stats
// and the viewer page.
// Every client mistake is a 4xx with the reason in a text/plain body; 5xx only for our own faults and
// for PATCH, which the WHIP/WHEP texts want answered 501 when it is not implemented at all.
// Status codes follow RFC 9725 (WHIP), which WHEP (draft-ietf-wish-whep-03) mirrors; each is cited
// where it is chosen.

#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>

#include "stream/http_reply.hpp"
#include "stream/video_offer.hpp"
#include "stream/stream_server_impl.hpp"
#include "stream/web_assets.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

using stream::reply;

// What each WHEP URL allows (the Allow header of 405s and OPTIONS). PATCH is not among the session's:
// it is answered 501 (trickle ICE and ICE restarts are not implemented).
constexpr const char* kEndpointAllow = "GET, HEAD, POST, OPTIONS";
constexpr const char* kSessionAllow = "GET, HEAD, DELETE, OPTIONS";
// POST /whep?lipsync=1: the most a viewer's picture may wait for its sound (the playout-delay maximum).
// Chromium plays the sound ~75 ms after the picture on a quiet box, ~100 ms on a loaded one, with the
// picture free to go at once (docs/benchmarks.md, "Sound: audio against video"); it uses only what it needs.
constexpr int kLipSyncMaxMs = 200;

// GET/HEAD on an endpoint (/whep, /whep/NAME): it has no representation, so 2xx with no content.
void answerEndpointGet(httplib::Response& res) {
  res.status = 200;
  res.set_header("Allow", kEndpointAllow);
  res.set_header("Accept-Post", "application/sdp");
}

// Other methods on an endpoint: 405 with Allow (RFC 9110 §15.5.6; the WHIP and WHEP drafts reserve
// them for later versions of the protocol).
void refuseOnEndpoint(const httplib::Request& req, httplib::Response& res) {
  res.set_header("Allow", kEndpointAllow);
  reply(res, 405, req.method + " is not defined on a WHEP endpoint; POST an SDP offer to it");
}

int statusFor(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument:
    case Errc::kProtocol:
      return 400;
    case Errc::kUnsupported:
      // A well-formed offer we cannot serve (no usable H.264, and no VP8 or none here): 422 Unprocessable Content (RFC 9110
      // §15.5.21). Not 406: in WHEP (draft-ietf-wish-whep-03 §4.2) 406 carries the server's SDP
      // counter-offer, and a player would try to answer our text as SDP.
      return 422;
    case Errc::kNotFound:
      return 404;
    case Errc::kUnavailable:
    case Errc::kTimeout:
      return 503;
    default:
      return 500;
  }
}

// "application/sdp", "Application/SDP; charset=utf-8" -> true.
bool isSdp(const std::string& contentType) {
  std::string media = contentType.substr(0, contentType.find(';'));
  media.erase(std::remove_if(media.begin(), media.end(), [](unsigned char c) { return std::isspace(c); }),
              media.end());
  std::transform(media.begin(), media.end(), media.begin(), [](unsigned char c) { return std::tolower(c); });
  return media == "application/sdp";
}

// Equal length and content, in time independent of where they differ.
bool constantTimeEquals(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::string& probe = a.size() == b.size() ? a : b;  // always walk b.size() bytes
  for (std::size_t i = 0; i < b.size(); ++i) diff |= static_cast<unsigned char>(probe[i] ^ b[i]);
  return diff == 0;
}

// Descriptors open in this process now (a walk of /proc/self/fd: once per POST /whep), or 0 when unknown.
std::size_t openDescriptors() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return 0;
  std::size_t n = 0;
  while (const dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
  ::closedir(dir);
  return n;
}

}  // namespace

bool StreamServer::Impl::authorized(const httplib::Request& req, httplib::Response& res) const {
  if (config_.whepToken.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  const bool bearer = header.size() > kBearer.size() && header.compare(0, kBearer.size(), kBearer) == 0;
  if (bearer && constantTimeEquals(header.substr(kBearer.size()), config_.whepToken)) return true;
  res.set_header("WWW-Authenticate", "Bearer realm=\"zerohop\"");
  reply(res, 401,
        header.empty() ? "this server needs Authorization: Bearer <token> for WHEP (the server's WHEP token)"
                       : "the WHEP bearer token is wrong");
  return false;
}

void StreamServer::Impl::installRoutes() {
  http_->set_payload_max_length(config_.maxBodyBytes);
  // Framing (Content-Length only, no chunked or unsized bodies, limits) is checked before a request
  // reaches these routes (DeadlineHttpServer, frameHttpRequest). A compressed body would be inflated
  // past that limit, so it is refused here.
  http_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Content-Encoding") && req.get_header_value("Content-Encoding") != "identity") {
      reply(res, 415,
            "Content-Encoding \"" + req.get_header_value("Content-Encoding") +
                "\" is not accepted; send the SDP uncompressed");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  http_->set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    res.set_header("Access-Control-Allow-Origin", "*");
    res.set_header("Access-Control-Expose-Headers", "Location, ETag, Link, Allow, Accept-Post");
  });

  // Statuses httplib sets itself (413, 400 for a broken request, 404 for no route) get a reason too.
  const std::size_t maxBody = config_.maxBodyBytes;
  http_->set_error_handler([maxBody](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    switch (res.status) {
      case 413:
        reply(res, 413, "request body over " + std::to_string(maxBody) + " bytes; a WHEP offer is a few KB");
        break;
      case 404:
        reply(res, 404, "nothing at " + req.method + " " + req.path);
        break;
      case 400:
        reply(res, 400, "malformed HTTP request");
        break;
      default:
        reply(res, res.status, "request refused (HTTP " + std::to_string(res.status) + ")");
        break;
    }
  });

  http_->set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    log::error("stream: ", req.method, " ", req.path, " failed: ", what);
    reply(res, 500, "internal error: " + what);
  });

  // CORS preflight and discovery (draft-ietf-wish-whep-03 §4.3, as RFC 9725 for WHIP: the endpoint
  // supports OPTIONS for CORS, and its "200 OK" carries Accept-Post: application/sdp). Allow names
  // what each URL really accepts; Access-Control-Allow-Methods also names PATCH on a session, so that
  // a player on another origin that tries trickle ICE reads our 501 and its reason, not a CORS failure.
  // The ICE servers (RFC 9725 §4.6) also answer an OPTIONS /whep that carries the token when one is
  // set (a CORS preflight carries none, and gets none): a player such as the viewer page needs them
  // before it makes its offer, since the offer already holds every candidate.
  http_->Options(".*", [this](const httplib::Request& req, httplib::Response& res) {
    res.status = 200;
    res.set_header("Access-Control-Allow-Headers", "Content-Type, Authorization, If-Match");
    res.set_header("Access-Control-Max-Age", "86400");
    if (req.path == "/whep" || (req.path.rfind("/whep/", 0) == 0 && hasStream(req.path.substr(6)))) {
      res.set_header("Accept-Post", "application/sdp");
      if (!iceServers_.empty() && (config_.whepToken.empty() || req.has_header("Authorization"))) {
        httplib::Response unused;
        if (authorized(req, unused)) {
          std::vector<std::string> links;
          sessionIce(links);
          for (const std::string& link : links) res.set_header("Link", link);
        }
      }
      res.set_header("Allow", kEndpointAllow);
      res.set_header("Access-Control-Allow-Methods", kEndpointAllow);
    } else if (req.path.rfind("/whep/", 0) == 0 && req.path.size() > 6 && req.path.ends_with("/layer")) {
      res.set_header("Allow", "GET, HEAD, POST, OPTIONS");  // a session's layer URL (whep_layer.cpp)
      res.set_header("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS");
    } else if (req.path.rfind("/whep/", 0) == 0) {
      res.set_header("Allow", kSessionAllow);
      res.set_header("Access-Control-Allow-Methods", "GET, HEAD, DELETE, PATCH, OPTIONS");
    } else {
      res.set_header("Allow", "GET, HEAD, OPTIONS");
      res.set_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
    }
  });

  // RFC 9725 §4.1 (and draft-ietf-wish-whep-03 §4.1): the endpoint and session URLs have no
  // representation, so GET answers 2xx with no content; httplib answers HEAD with the GET handler
  // (RFC 9110 §9.3.2). 200 with an empty body rather than 204: httplib writes Content-Length: 0 on
  // every answer, which a 204 must not carry (RFC 9110 §8.6). Before the page's catch-all GET below.
  // A named stream's endpoint (/whep/NAME) answers the same, in the /whep/<id> handlers.
  http_->Get("/whep", [](const httplib::Request&, httplib::Response& res) { answerEndpointGet(res); });
  http_->Get(R"(/whep/([^/]*))",
            [this](const httplib::Request& req, httplib::Response& res) { handleWhepSessionGet(req, res); });
  http_->Delete("/whep", refuseOnEndpoint);
  http_->Patch("/whep", refuseOnEndpoint);

  http_->Post("/whep", [this](const httplib::Request& req, httplib::Response& res) {
    handleWhepPost(req, res, defaultStream());
  });
  // A named stream (one camera of several): POST /whep/NAME. Session URLs (/whep/<id>) take no POST;
  // GET, DELETE and PATCH on /whep/NAME answer as on the endpoint.
  http_->Post(R"(/whep/([A-Za-z0-9_-]+))", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches[1];
    StreamState* stream = addedStream(name);
    if (!stream) {
      reply(res, 404, "no stream \"" + name + "\" (streams: " + streamNames() + ")");
      return;
    }
    handleWhepPost(req, res, *stream);
  });
  http_->Delete(R"(/whep/([^/]*))",
               [this](const httplib::Request& req, httplib::Response& res) { handleWhepDelete(req, res); });
  http_->Patch(R"(/whep/([^/]*))",
              [this](const httplib::Request& req, httplib::Response& res) { handleWhepPatch(req, res); });
  // A session's layer URL: the viewer's choice of rendition (whep_layer.cpp).
  http_->Get(R"(/whep/([^/]+)/layer)",
            [this](const httplib::Request& req, httplib::Response& res) { handleLayerGet(req, res); });
  http_->Post(R"(/whep/([^/]+)/layer)",
             [this](const httplib::Request& req, httplib::Response& res) { handleLayerPost(req, res); });
  http_->Get("/stats", [this](const httplib::Request& req, httplib::Response& res) { handleStats(req, res); });
  http_->Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) { handleMetrics(req, res); });
  http_->Get(R"(/.*)",
            [this](const httplib::Request& req, httplib::Response& res) { handleStatic(req, res); });
}

void StreamServer::Impl::handleWhepPost(const httplib::Request& req, httplib::Response& res, StreamState& stream) {
  if (!authorized(req, res)) return;
  const std::string contentType = req.get_header_value("Content-Type");
  if (!isSdp(contentType)) {
    reply(res, 415,
          "POST /whep takes an SDP offer with Content-Type: application/sdp (got \"" + contentType + "\")");
    return;
  }
  // ?lipsync=1: this viewer's picture may wait for its sound (below); 0 or absent: it never waits.
  bool lipSync = false;
  if (req.has_param("lipsync")) {
    const std::string v = req.get_param_value("lipsync");
    if (v != "0" && v != "1") {
      reply(res, 400,
            "lipsync takes 1 (the picture may wait for the sound) or 0, not \"" + v.substr(0, 32) + "\"");
      return;
    }
    lipSync = v == "1";
  }
  stream::VideoChoice choice;
  try {
    // An offer of sound alone gets the Opus track only.
    if (auto soundAlone = stream::chooseAudioOnly(req.body)) {
      if (!hasAudio(stream)) {
        throw Error(Errc::kUnsupported,
                    "unusable SDP offer: it asks for sound alone (no video section that receives), and this "
                    "stream has no sound");
      }
      choice = std::move(*soundAlone);
      choice.audio->channels = audioChannels(stream);
    } else {
      choice = stream::chooseVideo(req.body, sendable(stream));
      if (hasAudio(stream)) {  // else video only, as always
        choice.audio = stream::chooseAudio(req.body);
        if (choice.audio) choice.audio->channels = audioChannels(stream);
      }
    }
  } catch (const Error& e) {
    const int status = statusFor(e.code());
    log::warn("stream: POST /whep from ", req.remote_addr, " refused (", status, "): ", e.what());
    reply(res, status, e.what());
    return;
  }

  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    const std::size_t open = openDescriptors();
    if (open + kDescriptorReserve + kDescriptorsPerSession > nofile.rlim_cur) {
      log::warn("stream: POST /whep refused: ", open, " of ", nofile.rlim_cur,
                " file descriptors open, a session needs up to ", kDescriptorsPerSession, " and ",
                kDescriptorReserve, " stay in reserve (raise ulimit -n)");
      res.set_header("Retry-After", "5");
      reply(res, 503, "the server is short of file descriptors; try again later");
      return;
    }
  }

  const std::string id = newSessionId();
  auto record = std::make_shared<SessionRecord>();
  record->address = req.remote_addr;
  record->stream = &stream;
  // Lip sync: a browser lip-syncs by holding the earlier track back, and the playout-delay extension's
  // maximum (0 by default: each frame shown at once) forbids holding the picture. A viewer that asks for
  // it, with sound and picture, gets a maximum of kLipSyncMaxMs: Chromium holds the picture as long as
  // its sound lags (docs/audio.md, "Sync in a browser"), and only that viewer's picture waits.
  stream::SendOptions send = sendOptions_;
  if (lipSync && choice.audio && choice.hasVideo() && !send.omitPlayoutDelay) {
    send.playoutDelay.maxMs = std::max(send.playoutDelay.maxMs, kLipSyncMaxMs);
    log::info("stream: viewer ", id.substr(0, 8), " asked for lip sync: its picture may wait up to ",
              send.playoutDelay.maxMs, " ms for its sound (playout delay ", send.playoutDelay.minMs, ",",
              send.playoutDelay.maxMs, ")");
  }
  record->playoutBase = send.playoutDelay;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      reply(res, 503, "the server is shutting down");
      return;
    }
    std::size_t negotiating = 0;
    for (const auto& [sid, r] : sessions_) {
      if (r->address == req.remote_addr && !(r->session && r->session->connected())) ++negotiating;
    }
    if (negotiating >= negotiatingPerAddress()) {
      res.set_header("Retry-After", "5");
      reply(res, 503,
            "this address already has " + std::to_string(negotiating) +
                " viewers that have not connected yet; connect those first");
      return;
    }
    if (sessions_.size() >= config_.maxViewers) {
      res.set_header("Retry-After", "5");
      reply(res, 503,
            "too many viewers (" + std::to_string(sessions_.size()) + " of at most " +
                std::to_string(config_.maxViewers) + "); try again when one leaves");
      return;
    }
    sessions_.emplace(id, record);  // holds the slot while the pipeline is built
  }
  auto release = [this, &id] {
    std::lock_guard lock(mutex_);
    sessions_.erase(id);
  };

  std::shared_ptr<stream::ViewerSession> session;
  try {
    stream::ViewerSession::Events events;
    // Its keyframe requests reach only the encode it takes (its rung's, or VP8's).
    events.onConnected = [this, &stream, rung = record->keyframeRung, codec = choice.codec] {
      requestViewerKeyframe(stream, *rung, codec);
    };
    events.onKeyframeRequest = [this, &stream, rung = record->keyframeRung, codec = choice.codec] {
      requestViewerKeyframe(stream, *rung, codec);
    };
    events.onEnded = [this, id](const std::string& reason) { endSessionLater(id, reason); };
    events.post = [this](std::function<void()> task) { loop_->post(std::move(task)); };
    std::vector<std::string> links;
    const stream::SessionIce ice = sessionIce(links);
    session =
        std::make_shared<stream::ViewerSession>(id, choice, loopbackHost_, std::move(events), ice, send);
    {
      std::lock_guard lock(mutex_);
      auto it = sessions_.find(id);
      if (stopping_ || it == sessions_.end()) throw Error(Errc::kUnavailable, "the server is shutting down");
      it->second->session = session;
    }
    const std::string answer =
        stream::advertiseHostAddress(session->negotiate(req.body, kNegotiationTimeout), config_.iceHost);
    if (!ice.turnServers.empty() && answer.find(" typ relay") == std::string::npos) {
      log::warn("stream: viewer ", id.substr(0, 8),
                ": no relay candidate from the TURN server(s) of the ICE servers: unreachable, or the credentials "
                "were refused; offering the direct candidates only");
    }
    res.status = 201;
    for (const std::string& link : links) res.set_header("Link", link);  // RFC 9725 §4.6
    if (const auto layer = choice.hasVideo() ? layerLink(stream, id) : std::nullopt)
      res.set_header("Link", *layer);
    res.set_header("Location", "/whep/" + id);
    // A strong entity-tag naming the ICE session (RFC 9725 §4.3.1; optional without ICE restarts, which
    // would change it): this server never restarts ICE, so the session id names it for good.
    res.set_header("ETag", "\"" + id + "\"");
    res.set_content(answer, "application/sdp");
    if (!choice.hasVideo()) {
      log::info("stream: viewer ", id.substr(0, 8), " joined", stream.logName(),
                " (the sound alone: Opus pt ", choice.audio->payloadType, "; its offer has no video)");
    } else if (choice.codec == Codec::kVP8) {
      log::info("stream: viewer ", id.substr(0, 8), " joined", stream.logName(), " (VP8 pt ",
                choice.payloadType, ": its offer has no usable H.264)");
    } else {
      log::info("stream: viewer ", id.substr(0, 8), " joined", stream.logName(), " (H.264 pt ",
                choice.payloadType, ", ", choice.profileLevelId, ")");
      if (!choice.levelCovered) {
        const H264Format f = h264Format(stream);
        log::warn("stream: viewer ", id.substr(0, 8), " offered H.264 up to level ", stream::levelName(choice.offeredLevel),
                  " (", choice.profileLevelId, "); the stream is level ", stream::levelName(choice.streamLevel), " (",
                  f.width, "x", f.height, "); serving it anyway (Chromium decodes higher levels; Safari and Firefox with "
                  "OpenH264 may not: capture a smaller size or a lower frame rate until the stream fits level ",
                  stream::levelName(choice.offeredLevel), ")");
      }
    }
  } catch (const Error& e) {
    release();
    log::warn("stream: POST /whep refused: ", e.what());
    reply(res, statusFor(e.code()), e.what());
  } catch (...) {
    release();
    throw;
  }
}

void StreamServer::Impl::handleWhepDelete(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  if (hasStream(id)) {
    refuseOnEndpoint(req, res);
    return;
  }
  if (!authorized(req, res)) return;
  if (!endSession(id, "DELETE from the viewer")) {
    reply(res, 404, "no WHEP session \"" + id + "\" (already ended, or never existed)");
    return;
  }
  reply(res, 200, "session ended");
}

bool StreamServer::Impl::knownSession(const std::string& id) const {
  std::lock_guard lock(mutex_);
  return sessions_.count(id) != 0;
}

void StreamServer::Impl::handleWhepSessionGet(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  if (hasStream(id)) {
    answerEndpointGet(res);
    return;
  }
  if (!authorized(req, res)) return;
  if (!knownSession(id)) {
    reply(res, 404, "no WHEP session \"" + id + "\" (already ended, or never existed)");
    return;
  }
  res.status = 200;  // RFC 9725 §4.1: a session has no representation, so 2xx with no content (above)
  res.set_header("Allow", kSessionAllow);
}

void StreamServer::Impl::handleWhepPatch(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  if (hasStream(id)) {
    refuseOnEndpoint(req, res);
    return;
  }
  if (!authorized(req, res)) return;
  if (!knownSession(id)) {
    reply(res, 404, "no WHEP session \"" + id + "\"");
    return;
  }
  // RFC 9725 §4.3.1 (HTTP PATCH request usage): a session that supports PATCH for no purpose (neither
  // trickle ICE nor ICE restarts) answers 501 Not Implemented (RFC 9110 §15.6.2).
  log::info("stream: PATCH on viewer ", id.substr(0, 8), " answered 501 (trickle ICE / ICE restart not supported)");
  reply(res, 501,
        "trickle ICE and ICE restarts are not supported: this server answers after ICE gathering "
        "completes, so the answer already holds every candidate");
}

void StreamServer::Impl::handleStats(const httplib::Request& req, httplib::Response& res) {
  if (config_.protectStats && !authorized(req, res)) return;
  std::function<std::string()> provider;
  {
    std::lock_guard lock(handlerMutex_);
    provider = statsProvider_;
  }
  res.set_header("Cache-Control", "no-store");
  if (provider) {
    res.set_content(provider(), "application/json");
  } else {
    res.set_content("{\"viewers\": " + std::to_string(viewerCount()) + "}\n", "application/json");
  }
}

void StreamServer::Impl::handleMetrics(const httplib::Request& req, httplib::Response& res) {
  if (config_.protectStats && !authorized(req, res)) return;
  std::function<std::string()> provider;
  {
    std::lock_guard lock(handlerMutex_);
    provider = metricsProvider_;
  }
  if (!provider) {
    reply(res, 404, "no metrics at " + req.path);
    return;
  }
  res.set_header("Cache-Control", "no-store");
  res.set_content(provider(), "text/plain; version=0.0.4; charset=utf-8");
}

void StreamServer::Impl::handleStatic(const httplib::Request& req, httplib::Response& res) {
  auto asset = stream::findWebAsset(req.path, config_.webRoot);
  if (!asset) {
    reply(res, 404, "no file " + req.path);
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_content(std::move(asset->body), asset->contentType);
}

}  // namespace zerohop
