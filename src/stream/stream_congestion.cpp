// Congestion control of StreamServer (docs/stream.md, "Congestion control"): every kBitrateTickMs the
// loop thread reads each connected viewer's RTCP feedback from its RTP session, turns what is new into
// a CongestionFeedback for that viewer's BitrateController, and sets each of a stream's encode targets
// (H.264, VP8) to the weakest estimate of the viewers that receive that codec (EncodeTargets; a viewer
// without NACK only while no viewer with NACK shares the encode: followedEstimates). The encode threads
// read their codec's target (targetBitrateKbps).

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include "stream/stream_server_impl.hpp"
#include "stream/viewer_feedback.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

// A decrease whose transport-cc window lost this much asks for a keyframe, at most once per gap a viewer.
constexpr double kKeyframeAfterLoss = 0.2;
constexpr std::int64_t kLossKeyframeGapNs = 2'000'000'000;

stream::BitrateLimits limitsOf(const StreamConfig& config, std::uint32_t maxKbps) {
  return {std::min(config.minBitrateKbps, maxKbps), maxKbps};
}

}  // namespace

StreamServer::Impl::StreamRate& StreamServer::Impl::streamRate(StreamState& stream) {
  if (!stream.rate) stream.rate.emplace(limitsOf(config_, 0));
  return *stream.rate;
}

void StreamServer::Impl::setMaxBitrate(StreamState& stream, std::uint32_t kbps) {
  std::lock_guard table(mutex_);  // its viewers' rates are found through the sessions
  std::lock_guard lock(rateMutex_);
  StreamRate& r = streamRate(stream);
  if (!r.maxSet) {
    r.targets = stream::EncodeTargets(limitsOf(config_, kbps));  // both start at the maximum
  } else {
    r.targets.setLimits(limitsOf(config_, kbps));
  }
  r.maxSet = kbps > 0;
  for (auto& [id, session] : sessions_) {
    if (session->stream == &stream && session->rate)
      session->rate->controller.setLimits(r.viewerLimits(session->rate->codec));
  }
}

std::uint32_t StreamServer::Impl::targetBitrateKbps(const StreamState& stream, Codec codec) const {
  return renditionTargetKbps(stream, 0, codec);
}

// With a ladder, each rung's encode of a codec follows that codec's viewers placed on it (EncodeTarget
// within the rung's range; none: it rises to the rung's maximum); rung 0 of a codec without a ladder is
// its one encode, which follows the weakest of its viewers.
std::uint32_t StreamServer::Impl::renditionTargetKbps(const StreamState& stream, std::size_t rung,
                                                      Codec codec) const {
  if (!config_.congestionControl) return 0;
  std::lock_guard lock(rateMutex_);
  if (!stream.rate || !stream.rate->maxSet) return 0;
  const StreamRate& r = *stream.rate;
  if (!r.laddered(codec)) return rung == 0 ? r.targets.targetKbps(codec) : 0;
  const std::vector<stream::EncodeTarget>& targets = r.rungTargetsOf(codec);
  return rung < targets.size() ? targets[rung].targetKbps() : 0;
}

void StreamServer::Impl::setRenditions(StreamState& stream, const std::vector<Rendition>& ladder, bool vp8) {
  std::lock_guard table(mutex_);  // its viewers' rates are found through the sessions
  std::lock_guard lock(rateMutex_);
  StreamRate& r = streamRate(stream);
  r.ladder = ladder.size() > 1 ? ladder : std::vector<Rendition>{};
  r.vp8Ladder = vp8 && !r.ladder.empty();
  r.rungTargets.clear();
  r.vp8RungTargets.clear();
  for (const Rendition& rung : r.ladder) {
    r.rungTargets.emplace_back(stream::BitrateLimits{rung.minKbps, rung.maxKbps});
    if (r.vp8Ladder) r.vp8RungTargets.emplace_back(stream::BitrateLimits{rung.minKbps, rung.maxKbps});
  }
  for (auto& [id, session] : sessions_) {
    if (session->stream == &stream && session->rate) {
      session->rate->placement.reset();  // placed afresh on the new ladder
      session->rate->controller.setLimits(r.viewerLimits(session->rate->codec));
    }
  }
  if (!r.ladder.empty()) {
    std::string rungs;
    for (const Rendition& rung : r.ladder) {
      rungs += (rungs.empty() ? "" : ", ") + std::to_string(rung.width) + "x" + std::to_string(rung.height) + " " +
               std::to_string(rung.minKbps) + "-" + std::to_string(rung.maxKbps) + " kb/s";
    }
    log::info("stream", stream.logName(), ": renditions ", rungs, "; each H.264 ",
              r.vp8Ladder ? "and VP8 " : "", "viewer receives the highest its own estimate fits");
  }
}

