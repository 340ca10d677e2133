#include "zerohop/stream_server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

#include "core/opus_toc.hpp"
#include "core/setting_log.hpp"
#include "stream/gst_handles.hpp"
#include "stream/loopback_host.hpp"
#include "stream/stream_server_impl.hpp"
#include "stream/tls_context.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {
namespace {

std::string hostPort(const std::string& host, std::uint16_t port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

[[noreturn]] void throwBindError(const std::string& host, std::uint16_t port, int err) {
  // In the library's terms (the listen host and port of StreamConfig / zh_stream_options): the
  // CLI adds its own flag for setting::kListen.
  const std::string where = hostPort(host, port);
  const std::string other = hostPort(host, static_cast<std::uint16_t>(port == 65535 ? 8081 : port + 1));
  if (err == EADDRINUSE) {
    throw SettingError(Errc::kUnavailable, setting::kListen,
                       where + " is already in use (another zerohop server?); listen on another port, e.g. " +
                           other);
  }
  if (err == EACCES) {
    throw SettingError(Errc::kUnavailable, setting::kListen,
                       "bind(" + where + ") failed: " + std::strerror(err) +
                           "; ports below 1024 need privileges, listen on another port, e.g. " + other);
  }
  throw SettingError(Errc::kUnavailable, setting::kListen,
                     "bind(" + where + ") failed: " + std::strerror(err) +
                         "; listen on an address of this machine, e.g. 127.0.0.1:8080");
}

void checkElements() {
  struct Need {
    const char* factory;
    const char* package;
  };
  static constexpr Need kNeeds[] = {
      {"appsrc", "gstreamer1.0-plugins-base"},   {"rtph264pay", "gstreamer1.0-plugins-good"},
      {"webrtcbin", "gstreamer1.0-plugins-bad"}, {"dtlssrtpenc", "gstreamer1.0-plugins-bad"},
      {"nicesink", "gstreamer1.0-nice"},         {"rtpbin", "gstreamer1.0-plugins-good"},
  };
  for (const auto& n : kNeeds) {
    stream::GstPtr<GstElementFactory> f(gst_element_factory_find(n.factory));
    if (!f) {
      throw Error(Errc::kUnavailable, std::string("gst_element_factory_find(\"") + n.factory +
                                          "\") found nothing: install " + n.package +
                                          " (scripts/install-deps.sh)");
    }
  }
}

}  // namespace

stream::SessionIce StreamServer::Impl::sessionIce(std::vector<std::string>& links) const {
  const stream::SessionIceServers servers = iceServers_.forSession(static_cast<std::int64_t>(::time(nullptr)));
  links = servers.linkHeaders;
  stream::SessionIce ice;
  ice.stunServer = servers.stunServer;
  ice.turnServers = servers.turnServers;
  ice.minPort = config_.udpPortMin;
  ice.maxPort = config_.udpPortMax;
  return ice;
}

stream::HttpServerLimits StreamServer::Impl::httpLimits(const StreamConfig& config) {
  stream::HttpServerLimits limits;
  limits.request.maxBodyBytes = config.maxBodyBytes;
  return limits;
}

std::string newSessionId() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throwErrno("getrandom", errno, "session id");
    }
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

