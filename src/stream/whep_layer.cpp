// A viewer's choice of rendition: GET and POST on its session's layer URL, /whep/<id>/layer
// (stream/layer_request.hpp; docs/stream.md, "Choosing a rendition"). The choice is stored in the
// session's record and applied by updateBitrates() at its next tick (at most kBitrateTickMs later): the
// viewer's placement is capped there, and a new rung is switched to at its next keyframe, asked for then.
#include "stream/http_reply.hpp"
#include "stream/layer_request.hpp"
#include "stream/stream_server_impl.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

constexpr const char* kRel = "urn:ietf:params:whep:ext:core:layer";
constexpr std::int64_t kLayerChangeGapNs = 1'000'000'000;

}  // namespace

std::optional<std::string> StreamServer::Impl::layerLink(const StreamState& stream,
                                                         const std::string& id) const {
  std::lock_guard lock(rateMutex_);
  if (!stream.rate || stream.rate->ladder.empty()) return std::nullopt;
  return "</whep/" + id + "/layer>; rel=\"" + kRel + "\"";
}

void StreamServer::Impl::handleLayerGet(const httplib::Request& req, httplib::Response& res) {
  if (!authorized(req, res)) return;
  const std::string id = req.matches[1];
  std::shared_ptr<SessionRecord> record;
  std::vector<Rendition> ladder;
  std::size_t current = 0;
  if (!layerTarget(id, res, record, ladder, current)) return;
  const int top = record->topRung.load();
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  res.set_content(
      stream::layerJson(ladder, top < 0 ? std::nullopt : std::optional<std::size_t>(top), current),
      "application/json");
}

void StreamServer::Impl::handleLayerPost(const httplib::Request& req, httplib::Response& res) {
  if (!authorized(req, res)) return;
  const std::string id = req.matches[1];
  const std::string type = req.get_header_value("Content-Type");
  if (type.rfind("application/json", 0) != 0) {
    stream::reply(res, 415,
                  "a layer request is JSON (Content-Type: application/json), e.g. {\"encodingId\":\"1\"}");
    return;
  }
  std::shared_ptr<SessionRecord> record;
  std::vector<Rendition> ladder;
  std::size_t current = 0;
  if (!layerTarget(id, res, record, ladder, current)) return;
  std::optional<std::size_t> top;
  try {
    top = stream::parseLayerRequest(req.body, ladder.size());
  } catch (const Error& e) {
    stream::reply(res, 400, e.what());
    return;
  }
  const int chosen = top ? static_cast<int>(*top) : -1;
  // Each move asks a keyframe of a shared encode (the rung moved to), which every viewer on that rung
  // receives: one change a second at most, so a viewer flipping its choice cannot force more keyframes
  // on the others than its PLIs may (viewer_keyframe_requests.hpp: one a second). A repeat is free.
  const std::int64_t now = monotonicNs();
  const std::int64_t since = now - record->topRungChangedNs.load();
  if (record->topRung.load() != chosen && since < kLayerChangeGapNs) {
    res.set_header("Retry-After", "1");
    stream::reply(res, 429,
                  "one rendition choice a second (each asks a keyframe of a shared encode); try again in " +
                      std::to_string((kLayerChangeGapNs - since) / 1'000'000) + " ms");
    return;
  }
  if (record->topRung.exchange(chosen) != chosen) {
    record->topRungChangedNs.store(now);
    log::info("stream: viewer ", id.substr(0, 8), " chose ",
              top ? "rendition " + std::to_string(*top) + " (" + std::to_string(ladder[*top].width) + "x" +
                        std::to_string(ladder[*top].height) + ") as its highest"
                  : std::string("automatic renditions (its estimate decides)"));
  }
  res.status = 200;
  res.set_content(stream::layerJson(ladder, top, current), "application/json");
}

bool StreamServer::Impl::layerTarget(const std::string& id, httplib::Response& res,
                                     std::shared_ptr<SessionRecord>& record, std::vector<Rendition>& ladder,
                                     std::size_t& current) const {
  bool vp8 = false, soundAlone = false;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) {
      stream::reply(res, 404, "no WHEP session \"" + id + "\" (already ended, or never existed)");
      return false;
    }
    record = it->second;
    current = record->route ? record->route->current : 0;
    vp8 = record->session && record->session->codec() == Codec::kVP8;
    soundAlone = record->session && !record->session->choice().hasVideo();
  }
  if (soundAlone) {
    stream::reply(res, 409,
                  "this viewer receives the sound alone: renditions are for viewers of the picture");
    return false;
  }
  std::lock_guard lock(rateMutex_);
  const StreamState& stream = *record->stream;
  if (!stream.rate || stream.rate->ladder.empty()) {
    stream::reply(res, 409,
                  "this stream has no renditions to choose from (its pipeline was configured without a "
                  "ladder of renditions)");
    return false;
  }
  if (vp8 && !stream.rate->vp8Ladder) {
    stream::reply(res, 409,
                  "this viewer receives VP8, which has one encode here (this pipeline makes no VP8 rungs): "
                  "renditions are for its H.264 viewers");
    return false;
  }
  ladder = stream.rate->ladder;
  return true;
}

}  // namespace zerohop