StreamBitrate StreamServer::Impl::bitrate(const StreamState& stream, Codec codec) const {
  StreamBitrate b;
  std::lock_guard lock(rateMutex_);
  if (!stream.rate) return b;
  const StreamRate& r = *stream.rate;
  b.congestionControl = config_.congestionControl && r.maxSet;
  b.minKbps = r.targets.limits().minKbps;
  b.maxKbps = r.targets.limits().maxKbps;
  b.targetKbps = b.congestionControl ? r.targets.targetKbps(codec) : 0;
  if (b.congestionControl && r.laddered(codec) && !r.rungTargetsOf(codec).empty()) {
    b.targetKbps = r.rungTargetsOf(codec)[0].targetKbps();  // with a ladder, rung 0's viewers' own
  }
  b.sentKbps = r.sent(codec).sentKbps;
  return b;
}

void StreamServer::Impl::countPublished(StreamState& stream, Codec codec, std::size_t bytes) {
  std::lock_guard lock(rateMutex_);
  streamRate(stream).sent(codec).bytesSinceTick += bytes;
}

void StreamServer::Impl::SentWindow::tick() {
  window[windowNext] = std::exchange(bytesSinceTick, 0);
  windowNext = (windowNext + 1) % std::size(window);
  sentKbps = static_cast<double>(std::accumulate(std::begin(window), std::end(window), 0ull)) * 8 /
             1000;  // the window is one second
}

