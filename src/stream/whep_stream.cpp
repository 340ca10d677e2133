// WhepStream: one stream of a StreamServer (StreamServer::addStream, or unnamedStream: the one POST /whep
// plays), fed by one pipeline;
// and the server's table of streams (StreamState by name) it and the unnamed stream live in.

#include <algorithm>
#include <cctype>
#include <utility>

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
  NamedStream(StreamServer::Impl& server, StreamState& state) : server_(server), state_(state) {}

  void deliver(const EncodedUnitPtr& unit) override { server_.publish(state_, unit); }
  void attach(const SinkSetup& setup) override { server_.attach(state_, setup); }
  void detach() override { server_.detach(state_); }
  std::string describe() const override {
    const bool unnamed = &state_ == &server_.unnamed();  // POST /whep plays it
    return std::string("WHEP viewers at ") + (server_.tls_ ? "https://" : "http://") + server_.config_.host + ":" +
           std::to_string(server_.boundPort_) + (unnamed ? "/whep" : "/whep/" + state_.name);
  }
  std::size_t viewerCount() const override { return server_.viewerCount(state_); }
  bool wants(TrackKey track) const override { return server_.wants(state_, track); }
  std::uint32_t targetKbps(TrackKey track) const override { return server_.targetKbps(state_, track); }
  std::vector<ViewerStats> viewerStats() const override { return server_.viewerStats(&state_); }
  std::vector<std::uint64_t> rungSwitches() const override { return server_.rungSwitches(state_); }
  std::vector<std::uint64_t> vp8RungSwitches() const override {
    return server_.rungSwitches(state_, Codec::kVP8);
  }
  const std::string& name() const override {
    static const std::string kNone;
    return &state_ == &server_.unnamed() ? kNone : state_.name;
  }
  void setMaxBitrate(std::uint32_t kbps) override { server_.setMaxBitrate(state_, kbps); }
  std::uint32_t targetBitrateKbps(Codec codec) const override {
    return server_.targetBitrateKbps(state_, codec);
  }
  StreamBitrate bitrate(Codec codec) const override { return server_.bitrate(state_, codec); }
  void publishAudio(EncodedUnitPtr opusPacket) override { server_.publishAudio(state_, opusPacket); }
  StreamAudioSent audioSent() const override { return server_.audioSent(&state_); }

 private:
  StreamServer::Impl& server_;
  StreamState& state_;  // the server's, for as long as the server
};

StreamServer::Impl::StreamState& StreamServer::Impl::streamNamed(std::string_view name) {
  std::lock_guard lock(streamsMutex_);
  auto it = streams_.find(name);
  if (it == streams_.end()) it = streams_.emplace(std::string(name), std::make_unique<StreamState>(std::string(name))).first;
  return *it->second;
}

StreamServer::Impl::StreamState* StreamServer::Impl::addedStream(std::string_view name) const {
  std::lock_guard lock(streamsMutex_);
  const auto it = streams_.find(name);
  return it != streams_.end() && it->second->added ? it->second.get() : nullptr;
}

std::vector<StreamServer::Impl::StreamState*> StreamServer::Impl::streamList() const {
  std::lock_guard lock(streamsMutex_);
  std::vector<StreamState*> out;
  for (const auto& [name, state] : streams_) out.push_back(state.get());
  return out;
}

bool StreamServer::Impl::hasStream(const std::string& segment) const {
  return segment.empty() || addedStream(segment) != nullptr;
}

std::string StreamServer::Impl::streamNames() const {
  std::lock_guard lock(streamsMutex_);
  std::string out;
  for (const auto& [name, state] : streams_) {
    if (state->added) out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::shared_ptr<WhepStream> StreamServer::addStream(const std::string& name) {
  if (!validStreamName(name)) {
    throw Error(Errc::kInvalidArgument,
                "stream name \"" + name + "\": use letters, digits, '_' and '-' only");
  }
  Impl::StreamState& state = impl_->streamNamed(name);  // made already when it is StreamConfig::defaultStream
  {
    std::lock_guard lock(impl_->streamsMutex_);
    if (std::exchange(state.added, true)) {
      throw Error(Errc::kInvalidArgument, "stream \"" + name + "\" exists already on this server");
    }
  }
  return std::make_shared<Impl::NamedStream>(*impl_, state);
}

std::shared_ptr<WhepStream> StreamServer::unnamedStream() {
  return std::make_shared<Impl::NamedStream>(*impl_, impl_->unnamed());
}

}  // namespace zerohop
