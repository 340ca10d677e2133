#include "stream/whip_publisher.hpp"

#include <fcntl.h>
#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <ctime>
#include <mutex>

#include "core/setting_log.hpp"
#include "core/unique_fd.hpp"
#include "stream/glib_loop_thread.hpp"
#include "stream/loopback_host.hpp"
#include "stream/simulcast_sdp.hpp"
#include "stream/tcp_bytes_received.hpp"
#include "stream/video_offer.hpp"
#include "stream/viewer_session.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::stream {
namespace {

constexpr std::chrono::milliseconds kNegotiationTimeout{5000};
// What one request to the endpoint may take, connect, headers and body together: an answer trickled a
// byte a second is cut off here (cpp-httplib's own timeouts are per read, so they never end it).
constexpr std::chrono::milliseconds kExchangeTimeout{5000};
// OPTIONS before the offer and DELETE at the end: shorter, and the DELETE also runs while stopping.
constexpr std::chrono::milliseconds kSideExchangeTimeout{1500};
// An SDP answer is a few KB; a body past this is refused as it arrives (never held whole).
constexpr std::size_t kMaxAnswerBytes = 256 * 1024;
// All an answer may be, status line, headers and body: past it the exchange is cut (cpp-httplib 0.11
// keeps any number of header lines: a header flood took serve's RSS up 281 MB in 5 s). The kernel counts
// what the socket received; the watchdog reads that count every kReceivedPoll.
constexpr std::uint64_t kMaxReceivedBytes = kMaxAnswerBytes + 64 * 1024;
constexpr std::chrono::milliseconds kReceivedPoll{2};
// 307/308 redirects of the POST followed, at most (WHIP load balancing redirects once or twice).
constexpr int kMaxRedirects = 5;
// WHIP's offer: one H.264 video m-line with this payload type (publishOnce).
constexpr int kOfferPayloadType = 96;
constexpr int kOfferOpusPayloadType = 111;  // what browsers offer Opus as

std::unique_ptr<httplib::Client> clientFor(const HttpUrl& url, const std::string& token) {
  auto cli = std::make_unique<httplib::Client>(url.origin());
  cli->set_connection_timeout(2, 0);
  cli->set_read_timeout(5, 0);
  cli->set_write_timeout(5, 0);
  cli->set_follow_location(false);  // redirects are followed in publishOnce, the token kept to its origin
  cli->set_keep_alive(false);
  if (!token.empty()) cli->set_bearer_token_auth(token);
  return cli;
}

std::string firstLine(const std::string& body) {
  std::string line = body.substr(0, body.find('\n'));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

}  // namespace

WhipPublisher::WhipPublisher(Options options, std::function<void()> onKeyframeRequest, GlibLoopThread& loop)
    : options_(std::move(options)),
      endpoint_(parseHttpUrl(options_.url)),
      onKeyframeRequest_(std::move(onKeyframeRequest)),
      loop_(loop) {
  worker_ = std::thread([this] { run(); });
}

httplib::Response WhipPublisher::exchange(const std::string& method, const HttpUrl& url, const std::string& sdp,
                                          std::chrono::milliseconds limit, bool stopWithPublisher) {
  // The bearer token goes to the origin of --whip only: never to another one a redirect or a Location names.
  auto cli = clientFor(url, url.origin() == endpoint_.origin() ? options_.token : std::string());
  httplib::Request req;
  req.method = method;
  req.path = url.target;
  if (!sdp.empty()) {
    req.body = sdp;
    req.set_header("Content-Type", "application/sdp");
  }
  std::string body;
  bool tooLarge = false;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    if (body.size() + n > kMaxAnswerBytes) {
      tooLarge = true;
      return false;
    }
    body.append(data, n);
    return true;
  };
  // The exchange's socket, a duplicate of httplib's, owned here. Through it the watchdog reads the
  // connection's received count and, to cut the exchange, shuts the connection down (a shutdown acts on
  // the connection, whichever descriptor names it: httplib's blocked read or connect ends at once), so
  // nothing of httplib's runs on the watchdog's thread (its stop() from there was an unlock TSan never
  // saw locked: httplib is an uninstrumented library). httplib calls the callback on this thread, inside
  // send(); socketMutex orders its replacement of the copy against the watchdog's use of it.
  std::mutex socketMutex;
  UniqueFd socketCopy;
  cli->set_socket_options([&](socket_t sock) {
    UniqueFd copy(::fcntl(sock, F_DUPFD_CLOEXEC, 0));
    std::lock_guard lock(socketMutex);
    socketCopy = std::move(copy);  // another address tried: the earlier copy closes
  });
  const auto receivedSoFar = [&] {
    std::lock_guard lock(socketMutex);
    return socketCopy ? tcpBytesReceived(socketCopy.get()).value_or(0) : 0;
  };
  const auto cutConnection = [&] {
    std::lock_guard lock(socketMutex);
    if (socketCopy) (void)::shutdown(socketCopy.get(), SHUT_RDWR);
  };
  bool done = false, timedOut = false, stopped = false, flooded = false;
  {
    std::lock_guard lock(stateMutex_);
    if (stopWithPublisher && stopping_) throw Error(Errc::kUnavailable, "stopping");
  }
  // Cuts the exchange short at its deadline, when the publisher stops, or once the endpoint has sent
  // more than an answer may be: the connection shut down ends a blocked read or connect at once; again
  // every 50 ms while there is no socket yet (a name still being resolved).
  std::thread watchdog([&] {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::unique_lock lock(stateMutex_);
    const auto cut = [&] { return done || (stopWithPublisher && stopping_); };
    for (;;) {
      if (stateCv_.wait_for(lock, kReceivedPoll, cut)) {
        if (done) return;
        break;  // stopping
      }
      if (std::chrono::steady_clock::now() >= deadline) break;
      if (receivedSoFar() > kMaxReceivedBytes) {
        flooded = true;
        break;
      }
    }
    while (!done) {
      if (!flooded) (stopWithPublisher && stopping_ ? stopped : timedOut) = true;
      cutConnection();
      stateCv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; });
    }
  });
  httplib::Result res = cli->send(req);
  {
    std::lock_guard lock(stateMutex_);
    done = true;
  }
  stateCv_.notify_all();
  watchdog.join();
  const std::string what = method + " " + url.str();
  if (flooded) {
    throw Error(Errc::kProtocol, what + ": the endpoint sent over " +
                                     std::to_string(kMaxReceivedBytes / 1024) +
                                     " KB (headers and body; an SDP answer is a few KB); cut off");
  }
  if (tooLarge) {
    throw Error(Errc::kProtocol, what + ": the answer's body is over " + std::to_string(kMaxAnswerBytes / 1024) +
                                     " KB (an SDP answer is a few KB); refused, nothing more read");
  }
  if (stopped) throw Error(Errc::kUnavailable, what + ": cut short, the publisher is stopping");
  if (timedOut) {
    throw Error(Errc::kTimeout, what + ": no complete answer (headers and body) within " +
                                    std::to_string(limit.count()) + " ms; the endpoint is too slow or trickles it");
  }
  if (!res) {
    throw Error(Errc::kUnavailable, what + " failed: " + httplib::to_string(res.error()) + " (is the WHIP endpoint up?)");
  }
  httplib::Response out = *res;
  out.body = std::move(body);
  return out;
}