void StreamServer::Impl::updateBitrates() {
  const std::int64_t now = monotonicNs();
  struct Viewer {
    std::string id;
    StreamState* stream;
    std::shared_ptr<SessionRecord> record;
    Codec codec;
    std::shared_ptr<stream::ViewerSession> session;
    stream::ViewerSession::FeedbackReading reading;
  };
  std::vector<Viewer> viewers;
  std::vector<std::shared_ptr<SessionRecord>> unconnected;  // their rates start afresh once connected
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, record] : sessions_) {
      const std::shared_ptr<stream::ViewerSession>& s = record->session;
      if (s && s->connected()) {
        // A viewer of the sound alone receives no encode this controls (the Opus encode is shared
        // and fixed-rate).
        if (!s->choice().hasVideo()) continue;
        viewers.push_back({id, record->stream, record, s->codec(), s, {}});
      } else {
        unconnected.push_back(record);
      }
    }
  }
  for (auto& v : viewers) v.reading = v.session->readFeedback();  // outside the table's lock
  const std::vector<StreamState*> streams = streamList();

  struct KeyframeFor {  // a viewer to ask a keyframe for (of its own encode) once the rate lock is let go
    StreamState* stream;
    std::shared_ptr<std::atomic<std::size_t>> keyframeRung;
    Codec codec;
  };
  std::vector<KeyframeFor> keyframeFor;
  std::unique_lock lock(rateMutex_);
  for (const auto& record : unconnected) record->rate.reset();
  std::map<const StreamState*, std::vector<stream::ViewerEstimate>> estimates;  // stream -> its viewers' estimates
  struct Placed {
    std::string id;
    std::shared_ptr<SessionRecord> record;
    std::size_t rung;
    Codec codec;
  };
  std::vector<Placed> placed;  // viewers of streams with a ladder for their codec: the rung each should be on
  // stream -> per rung: the viewers placed on it (H.264; VP8)
  std::map<const StreamState*, std::vector<std::vector<stream::ViewerEstimate>>> rungEstimates,
      vp8RungEstimates;
  for (const StreamState* s : streams) {
    if (!s->rate) continue;
    rungEstimates[s].assign(s->rate->ladder.size(), {});
    vp8RungEstimates[s].assign(s->rate->vp8Ladder ? s->rate->ladder.size() : 0, {});
  }
  // The encodes (stream, codec, rung) a viewer with NACK receives: a viewer without NACK asks no loss
  // keyframe of those (below); of an encode only such viewers share, it may.
  std::set<std::tuple<const StreamState*, Codec, std::size_t>> checkedEncodes;
  for (const auto& v : viewers) {
    if (v.session->choice().nackFeedback) checkedEncodes.emplace(v.stream, v.codec, v.record->keyframeRung->load());
  }
  for (const auto& v : viewers) {
    StreamRate& stream = streamRate(*v.stream);
    const bool nack = v.session->choice().nackFeedback;
    const bool ownWord = !nack && checkedEncodes.count({v.stream, v.codec, v.record->keyframeRung->load()}) > 0;
    if (!v.record->rate) {
      // A new viewer starts at its codec's encode's current rate: it has seen nothing else.
      v.record->rate.emplace(ViewerRate{
          v.codec,
          stream::BitrateController(stream.viewerLimits(v.codec), stream.targets.targetKbps(v.codec))});
      if (!nack) {
        log::info(
            "stream: viewer ", v.id.substr(0, 8),
            " offered no NACK: the loss its receiver reports claim cannot be ",
            "checked, so it lowers its encode's bitrate only while no viewer with NACK shares that encode");
      }
    }
    ViewerRate& r = *v.record->rate;
    stream::CongestionFeedback f = stream::congestionFeedback(v.reading, r.last, now, nack, r.nacksAtReport);
    // GCC's throughput bound where this viewer's encode can reach its estimate: no ladder, VP8, or the
    // top rung (a lower rung's encode stops below the next rung's floor; moving up is the probe there).
    f.boundByThroughput = !stream.laddered(r.codec) || !r.placement || r.placement->rung() == 0;
    if (r.sentKbps > 0) f.sentLastSecondKbps = r.sentKbps;
    if (v.reading.report && (!r.last.report || v.reading.report->highestSeq != r.last.report->highestSeq))
      r.nacksAtReport = v.reading.nackRequests;
    r.controller.update(f);
    // A burst that lost a fifth of a window or more (a bottleneck that just appeared): a keyframe at the
    // lowered rate repairs it at once, where retransmitting the burst through the same full queue takes
    // seconds and freezes the picture meanwhile (the retransmission budget passes over requests older
    // than that keyframe). Not for a viewer without NACK on an encode a viewer with NACK receives: its loss
    // is its word alone (followedEstimates), and a keyframe of that encode for it is one more on a viewer
    // whose feedback can be checked; its own PLIs, limited to one a second, ask for what it needs.
    if (!ownWord && r.controller.lastDecision() == stream::BitrateController::Decision::kDecrease &&
        f.lossFraction && *f.lossFraction >= kKeyframeAfterLoss &&
        now - r.lossKeyframeNs >= kLossKeyframeGapNs) {
      r.lossKeyframeNs = now;
      keyframeFor.push_back({v.stream, v.record->keyframeRung, v.codec});
      log::debug("stream: viewer ", v.id.substr(0, 8), " lost ", *f.lossFraction * 100, " % of a window: keyframe");
    }
    if (f.fresh) {
      const stream::ViewerSession::Retransmissions rtx = v.session->retransmissions();
      log::debug("stream: viewer ", v.id.substr(0, 8), " feedback: loss ", f.lossFraction.value_or(-1) * 100,
                 " %, rtt ", f.rttMs.value_or(-1), " ms, sent ", f.sendKbps.value_or(-1), " received ",
                 f.receiveKbps.value_or(-1), " kb/s, delta of delta ", f.deltaOfDeltaMs.value_or(0),
                 " ms -> estimate ", r.controller.estimateKbps(), "; retransmitted ", rtx.resent, " (",
                 rtx.twice, " twice), passed over ", rtx.refused, ", keyframes ", rtx.keyframes);
    }
    if (f.fresh) r.sawFeedback = true;
    if (r.lastReadNs != 0 && now > r.lastReadNs && v.reading.octetsSent >= r.last.octetsSent) {
      const double kbps = static_cast<double>(v.reading.octetsSent - r.last.octetsSent) * 8 / 1000 /
                          (static_cast<double>(now - r.lastReadNs) / 1e9);
      r.sentKbps = r.sentKbps < 0 ? kbps : 0.75 * r.sentKbps + 0.25 * kbps;  // ~1 s at 4 ticks a second
    }
    if (f.lossFraction) r.lossPercent = *f.lossFraction * 100;
    if (f.rttMs) r.rttMs = *f.rttMs;
    if (f.receiveKbps) r.receivedKbps = *f.receiveKbps;
    // The estimate bounds what this viewer's NACKs may make us resend (retransmission_budget.hpp).
    v.session->setRetransmissionPath(r.controller.estimateKbps(), r.rttMs > 0 ? r.rttMs : 0.0);
    if (config_.adaptivePlayoutDelay) adaptPlayoutDelay(v.id, *v.session, r, v.record->playoutBase, now);
    r.last = v.reading;
    r.lastReadNs = now;
    if (r.sawFeedback) estimates[v.stream].push_back({r.codec, r.controller.estimateKbps(), nack});
    // Renditions: the viewer's own estimate places it on its stream's ladder (only its own).
    if (stream.laddered(r.codec)) {
      if (!r.placement) r.placement.emplace(stream.ladder, 0);
      const std::size_t before = r.placement->rung();
      const int top = v.record->topRung.load();  // the viewer's own choice of its highest (whep_layer.cpp)
      r.placement->setTop(top < 0 ? 0 : static_cast<std::size_t>(top));
      const std::size_t rung =
          r.sawFeedback ? r.placement->update(now, r.controller.estimateKbps()) : r.placement->rung();
      placed.push_back({v.id, v.record, rung, r.codec});
      if (rung != before) {
        log::info("stream: viewer ", v.id.substr(0, 8), " to rendition ", rung, " (", stream.ladder[rung].width, "x",
                  stream.ladder[rung].height, "): its estimate is ", r.controller.estimateKbps(), " kb/s",
                  r.placement->top() > 0 ? ", its chosen highest rendition " + std::to_string(r.placement->top()) : "");
      }
      auto& onRungs = (r.codec == Codec::kVP8 ? vp8RungEstimates : rungEstimates)[v.stream];
      if (r.sawFeedback && rung < onRungs.size())
        onRungs[rung].push_back({r.codec, r.controller.estimateKbps(), nack});
    }
  }
  for (StreamState* s : streams) {
    if (!s->rate) continue;
    StreamRate& stream = *s->rate;
    stream.h264.tick();
    stream.vp8.tick();
    if (!stream.maxSet || !config_.congestionControl) continue;
    const std::uint32_t h264Before = stream.targets.targetKbps(Codec::kH264);
    const std::uint32_t vp8Before = stream.targets.targetKbps(Codec::kVP8);
    stream.targets.update(now, estimates[s]);
    for (Codec codec : {Codec::kH264, Codec::kVP8}) {
      std::vector<stream::EncodeTarget>& targets = stream.rungTargetsOf(codec);
      std::vector<std::vector<stream::ViewerEstimate>>& onRungs =
          (codec == Codec::kVP8 ? vp8RungEstimates : rungEstimates)[s];
      for (std::size_t rung = 0; rung < targets.size() && rung < onRungs.size(); ++rung) {
        const std::uint32_t before = targets[rung].targetKbps();
        const std::vector<std::uint32_t> followed = stream::followedEstimates(onRungs[rung]);
        const std::uint32_t after = targets[rung].update(now, followed);
        if (after * 10 < before * 9 || before * 10 < after * 9) {
          log::info("stream", s->logName(), ": rendition ", rung, codec == Codec::kVP8 ? " (VP8)" : "",
                    " bitrate ", before, " -> ", after, " kb/s (the weakest of ", followed.size(), " of the ",
                    onRungs[rung].size(), " viewer(s) on it)");
        }
      }
    }
    for (const auto& [codec, before] :
         {std::pair{Codec::kH264, h264Before}, std::pair{Codec::kVP8, vp8Before}}) {
      const std::uint32_t after = stream.targets.targetKbps(codec);
      const std::size_t counted = stream.targets.viewersCounted(codec);
      // A 10 % step or more is worth a line; the VP8 target moves alone (no VP8 viewer) quietly.
      // With a ladder a codec's encodes follow their rungs' viewers (logged above), not the weakest of all.
      if (stream.laddered(codec)) continue;
      if ((after * 10 < before * 9 || before * 10 < after * 9) && (counted > 0 || codec == Codec::kH264)) {
        log::info("stream", s->logName(), ": ", codec == Codec::kVP8 ? "VP8" : "H.264", " bitrate ", before,
                  " -> ", after, " kb/s (the weakest of ", counted, " viewer(s))");
      }
    }
  }
  lock.unlock();
  // A viewer that is to move asks for a keyframe of its new rung: its track switches at that one's first.
  // Its keyframe requests are for that rung from now on (its record's keyframeRung), never the others'.
  {
    std::lock_guard table(mutex_);
    for (const Placed& p : placed) {
      if (!sessions_.count(p.id)) continue;  // ended meanwhile
      stream::RungRoute& route = p.record->route ? *p.record->route : p.record->route.emplace();
      if (route.target != p.rung) {
        route.target = p.rung;
        p.record->keyframeRung->store(p.rung);
        if (route.target != route.current)
          keyframeFor.push_back({p.record->stream, p.record->keyframeRung, p.codec});
      }
    }
  }
  for (const KeyframeFor& k : keyframeFor) requestViewerKeyframe(*k.stream, *k.keyframeRung, k.codec);
}