StreamServer::Impl::Impl(StreamConfig config) : config_(std::move(config)) {
  stream::ensureGstInit();
  checkElements();
  loopbackHost_ = stream::isLoopbackHost(config_.host);
  if (!config_.webRoot.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(config_.webRoot, ec)) {
      throw Error(Errc::kNotFound,
                  "web root \"" + config_.webRoot +
                      "\" is not a directory; point it at the web/ "
                      "folder of the source tree, or leave it empty to serve the embedded page");
    }
  }
  iceServers_ = stream::IceServers(config_.iceServers, config_.turnSecret, config_.turnCredentialSeconds);
  if (!config_.iceHost.empty()) {
    in_addr v4{};
    in6_addr v6{};
    if (::inet_pton(AF_INET, config_.iceHost.c_str(), &v4) != 1 &&
        ::inet_pton(AF_INET6, config_.iceHost.c_str(), &v6) != 1) {
      throw SettingError(Errc::kInvalidArgument, setting::kIceHost,
                         "ICE host address \"" + config_.iceHost +
                             "\" is not an IPv4 or IPv6 address; give the address viewers reach this host at");
    }
  }
  if ((config_.udpPortMin == 0) != (config_.udpPortMax == 0) || config_.udpPortMin > config_.udpPortMax) {
    throw SettingError(Errc::kInvalidArgument, setting::kUdpPorts,
                       "UDP port range " + std::to_string(config_.udpPortMin) + "-" +
                           std::to_string(config_.udpPortMax) +
                           ": give MIN-MAX with 1 <= MIN <= MAX <= 65535 (or 0-0: any port)");
  }
  if (config_.udpPortMax != 0 && config_.udpPortMax - config_.udpPortMin + 1u < config_.maxViewers) {
    log::warnAbout(setting::kUdpPorts, "stream: the UDP port range ", config_.udpPortMin, "-", config_.udpPortMax,
                   " has ", config_.udpPortMax - config_.udpPortMin + 1, " ports for up to ", config_.maxViewers,
                   " viewers (one each): viewers past them get no host candidate");
  }
  if (std::count_if(config_.iceServers.begin(), config_.iceServers.end(),
                    [](const std::string& url) { return url.rfind("stun", 0) == 0; }) > 1) {
    log::info("stream: webrtcbin uses one STUN server, the first stun: of the ICE servers; the viewers get all of them");
  }
  if (config_.maxViewers == 0) {
    throw Error(Errc::kInvalidArgument,
                "StreamConfig::maxViewers is 0: no viewer could ever connect; use 1 or more");
  }
  sendOptions_.playoutDelay = stream::PlayoutDelay{config_.playoutDelayMinMs, config_.playoutDelayMaxMs};
  sendOptions_.omitPlayoutDelay = !config_.sendPlayoutDelay;
  try {
    stream::checkPlayoutDelay(sendOptions_.playoutDelay, "playout delay");
  } catch (const Error& e) {
    throw SettingError(e.code(), setting::kPlayoutDelay, e.what());
  }

  std::shared_ptr<const stream::TlsContext> tls;
  if (!config_.tlsCertFile.empty() || !config_.tlsKeyFile.empty()) {
    if (config_.tlsCertFile.empty() || config_.tlsKeyFile.empty()) {
      const bool keyOnly = config_.tlsCertFile.empty();
      throw SettingError(Errc::kInvalidArgument, keyOnly ? setting::kTlsCert : setting::kTlsKey,
                         std::string(keyOnly ? "a TLS key without a TLS certificate"
                                             : "a TLS certificate without a TLS key") +
                             ": HTTPS needs both, the certificate chain (fullchain.pem) and its private key "
                             "(privkey.pem)");
    }
    tls = std::make_shared<const stream::TlsContext>(config_.tlsCertFile, config_.tlsKeyFile);
    if (!tls->validityWarning().empty()) log::warnAbout(setting::kTlsCert, "stream: ", tls->validityWarning());
    tls_ = true;
  }
  unnamed_ = &streamNamed(kUnnamedStream);
  unnamed_->audio = config_.sound;
  defaultStream_ = config_.defaultStream.empty() ? unnamed_ : &streamNamed(config_.defaultStream);
  http_ = std::make_unique<stream::DeadlineHttpServer>(httpLimits(config_));
  http_->setTls(std::move(tls));
  installRoutes();
  const int port = http_->bindAndListen(config_.host, config_.port);
  if (port <= 0) throwBindError(config_.host, config_.port, port < 0 ? -port : EADDRNOTAVAIL);
  boundPort_ = static_cast<std::uint16_t>(port);

  loop_ = std::make_unique<stream::GlibLoopThread>();
  loop_->every(1000, [this] { reapStaleSessions(); });
  loop_->every(kBitrateTickMs, [this] { updateBitrates(); });
  httpThread_ = std::thread([this] {
    if (!http_->run()) log::error("stream: the HTTP server stopped with an error");
    httpExited_ = true;
  });
  log::info("stream: serving ", hostPort(config_.host, boundPort_), tls_ ? " over HTTPS" : "", " (WHEP at /whep)");
  if (!loopbackHost_ && config_.whepToken.empty()) {
    log::warnAbout(setting::kWhepToken, "stream: listening on ", config_.host,
                   " without a WHEP token: anyone who can reach it can watch");
  }
  if (config_.warmUp) warmup_ = std::make_unique<stream::WebrtcWarmup>();  // last: nothing throws after it
}