WhipPublisher::~WhipPublisher() {
  {
    std::lock_guard lock(stateMutex_);
    stopping_ = true;
  }
  stateCv_.notify_all();
  {
    std::lock_guard lock(sessionMutex_);
    if (session_) session_->abort();  // wakes an offer that waits for ICE gathering
  }
  if (worker_.joinable()) worker_.join();
}

void WhipPublisher::push(const EncodedUnitPtr& unit) {
  if (!unit || !takesRung(unit->rendition)) return;
  std::lock_guard lock(sessionMutex_);
  if (session_) session_->pushLayer(unit->rendition, unit);
}

void WhipPublisher::pushAudio(const EncodedUnitPtr& unit) {
  std::lock_guard lock(sessionMutex_);
  if (session_) session_->pushAudio(unit);
}

bool WhipPublisher::sleepUnlessStopping(std::chrono::milliseconds d) {
  std::unique_lock lock(stateMutex_);
  return !stateCv_.wait_for(lock, d, [this] { return stopping_; });
}

void WhipPublisher::run() {
  auto backoff = options_.minBackoff;
  for (unsigned attempt = 1;; ++attempt) {
    {
      std::lock_guard lock(stateMutex_);
      if (stopping_) return;
    }
    bool wasConnected = false;
    try {
      wasConnected = publishOnce(attempt);
    } catch (const Error& e) {
      log::warn("whip: ", endpoint_.str(), ": ", e.what());
    } catch (const std::exception& e) {
      log::error("whip: ", endpoint_.str(), ": unexpected failure: ", e.what());
    }
    if (wasConnected) backoff = options_.minBackoff;
    {
      std::lock_guard lock(stateMutex_);
      if (stopping_) return;
    }
    log::info("whip: reconnecting in ", backoff.count(), " ms");
    if (!sleepUnlessStopping(backoff)) return;
    backoff = std::min(backoff * 2, options_.maxBackoff);
  }
}

