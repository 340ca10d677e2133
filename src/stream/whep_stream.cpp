// WhepStream: one named stream of a StreamServer (StreamServer::addStream), fed by one camera's pipeline.

#include <algorithm>
#include <cctype>

#include "stream/stream_server_impl.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

bool validStreamName(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
}

}  // namespace

// Borrows the server's Impl: the stream must not outlive its StreamServer (documented on WhepStream).
class StreamServer::Impl::NamedStream final : public WhepStream {
 public:
  NamedStream(StreamServer::Impl& server, std::string name) : server_(server), name_(std::move(name)) {}

  void deliver(const EncodedUnitPtr& unit) override { server_.publish(name_, unit); }
  void setKeyframeRequester(std::function<void()> request) override {
    std::lock_guard lock(server_.handlerMutex_);
    server_.streamKeyframeHandlers_[name_] = std::move(request);
  }
  void setEncodeKeyframeRequester(std::function<void(PixelFormat codec, std::size_t rung)> request) override {
    std::lock_guard lock(server_.handlerMutex_);
    server_.streamEncodeKeyframeHandlers_[name_] = std::move(request);
  }
  std::string describe() const override {
    return std::string("WHEP viewers at ") + (server_.tls_ ? "https://" : "http://") + server_.config_.host + ":" +
           std::to_string(server_.boundPort_) + "/whep/" + name_;
  }
  std::size_t viewerCount() const override { return server_.viewerCount(name_); }
  bool wantsCodec(PixelFormat codec) const override { return server_.wantsCodec(name_, codec); }
  void setCodecAvailability(PixelFormat codec, std::string whyNot) override {
    server_.setCodecAvailability(name_, codec, std::move(whyNot));
  }
  void setRenditions(const std::vector<Rendition>& ladder) override { server_.setRenditions(name_, ladder); }
  bool wantsRendition(std::size_t rung) const override { return server_.wantsRendition(name_, rung); }
  std::uint32_t renditionTargetKbps(std::size_t rung) const override { return server_.renditionTargetKbps(name_, rung); }
  std::vector<ViewerStats> viewerStats() const override { return server_.viewerStats(&name_); }
  std::vector<std::uint64_t> rungSwitches() const override { return server_.rungSwitches(name_); }
  const std::string& name() const override { return name_; }
  void setMaxBitrate(std::uint32_t kbps) override { server_.setMaxBitrate(name_, kbps); }
  std::uint32_t targetBitrateKbps(PixelFormat codec) const override { return server_.targetBitrateKbps(name_, codec); }
  StreamBitrate bitrate(PixelFormat codec) const override { return server_.bitrate(name_, codec); }
  void publishAudio(EncodedUnitPtr opusPacket) override { server_.publishAudio(name_, opusPacket); }
  StreamAudioSent audioSent() const override { return server_.audioSent(&name_); }

 private:
  StreamServer::Impl& server_;
  const std::string name_;
};

std::shared_ptr<WhepStream> StreamServer::addStream(const std::string& name) {
  if (!validStreamName(name)) {
    throw Error(Errc::kInvalidArgument,
                "stream name \"" + name + "\": use letters, digits, '_' and '-' only");
  }
  {
    std::lock_guard lock(impl_->handlerMutex_);
    if (!impl_->streamKeyframeHandlers_.emplace(name, nullptr).second) {
      throw Error(Errc::kInvalidArgument, "stream \"" + name + "\" exists already on this server");
    }
  }
  return std::make_shared<Impl::NamedStream>(*impl_, name);
}

}  // namespace zerohop