StreamServer::Impl::~Impl() {
  std::map<std::string, std::shared_ptr<SessionRecord>> sessions;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    sessions.swap(sessions_);
  }
  for (auto& [id, r] : sessions) {
    if (r->session) r->session->abort();  // wakes a POST /whep that is waiting for ICE
  }
  http_->requestStop();
  if (httpThread_.joinable()) httpThread_.join();
  sessions.clear();  // each sets its pipeline to NULL
  loop_.reset();
  warmup_.reset();  // waits for a warm-up still running (a server destroyed right after its start)
}

namespace {

// level_idc of the first SPS (NAL type 7) in an Annex B unit, 0 when it has none: the byte after
// profile_idc and the constraint flags (ITU-T H.264 §7.3.2.1.1; those three bytes hold no emulation
// prevention byte for any level_idc a real stream has).
int spsLevelIdc(const std::vector<std::uint8_t>& b) {
  for (std::size_t i = 0; i + 6 < b.size(); ++i) {
    if (b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1 && (b[i + 3] & 0x1f) == 7) {
      const int profile = b[i + 4], constraints = b[i + 5], level = b[i + 6];
      // Level 1b in Baseline/Main/Extended: level_idc 11 with constraint_set3_flag (as profileLevelIdLevel).
      if (level == 11 && (constraints & 0x10) != 0 && (profile == 66 || profile == 77 || profile == 88)) return 9;
      return level;
    }
  }
  return 0;
}

}  // namespace

void StreamServer::Impl::publish(StreamState& stream, const EncodedUnitPtr& unit) {
  if (!unit) return;
  if (unit->kind() == MediaKind::kAudio) {
    publishAudio(stream, unit);
    return;
  }
  if (unit->codec == Codec::kH264 && unit->keyframe && unit->rendition == 0) {
    if (const int level = spsLevelIdc(unit->bytes); level > 0) {
      std::lock_guard lock(handlerMutex_);
      stream.h264Format = H264Format{level, unit->width, unit->height};
    }
  }
  if (unit->rendition == 0) countPublished(stream, unit->codec, unit->bytes.size());
  std::lock_guard lock(mutex_);
  for (auto& [id, r] : sessions_) {
    const std::shared_ptr<stream::ViewerSession>& s = r->session;
    if (!s || r->stream != &stream) continue;
    // A viewer takes its rung's units of its codec, and switches rung at the new one's keyframe (RungRoute).
    if (unit->codec == s->codec()) {
      stream::RungRoute& route = r->route ? *r->route : r->route.emplace();
      const std::uint64_t before = route.switches;
      if (!route.take(unit->rendition, unit->keyframe)) continue;
      if (route.switches != before) {
        std::vector<std::uint64_t>& to =
            unit->codec == Codec::kVP8 ? stream.vp8SwitchesTo : stream.switchesTo;
        if (to.size() <= route.current) to.resize(route.current + 1);
        ++to[route.current];
      }
    }
    s->push(unit);  // non-blocking
  }
}

