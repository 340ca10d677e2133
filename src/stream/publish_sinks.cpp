// makeWhipSink / makeRtpSink (zerohop/stream_server.hpp): WhipPublisher and RtpSender as UnitSinks.
// Each sink's keyframe requests reach whoever attach() named through a KeyframeRelay,
// since the publisher or sender starts (and may ask) before the pipeline has installed its requester.
#include <atomic>
#include <memory>
#include <mutex>

#include "stream/glib_loop_thread.hpp"
#include "stream/janus_api.hpp"
#include "stream/janus_target.hpp"
#include "stream/rtp_sender.hpp"
#include "stream/whip_publisher.hpp"
#include "zerohop/log.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

/// The requester installed later; requests before it are dropped (the first keyframe comes anyway).
class KeyframeRelay {
 public:
  void set(std::function<void()> request) {
    std::lock_guard lock(mutex_);
    request_ = std::move(request);
  }
  void operator()() {
    std::function<void()> request;
    {
      std::lock_guard lock(mutex_);
      request = request_;
    }
    if (request) request();
  }

 private:
  std::mutex mutex_;
  std::function<void()> request_;
};

class WhipSink final : public UnitSink {
 public:
  WhipSink(const std::string& url, const std::string& token, const StreamConfig& ice)
      : relay_(std::make_shared<KeyframeRelay>()), url_(url), sound_(ice.sound),
        whip_(options(url, token, ice), [relay = relay_] { (*relay)(); }, loop_) {}
  void deliver(const EncodedUnitPtr& unit) override {
    if (unit->kind() == MediaKind::kAudio) {
      whip_.pushAudio(unit);
    } else {
      whip_.push(unit);
    }
  }
  bool wants(TrackKey track) const override { return track == TrackKey{} || track.codec == Codec::kOpus; }
  void attach(const SinkSetup& setup) override { relay_->set(setup.requestKeyframe); }
  void detach() override { relay_->set(nullptr); }
  std::string describe() const override { return sound_ ? "WHIP to " + url_ + " (picture and sound)" : "WHIP to " + url_; }

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
  std::shared_ptr<KeyframeRelay> relay_;
  std::string url_;
  bool sound_ = false;
  stream::GlibLoopThread loop_;  // the publisher's GStreamer work; outlives it (declared first)
  stream::WhipPublisher whip_;   // DELETEs the WHIP resource when destroyed (bounded)
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
  return std::make_unique<WhipSink>(url, token, ice);
}

std::unique_ptr<UnitSink> makeRtpSink(const std::string& target) { return std::make_unique<RtpSink>(target); }

}  // namespace zerohop
