#include "stream/whip_publisher.hpp"

#include <httplib.h>

#include <algorithm>
#include <ctime>

#include "stream/glib_loop_thread.hpp"
#include "stream/loopback_host.hpp"
#include "stream/viewer_session.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::stream {
namespace {

constexpr std::chrono::milliseconds kNegotiationTimeout{5000};

std::unique_ptr<httplib::Client> clientFor(const HttpUrl& url, const std::string& token) {
  auto cli = std::make_unique<httplib::Client>(url.origin());
  cli->set_connection_timeout(3, 0);
  cli->set_read_timeout(5, 0);
  cli->set_write_timeout(5, 0);
  cli->set_follow_location(true);  // WHIP allows 307/308 redirects of the POST
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
  std::lock_guard lock(sessionMutex_);
  if (session_) session_->push(unit);
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
  choice.payloadType = 96;
  choice.profileLevelId = "42e01f";
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
    log::warn("whip: session ", attempt, ": no relay candidate from the TURN server(s): unreachable, or the "
              "credentials were refused; offering the direct candidates only");
  }
  auto cli = clientFor(endpoint_, options_.token);
  auto res = cli->Post(endpoint_.target.c_str(), offer, "application/sdp");
  if (!res) {
    throw Error(Errc::kUnavailable, "POST " + endpoint_.target + " failed: " +
                                        httplib::to_string(res.error()) + " (is the WHIP endpoint up?)");
  }
  if (res->status != 201) {
    throw Error(res->status == 401 || res->status == 403 ? Errc::kInvalidArgument : Errc::kUnavailable,
                "POST " + endpoint_.target + " answered " + std::to_string(res->status) +
                    " (want 201 Created)" + (res->status == 401 ? ", check --whip-token" : "") + ": " +
                    firstLine(res->body));
  }
  const HttpUrl resource = resolveLocation(endpoint_, res->get_header_value("Location"));
  rememberEndpointIce(*res, "201");
  struct Delete {
    WhipPublisher& self;
    const HttpUrl& resource;
    ~Delete() { self.deleteResource(resource); }
  } deleteOnExit{*this, resource};

  session->applyAnswer(res->body, kNegotiationTimeout);
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

void WhipPublisher::preflightEndpointIce() {
  try {
    auto cli = clientFor(endpoint_, options_.token);
    cli->set_connection_timeout(1, 0);
    cli->set_read_timeout(1, 0);
    auto res = cli->Options(endpoint_.target.c_str());
    if (res && res->status / 100 == 2 && res->has_header("Link")) rememberEndpointIce(*res, "OPTIONS");
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
    auto cli = clientFor(resource, options_.token);
    cli->set_connection_timeout(1, 0);
    cli->set_read_timeout(1, 0);
    auto res = cli->Delete(resource.target.c_str());
    if (!res) {
      log::info("whip: DELETE ", resource.str(), ": ", httplib::to_string(res.error()), " (endpoint gone)");
    } else if (res->status / 100 != 2) {
      log::info("whip: DELETE ", resource.str(), " answered ", res->status, ": ", firstLine(res->body));
    }
  } catch (const std::exception& e) {
    log::warn("whip: DELETE ", resource.str(), ": ", e.what());
  }
}

}  // namespace zerohop::stream