std::vector<std::uint64_t> StreamServer::Impl::rungSwitches(const StreamState& stream, Codec codec) const {
  std::size_t rungs = 0;
  {
    std::lock_guard lock(rateMutex_);
    if (stream.rate && stream.rate->laddered(codec)) rungs = stream.rate->ladder.size();
  }
  std::vector<std::uint64_t> out(rungs, 0);
  std::lock_guard lock(mutex_);
  const std::vector<std::uint64_t>& to = codec == Codec::kVP8 ? stream.vp8SwitchesTo : stream.switchesTo;
  for (std::size_t r = 0; r < to.size() && r < out.size(); ++r) out[r] = to[r];
  return out;
}

// Rung 0: a session of `codec` without a route yet, or one whose route takes it; a lower rung: a route
// that takes it.
bool StreamServer::Impl::wantsRendition(const StreamState& stream, std::size_t rung, Codec codec) const {
  std::lock_guard lock(mutex_);
  for (const auto& [id, r] : sessions_) {
    if (r->stream != &stream || !r->session || r->session->codec() != codec) continue;
    if (r->route ? r->route->wants(rung) : rung == 0) return true;
  }
  return false;
}

void StreamServer::Impl::attach(StreamState& stream, const SinkSetup& setup) {
  {
    std::lock_guard lock(handlerMutex_);
    stream.keyframeHandler = setup.requestKeyframe;
    stream.encodeKeyframeHandler = setup.requestTrackKeyframe;
  }
  setCodecAvailability(stream, Codec::kVP8, setup.whyUnavailable(Codec::kVP8));
  setRenditions(stream, setup.ladder, setup.vp8Ladder);
}

void StreamServer::Impl::detach(StreamState& stream) {
  std::lock_guard lock(handlerMutex_);
  stream.keyframeHandler = nullptr;
  stream.encodeKeyframeHandler = nullptr;
}

bool StreamServer::Impl::wants(const StreamState& stream, TrackKey track) const {
  switch (track.codec) {
    case Codec::kH264:
      return wantsRendition(stream, track.rung);
    case Codec::kVP8:
      return wantsRendition(stream, track.rung, Codec::kVP8);
    case Codec::kOpus:
      return true;  // the first packet makes the stream one with sound, before any viewer asks for it
  }
  return false;
}

std::uint32_t StreamServer::Impl::targetKbps(const StreamState& stream, TrackKey track) const {
  switch (track.codec) {
    case Codec::kH264:
      return renditionTargetKbps(stream, track.rung);
    case Codec::kVP8:
      return renditionTargetKbps(stream, track.rung, Codec::kVP8);
    case Codec::kOpus:
      break;
  }
  return 0;
}

void StreamServer::Impl::publishAudio(StreamState& stream, const EncodedUnitPtr& unit) {
  if (!unit) return;
  {
    std::lock_guard lock(handlerMutex_);
    stream.audio = true;
    if (opusPacketChannels(unit->bytes.data(), unit->bytes.size()) == 2) stream.audioChannels = 2;
  }
  std::lock_guard lock(mutex_);
  for (auto& [id, r] : sessions_) {
    const std::shared_ptr<stream::ViewerSession>& s = r->session;
    if (!s || !s->hasAudio() || !s->connected() || r->stream != &stream) continue;
    s->pushAudio(unit);  // non-blocking
    ++stream.audioCounts.units;
  }
}

StreamAudioSent StreamServer::Impl::audioSent(const StreamState* stream) const {
  StreamAudioSent sent;
  const std::vector<StreamState*> streams = streamList();
  std::lock_guard lock(mutex_);
  for (const StreamState* s : streams) {
    if (stream && s != stream) continue;
    sent.units += s->audioCounts.units;
    sent.dropped += s->audioCounts.dropped;
  }
  for (const auto& [id, r] : sessions_) {
    if (!r->session || (stream && r->stream != stream)) continue;
    sent.dropped += r->session->audioDropped();
  }
  return sent;
}

bool StreamServer::Impl::hasAudio(const StreamState& stream) const {
  std::lock_guard lock(handlerMutex_);
  return stream.audio;
}