// A viewer whose path repairs losses slowly gets a playout delay that covers one repair, and the
// configured one back once the repairs stop (adaptive_playout_delay.hpp).
void StreamServer::Impl::adaptPlayoutDelay(const std::string& id, stream::ViewerSession& session,
                                           ViewerRate& r, stream::PlayoutDelay base, std::int64_t nowNs) {
  if (!r.playout) {
    r.playout.emplace(base);
    r.playoutSent = session.setPlayoutDelay(base);  // false: its offer had no extension
  }
  if (!r.playoutSent) return;
  const stream::PlayoutDelay before = r.playout->current();
  const stream::PlayoutDelay after = r.playout->update(nowNs, session.retransmissions().resent, r.rttMs);
  if (after == before) return;
  session.setPlayoutDelay(after);
  log::info("stream: viewer ", id.substr(0, 8), " playout delay ", before.minMs, ",", before.maxMs, " -> ", after.minMs, ",",
            after.maxMs, " ms (",
            r.playout->raised() ? "its lost packets are resent one round trip of " + std::to_string(static_cast<int>(r.rttMs)) +
                                      " ms later: frames wait for them instead of freezing"
                                : "its repairs stopped, or its round trip is short again",
            ")");
}

void StreamServer::Impl::fillCongestion(const SessionRecord& record, ViewerStats& t) const {
  std::lock_guard lock(rateMutex_);
  if (!record.rate) return;
  const ViewerRate& r = *record.rate;
  if (r.sawFeedback) t.estimateKbps = r.controller.estimateKbps();
  const std::optional<StreamRate>& stream = record.stream->rate;
  if (config_.congestionControl && stream && stream->maxSet) {
    t.encodeTargetKbps = stream->targets.targetKbps(r.codec);
    // With a ladder: the target of the rung it is placed on.
    if (r.placement && stream->laddered(r.codec) &&
        r.placement->rung() < stream->rungTargetsOf(r.codec).size()) {
      t.encodeTargetKbps = stream->rungTargetsOf(r.codec)[r.placement->rung()].targetKbps();
    }
  }
  t.sentKbps = r.sentKbps;
  t.lossPercent = r.lossPercent;
  t.rttMs = r.rttMs;
  t.receivedKbps = r.receivedKbps;
  if (r.playout && r.playoutSent) {
    t.playoutDelayMinMs = r.playout->current().minMs;
    t.playoutDelayMaxMs = r.playout->current().maxMs;
  }
}

}  // namespace zerohop
