// makeWhipSink / makeRtpSink (zerohop/stream_server.hpp): WhipPublisher and RtpSender as UnitSinks.
// Each sink's keyframe requests reach whoever attach() named through a KeyframeRelay,
// since the publisher or sender starts (and may ask) before the pipeline has installed its requester.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include "stream/glib_loop_thread.hpp"
#include "stream/janus_api.hpp"
#include "stream/janus_target.hpp"
#include "stream/rtp_sender.hpp"
#include "stream/whip_publisher.hpp"
#include "stream/whip_url.hpp"
#include "zerohop/log.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

/// A requester installed later (`void()`: every encode; `void(TrackKey)`: one track's); requests before
/// it are dropped (the first keyframe comes anyway).
template <typename... Args>
class Relay {
 public:
  void set(std::function<void(Args...)> request) {
    std::lock_guard lock(mutex_);
    request_ = std::move(request);
  }
  void operator()(Args... args) {
    std::function<void(Args...)> request;
    {
      std::lock_guard lock(mutex_);
      request = request_;
    }
    if (request) request(args...);
  }

 private:
  std::mutex mutex_;
  std::function<void(Args...)> request_;
};
using KeyframeRelay = Relay<>;
using TrackKeyframeRelay = Relay<TrackKey>;

// With simulcast the publisher starts at the first attach(), when the camera's ladder is known (its
// rungs are the layers); without, at once.
class WhipSink final : public UnitSink {
 public:
  // The most layers offered: what SFUs take (Janus: 3 substreams; browsers send 3).
  static constexpr std::size_t kMaxSimulcastLayers = 3;

  WhipSink(const std::string& url, const std::string& token, const StreamConfig& ice, bool simulcast)
      : relay_(std::make_shared<KeyframeRelay>()),
        layerRelay_(std::make_shared<TrackKeyframeRelay>()),
        url_(url),
        sound_(ice.sound),
        simulcast_(simulcast),
        options_(options(url, token, ice)) {
    (void)stream::parseHttpUrl(url);  // a malformed URL is an error now, not at attach()
    if (!simulcast_) start(0);
  }
  void deliver(const EncodedUnitPtr& unit) override {
    stream::WhipPublisher* whip = whip_.load(std::memory_order_acquire);
    if (!whip) return;
    if (unit->kind() == MediaKind::kAudio) {
      whip->pushAudio(unit);
    } else {
      whip->push(unit);
    }
  }
  bool wants(TrackKey track) const override {
    if (track == TrackKey{} || track.codec == Codec::kOpus) return true;
    const stream::WhipPublisher* whip = whip_.load(std::memory_order_acquire);
    return track.codec == Codec::kH264 && whip && whip->takesRung(track.rung);
  }
  void attach(const SinkSetup& setup) override {
    relay_->set(setup.requestKeyframe);
    layerRelay_->set(setup.requestTrackKeyframe);
    if (!simulcast_ || owned_) return;
    const std::size_t layers = std::min(setup.ladder.size(), kMaxSimulcastLayers);
    if (layers < 2) {
      log::warn(
          "whip: simulcast asked for, but the camera has no ladder of renditions (renditions \"off\", or its "
          "picture too small for one): publishing one layer");
    } else if (setup.ladder.size() > kMaxSimulcastLayers) {
      log::info("whip: simulcast of the ladder's first ", kMaxSimulcastLayers, " rungs (it has ",
                setup.ladder.size(), ")");
    }
    start(layers);
  }
  void detach() override {
    relay_->set(nullptr);
    layerRelay_->set(nullptr);
  }
  std::string describe() const override {
    std::string d = "WHIP to " + url_;
    if (sound_ && simulcast_) return d + " (picture and sound, simulcast)";
    return d + (sound_ ? " (picture and sound)" : simulcast_ ? " (simulcast)" : "");
  }

 private:
  static stream::WhipPublisher::Options options(const std::string& url, const std::string& token,
                                                const StreamConfig& ice) {
    stream::WhipPublisher::Options o;
    o.url = url;
    o.token = token;
    o.iceServers = stream::IceServers(ice.iceServers, ice.turnSecret, ice.turnCredentialSeconds);
    o.sound = ice.sound;
    return o;
  }
  void start(std::size_t layers) {
    stream::WhipPublisher::Options o = options_;
    o.simulcastLayers = layers > 1 ? layers : 0;
    o.onLayerKeyframeRequest = [relay = layerRelay_](std::size_t layer) {
      (*relay)(TrackKey{Codec::kH264, static_cast<std::uint8_t>(layer)});
    };
    owned_ = std::make_unique<stream::WhipPublisher>(
        std::move(o), [relay = relay_] { (*relay)(); }, loop_);
    whip_.store(owned_.get(), std::memory_order_release);
  }

  std::shared_ptr<KeyframeRelay> relay_;
  std::shared_ptr<TrackKeyframeRelay> layerRelay_;
  std::string url_;
  bool sound_ = false;
  bool simulcast_ = false;
  stream::WhipPublisher::Options options_;
  stream::GlibLoopThread loop_;  // the publisher's GStreamer work; outlives it (declared first)
  std::unique_ptr<stream::WhipPublisher> owned_;       // DELETEs the WHIP resource when destroyed (bounded)
  std::atomic<stream::WhipPublisher*> whip_{nullptr};  // owned_, published to the encode threads
};

class RtpSink final : public UnitSink {
 public:
  explicit RtpSink(const std::string& spec)
      : relay_(std::make_shared<KeyframeRelay>()), spec_(spec),
        sender_(target(spec), [relay = relay_] { (*relay)(); }) {}
  void deliver(const EncodedUnitPtr& unit) override {
    if (unit->kind() == MediaKind::kVideo) {
      sender_.push(unit);
    } else if (sender_.takesSound()) {
      sender_.pushAudio(unit);
    } else if (!toldNoSound_.exchange(true)) {
      log::info("janus: ", spec_, " takes no sound (give the mountpoint an Opus audio media, or audio=PORT): "
                "the pictures alone go there");
    }
  }
  bool wants(TrackKey track) const override { return track == TrackKey{} || track.codec == Codec::kOpus; }
  void attach(const SinkSetup& setup) override { relay_->set(setup.requestKeyframe); }
  void detach() override { relay_->set(nullptr); }
  std::string describe() const override { return "RTP to " + spec_; }

 private:
  static stream::RtpTarget target(const std::string& spec) {
    const stream::JanusTarget janus = stream::parseJanusTarget(spec);
    return janus.mountpoint ? stream::lookUpJanusMountpoint(janus) : janus.rtp;
  }
  std::shared_ptr<KeyframeRelay> relay_;
  std::string spec_;
  stream::RtpSender sender_;
  std::atomic<bool> toldNoSound_{false};
};

}  // namespace

std::unique_ptr<UnitSink> makeWhipSink(const std::string& url, const std::string& token, const StreamConfig& ice) {
  return std::make_unique<WhipSink>(url, token, ice, false);
}

std::unique_ptr<UnitSink> makeWhipSink(const std::string& url, const std::string& token,
                                       const StreamConfig& ice, bool simulcast) {
  return std::make_unique<WhipSink>(url, token, ice, simulcast);
}

std::unique_ptr<UnitSink> makeRtpSink(const std::string& target) { return std::make_unique<RtpSink>(target); }

}  // namespace zerohop