bool WhipPublisher::publishOnce(unsigned attempt) {
  {
    std::lock_guard lock(stateMutex_);
    sessionEnded_ = false;
    endReason_.clear();
  }
  ViewerSession::Events events;
  events.onConnected = [this] {
    {
      std::lock_guard lock(stateMutex_);
      connected_.store(true);
    }
    sessionsConnected_.fetch_add(1);
    stateCv_.notify_all();
    if (onKeyframeRequest_) onKeyframeRequest_();
  };
  events.onKeyframeRequest = [this] {
    if (onKeyframeRequest_) onKeyframeRequest_();
  };
  events.onEnded = [this](const std::string& reason) {
    {
      std::lock_guard lock(stateMutex_);
      sessionEnded_ = true;
      endReason_ = reason;
    }
    stateCv_.notify_all();
  };
  events.post = [this](std::function<void()> task) { loop_.post(std::move(task)); };
  events.onLayerKeyframeRequest = [this](std::size_t layer) {
    if (options_.onLayerKeyframeRequest) options_.onLayerKeyframeRequest(layer);
  };

  // ICE servers: the configured ones (fresh TURN REST credentials each session), then the ones the
  // endpoint names in Link rel="ice-server" headers (RFC 9725 §4.6). webrtcbin takes its servers before
  // it gathers, and this client is non-trickle (the offer carries every candidate, no PATCH), so the
  // endpoint's servers must be known before the offer: an OPTIONS pre-flight asks for them (as the
  // viewer page asks OPTIONS /whep; an endpoint that answers OPTIONS without Link headers costs one
  // round trip), and those of a 201 serve the next session (a reconnect). The configured STUN server
  // wins over the endpoint's (webrtcbin takes one).
  preflightEndpointIce();
  SessionIce ice;
  {
    const SessionIceServers configured = options_.iceServers.forSession(static_cast<std::int64_t>(::time(nullptr)));
    std::lock_guard lock(iceMutex_);
    ice.stunServer = !configured.stunServer.empty() ? configured.stunServer : endpointIce_.stunServer;
    ice.turnServers = configured.turnServers;
    for (const std::string& t : endpointIce_.turnServers)
      if (std::find(ice.turnServers.begin(), ice.turnServers.end(), t) == ice.turnServers.end()) ice.turnServers.push_back(t);
    lastSessionIce_ = SessionIceServers{ice.stunServer, ice.turnServers, {}};
  }

  // The offer's H.264: Constrained Baseline, packetization-mode 1, what the encoder produces.
  VideoChoice choice;
  choice.mediaIndex = 0;
  choice.payloadType = kOfferPayloadType;
  choice.profileLevelId = "42e01f";
  if (options_.sound) choice.audio = AudioChoice{1, kOfferOpusPayloadType};  // Opus, 48 kHz, beside it
  for (std::size_t layer = 0; options_.simulcastLayers > 1 && layer < options_.simulcastLayers; ++layer)
    choice.simulcastRids.push_back(simulcastRid(layer));
  rungsTaken_.store(1);
  auto session = std::make_shared<ViewerSession>("whip-" + std::to_string(attempt), choice,
                                                 isLoopbackHost(endpoint_.host), std::move(events), ice);
  {
    std::lock_guard lock(sessionMutex_);
    session_ = session;
  }
  // Whatever happens below, the session leaves the table (outside push's lock) before we return.
  struct Drop {
    WhipPublisher& self;
    std::shared_ptr<ViewerSession>& session;
    ~Drop() {
      {
        std::lock_guard lock(self.sessionMutex_);
        self.session_.reset();
      }
      self.connected_.store(false);
      session.reset();  // tears the pipeline down here, on the worker thread
    }
  } drop{*this, session};
  {
    std::lock_guard lock(stateMutex_);
    if (stopping_) return false;
  }

  const std::string offer = session->createOffer(kNegotiationTimeout);
  if (!ice.turnServers.empty() && offer.find(" typ relay") == std::string::npos) {
    log::warnAbout(setting::kIceServers, "whip: session ", attempt,
                   ": no relay candidate from the TURN server(s): unreachable, or the credentials were refused; "
                   "offering the direct candidates only");
  }
  // POST, following 307/308 redirects (RFC 9725 §4.5) as a browser would: the token only to the origin
  // of --whip, so a redirect elsewhere is followed without it (and said so).
  HttpUrl target = endpoint_;
  httplib::Response res;
  for (int redirects = 0;; ++redirects) {
    res = exchange("POST", target, offer, kExchangeTimeout, true);
    if (res.status != 307 && res.status != 308) break;
    const std::string location = res.get_header_value("Location");
    if (location.empty())
      throw Error(Errc::kProtocol, "POST " + target.str() + " answered " + std::to_string(res.status) + " without a Location");
    if (redirects == kMaxRedirects) {
      throw Error(Errc::kProtocol, "POST " + endpoint_.str() + ": more than " + std::to_string(kMaxRedirects) +
                                       " redirects (a loop?); the last to " + location);
    }
    const HttpUrl next = resolveLocation(target, location);
    if (next.origin() != endpoint_.origin() && !options_.token.empty()) {
      log::warn("whip: POST ", target.str(), " redirected (", res.status, ") to another origin, ", next.origin(),
                ": following it without the bearer token (the WHIP token is sent to ", endpoint_.origin(), " only)");
    } else {
      log::info("whip: POST ", target.str(), " redirected (", res.status, ") to ", next.str());
    }
    target = next;
  }
  if (res.status != 201) {
    const bool offOrigin = target.origin() != endpoint_.origin();
    throw Error(res.status == 401 || res.status == 403 ? Errc::kInvalidArgument : Errc::kUnavailable,
                "POST " + target.str() + " answered " + std::to_string(res.status) + " (want 201 Created)" +
                    (res.status == 401 ? (offOrigin ? ", sent without the token (another origin than the WHIP URL's)"
                                                    : ", check the WHIP token")
                                       : "") +
                    ": " + firstLine(res.body));
  }
  const HttpUrl resource = resolveLocation(target, res.get_header_value("Location"));
  rememberEndpointIce(res, "201");
  struct Delete {
    WhipPublisher& self;
    const HttpUrl& resource;
    ~Delete() { self.deleteResource(resource); }
  } deleteOnExit{*this, resource};

  try {
    checkPublishAnswer(res.body, kOfferPayloadType);
  } catch (const Error& e) {
    throw Error(e.code(), "refused the answer of POST " + target.str() + ": " + e.what());
  }
  session->applyAnswer(res.body, kNegotiationTimeout);
  if (!choice.simulcastRids.empty()) rungsTaken_.store(simulcastLayersTaken(res.body, choice.simulcastRids));
  log::info("whip: session ", attempt, " negotiated with ", endpoint_.str(), " (resource ", resource.str(),
            ")");

  std::unique_lock lock(stateMutex_);
  stateCv_.wait_for(lock, options_.connectTimeout,
                    [&] { return stopping_ || sessionEnded_ || connected_.load(); });
  if (stopping_) return connected_.load();
  if (!connected_.load()) {
    throw Error(Errc::kTimeout, sessionEnded_
                                    ? "the session ended before it connected: " + endReason_
                                    : "not connected " + std::to_string(options_.connectTimeout.count()) +
                                          " ms after the answer (ICE/DTLS failed?)");
  }
  log::info("whip: publishing to ", endpoint_.str());
  stateCv_.wait(lock, [&] { return stopping_ || sessionEnded_; });
  if (sessionEnded_) log::warn("whip: the session ended: ", endReason_);
  return true;
}