int StreamServer::Impl::audioChannels(const StreamState& stream) const {
  std::lock_guard lock(handlerMutex_);
  return stream.audioChannels;
}

void StreamServer::Impl::setCodecAvailability(StreamState& stream, Codec codec, std::string whyNot) {
  if (codec != Codec::kVP8) return;  // H.264 is always sent; nothing else is known here
  std::lock_guard lock(handlerMutex_);
  stream::SendableCodecs& s = stream.sendable ? *stream.sendable : stream.sendable.emplace();
  s.vp8 = whyNot.empty();
  s.vp8WhyNot = std::move(whyNot);
}

stream::SendableCodecs StreamServer::Impl::sendable(const StreamState& stream) const {
  std::lock_guard lock(handlerMutex_);
  stream::SendableCodecs out = stream.sendable ? *stream.sendable
      : stream::SendableCodecs{false, "this stream is fed H.264 only (VP8 is made by a zerohop pipeline, CPU or GPU path)"};
  out.h264Level = stream.h264Format.level;  // 0 before its first keyframe: not known
  return out;
}

StreamServer::Impl::H264Format StreamServer::Impl::h264Format(const StreamState& stream) const {
  std::lock_guard lock(handlerMutex_);
  return stream.h264Format;
}

std::size_t StreamServer::Impl::viewerCount() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::size_t StreamServer::Impl::viewerCount(const StreamState& stream) const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(sessions_.begin(), sessions_.end(),
                                                [&](const auto& entry) { return entry.second->stream == &stream; }));
}

std::vector<ViewerStats> StreamServer::Impl::viewerStats(const StreamState* stream) const {
  struct Viewer {
    std::shared_ptr<SessionRecord> record;
    std::shared_ptr<stream::ViewerSession> session;
  };
  std::vector<Viewer> viewers;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, r] : sessions_) {
      if (r->session && (!stream || r->stream == stream)) viewers.push_back({r, r->session});
    }
  }
  std::sort(viewers.begin(), viewers.end(),
            [](const Viewer& a, const Viewer& b) { return a.session->createdNs() < b.session->createdNs(); });
  auto sinceCreated = [](const stream::ViewerSession& s, std::int64_t at) {
    return at == 0 ? -1.0 : static_cast<double>(at - s.createdNs()) / 1e6;
  };
  std::vector<ViewerStats> out;
  for (const auto& [record, s] : viewers) {
    ViewerStats t;
    t.id = s->id().substr(0, 8);
    t.connected = s->connected();
    t.connectMs = sinceCreated(*s, s->connectedNs());
    t.firstFrameMs = sinceCreated(*s, s->firstPacketNs());
    t.codec = s->codec() == Codec::kVP8 ? "VP8" : s->codec() == Codec::kH264 ? "H264" : "none";
    if (s->codec() == Codec::kH264) {
      const stream::VideoChoice& c = s->choice();
      t.h264LevelOffered = c.offeredLevel > 0 ? stream::levelName(c.offeredLevel) : "";
      t.h264LevelSent = c.streamLevel > 0 ? stream::levelName(c.streamLevel) : "";
      t.levelCovered = c.streamLevel > 0 ? (c.levelCovered ? 1 : 0) : -1;
    }
    if (const auto feedback = s->transportFeedback()) {
      t.twccPacketsReceived = static_cast<int>(feedback->packetsReceived);
      t.twccLossPercent = feedback->lossPercent;
    }
    fillCongestion(*record, t);
    // A viewer of the sound alone is outside congestion control (no encode of its own to steer); its
    // loss is still the sound's FEC's business (viewer_loss.hpp), read from its last report.
    if (!s->choice().hasVideo()) {
      if (const auto report = s->lastMediaReport()) t.lossPercent = report->fractionLost * 100.0;
    }
    {
      std::lock_guard lock(mutex_);
      if (record->route && s->choice().hasVideo()) {
        t.rung = static_cast<int>(record->route->current);
        t.rungSwitches = record->route->switches;
      }
    }
    t.inboundDropped = s->inboundDropped();
    const stream::ViewerSession::Retransmissions rtx = s->retransmissions();
    t.repairs = rtx.resent;
    t.repairsTwice = rtx.twice;
    t.repairsPassedOver = rtx.refused;
    out.push_back(std::move(t));
  }
  return out;
}