std::uint32_t WhipPublisher::simulcastLayersTaken(const std::string& answer,
                                                  const std::vector<std::string>& rids) const {
  const std::vector<std::string> taken = simulcastReceivedRids(answer);
  if (taken.empty()) {
    log::info("whip: ", endpoint_.str(),
              " answered without simulcast (no a=simulcast:recv): sending the full-size "
              "layer alone");
    return 1;
  }
  std::uint32_t mask = 0;
  std::string named;
  for (std::size_t layer = 0; layer < rids.size() && layer < 32; ++layer) {
    if (std::find(taken.begin(), taken.end(), rids[layer]) == taken.end()) continue;
    mask |= 1u << layer;
    named += (named.empty() ? "" : ", ") + rids[layer] + " (rung " + std::to_string(layer) + ")";
  }
  if (mask == 0) {
    log::warn("whip: ", endpoint_.str(),
              " takes none of the offered simulcast layers (its a=simulcast:recv names "
              "others): sending the full-size layer alone");
    return 1;
  }
  log::info("whip: ", endpoint_.str(), " takes simulcast layers ", named);
  return mask;
}

void WhipPublisher::preflightEndpointIce() {
  try {
    const httplib::Response res = exchange("OPTIONS", endpoint_, {}, kSideExchangeTimeout, true);
    if (res.status / 100 == 2 && res.has_header("Link")) rememberEndpointIce(res, "OPTIONS");
  } catch (const std::exception& e) {
    log::info("whip: OPTIONS ", endpoint_.str(), ": ", e.what(), " (no ICE servers from the endpoint)");
  }
}

void WhipPublisher::rememberEndpointIce(const httplib::Response& res, const char* answered) {
  std::vector<std::string> links;
  const std::size_t n = res.get_header_value_count("Link");
  for (std::size_t i = 0; i < n; ++i) links.push_back(res.get_header_value("Link", i));
  std::size_t skipped = 0;
  SessionIceServers fromEndpoint = iceServersFromLinks(links, skipped);
  if (skipped > 0)
    log::warn("whip: ", skipped, " rel=\"ice-server\" Link header(s) of the ", answered,
              " unreadable or without credentials; passed over");
  std::lock_guard lock(iceMutex_);
  const bool changed = fromEndpoint.stunServer != endpointIce_.stunServer || fromEndpoint.turnServers != endpointIce_.turnServers;
  if (changed && (!fromEndpoint.stunServer.empty() || !fromEndpoint.turnServers.empty())) {
    log::info("whip: the endpoint names ", fromEndpoint.turnServers.size(), " TURN and ",
              fromEndpoint.stunServer.empty() ? 0 : 1,
              " STUN server(s) in the Link headers of its ", answered,
              std::string(answered) == "201" ? "; used from the next session on (this one gathered already)" : "");
  }
  endpointIce_ = std::move(fromEndpoint);
}

SessionIceServers WhipPublisher::lastSessionIce() const {
  std::lock_guard lock(iceMutex_);
  return lastSessionIce_;
}

void WhipPublisher::deleteResource(const HttpUrl& resource) {
  try {
    // Not cut short by stopping: the resource is freed on the way out, within kSideExchangeTimeout.
    const httplib::Response res = exchange("DELETE", resource, {}, kSideExchangeTimeout, false);
    if (res.status / 100 != 2) log::info("whip: DELETE ", resource.str(), " answered ", res.status, ": ", firstLine(res.body));
  } catch (const Error& e) {
    log::info("whip: ", e.what(), " (endpoint gone?)");
  } catch (const std::exception& e) {
    log::warn("whip: DELETE ", resource.str(), ": ", e.what());
  }
}

}  // namespace zerohop::stream