bool StreamServer::Impl::endSession(const std::string& id, const std::string& reason) {
  std::shared_ptr<stream::ViewerSession> session;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || !it->second->session) return false;
    SessionRecord& r = *it->second;
    session = std::move(r.session);
    r.stream->audioCounts.dropped += session->audioDropped();
    r.route.reset();
    r.keyframeRung->store(0);  // a request still on its way asks for rung 0, as from a viewer never placed
    sessions_.erase(it);
  }
  log::info("stream: viewer ", id.substr(0, 8), " ended: ", reason);
  session.reset();  // tears the pipeline down here, outside the lock
  return true;
}

void StreamServer::Impl::endSessionLater(const std::string& id, const std::string& reason) {
  loop_->post([this, id, reason] { endSession(id, reason); });
}

// Called under handlerMutex_, so that once a requester is replaced (a camera's pipeline rebuilt) the
// old one is never called again; requesters only set a flag.
void StreamServer::Impl::requestKeyframe(StreamState& stream, Codec codec, std::size_t rung) {
  std::lock_guard lock(handlerMutex_);
  if (stream.encodeKeyframeHandler) {
    stream.encodeKeyframeHandler(TrackKey{codec, static_cast<std::uint8_t>(rung)});
  } else if (stream.keyframeHandler) {
    stream.keyframeHandler();
  }
}

void StreamServer::Impl::requestViewerKeyframe(StreamState& stream,
                                               const std::atomic<std::size_t>& keyframeRung, Codec codec) {
  if (codec != Codec::kH264 && codec != Codec::kVP8) return;  // a viewer of the sound alone
  requestKeyframe(stream, codec, keyframeRung.load());
}

void StreamServer::Impl::reapStaleSessions() {
  const std::int64_t now = monotonicNs();
  const std::int64_t limit = std::chrono::duration_cast<std::chrono::nanoseconds>(kConnectTimeout).count();
  std::vector<std::pair<std::string, std::string>> stale;  // id, reason
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, r] : sessions_) {
      const std::shared_ptr<stream::ViewerSession>& s = r->session;
      if (!s) continue;
      if (!s->connected() && now - s->createdNs() > limit) {
        stale.emplace_back(id, "the viewer never connected");
      } else if (std::string why = s->goneReason(now); !why.empty()) {
        stale.emplace_back(id, std::move(why));
      }
    }
  }
  for (const auto& [id, why] : stale) endSession(id, why);
}

StreamServer::StreamServer(StreamConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
StreamServer::~StreamServer() = default;

void StreamServer::setStatsProvider(std::function<std::string()> json) {
  std::lock_guard lock(impl_->handlerMutex_);
  impl_->statsProvider_ = std::move(json);
}

void StreamServer::setMetricsProvider(std::function<std::string()> text) {
  std::lock_guard lock(impl_->handlerMutex_);
  impl_->metricsProvider_ = std::move(text);
}

std::size_t StreamServer::viewerCount() const {
  return impl_->viewerCount();
}
StreamAudioSent StreamServer::audioSent() const { return impl_->audioSent(nullptr); }

std::vector<ViewerStats> StreamServer::viewerStats() const {
  return impl_->viewerStats();
}
std::uint16_t StreamServer::port() const {
  return impl_->boundPort_;
}
std::string StreamServer::url() const {
  return (impl_->tls_ ? "https://" : "http://") + hostPort(impl_->config_.host, impl_->boundPort_) + "/";
}

}  // namespace zerohop
