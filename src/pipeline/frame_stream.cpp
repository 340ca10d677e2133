// FrameStream (zerohop/frame_stream.hpp): a FrameInput read in this process by a Pipeline whose
// source is that input (PipelineConfig::openSource); with sound, a PcmInput read by an AudioTrack whose
// Opus packets go to the pipeline's viewers (Pipeline::publishAudio).
#include "zerohop/frame_stream.hpp"

#include "audio/audio_track.hpp"
#include "audio/pcm_input.hpp"
#include "viewer_loss.hpp"
#include "zerohop/camera_server.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

FrameInputConfig inputConfig(const FrameStreamConfig& c) {
  FrameInputConfig i;
  i.format = c.format;
  i.width = c.width;
  i.height = c.height;
  i.fps = c.fps;
  i.memory = c.memory;
  i.cudaDevice = c.cudaDevice;
  i.slots = c.slots;
  i.name = "your frames (FrameStream)";
  return i;
}

StreamConfig streamConfig(const FrameStreamConfig& c) {
  StreamConfig s = c.stream;
  s.sound = s.sound || c.audioChannels > 0;  // viewers get the audio track before the first block
  return s;
}

PipelineConfig pipelineConfig(const FrameStreamConfig& c, FrameInput& input, StreamServer& server) {
  PipelineConfig p;
  p.openSource = [&input](const SourceOptions& options) { return input.openSource(options); };
  p.encoder = c.encoder;
  p.stream = streamConfig(c);
  p.viewers = server.unnamedStream();
  p.gpu = c.memory == MemoryKind::kDevice && c.gpu == "auto" ? std::to_string(c.cudaDevice) : c.gpu;
  p.shareName = c.shareName;
  p.whipUrl = c.whipUrl;
  p.whipToken = c.whipToken;
  p.whipSimulcast = c.whipSimulcast;
  p.janus = c.janus;
  return p;
}

}  // namespace

struct FrameStream::Impl {
  // The port is bound first: a busy port fails before anything else is opened.
  explicit Impl(const FrameStreamConfig& c)
      : server(std::make_unique<StreamServer>(streamConfig(c))),
        input(inputConfig(c)),
        pipeline(pipelineConfig(c, input, *server)) {
    for (const auto& sink : c.sinks) pipeline.addUnitSink(sink);
    if (c.audioChannels > 0) {
      auto pcm = std::make_unique<audio::PcmInput>(c.audioChannels, "your sound (FrameStream)");
      sound = pcm.get();
      audio::OpusSettings opus;
      opus.frameMs = CameraConfig{}.audioFrameMs;  // as a camera's sound by default
      audio = std::make_unique<audio::AudioTrack>(
          std::move(pcm), opus, [this](EncodedUnitPtr unit) { pipeline.publishAudio(std::move(unit)); });
      // In-band FEC for the loss the stream's viewers report (AudioTrack stops before the pipeline goes).
      audio->setLossProbe([this] { return worstViewerLossPercent(pipeline.status().viewerStats); });
    }
    pipeline.start();
    if (audio) audio->start();
    // Last: should anything above throw, the members go without ~Impl(), the pipeline before the
    // server, so the server's HTTP threads must not be reading it yet.
    server->setStatsProvider([this] { return pipeline.statsJson(); });
    server->setMetricsProvider([this] { return pipeline.metricsText(); });
  }
  // The sound stops feeding the pipeline, the pipeline its viewers; the server joins its HTTP threads
  // (which may be in pipeline.statsJson(), safe on a stopped pipeline) before the pipeline is destroyed.
  ~Impl() {
    audio.reset();
    pipeline.stop();
    server.reset();
  }
  std::unique_ptr<StreamServer> server;  // the viewers' stream is its unnamed stream
  FrameInput input;
  Pipeline pipeline;  // reads `input`: declared after it, so it stops first
  audio::PcmInput* sound = nullptr;       // owned by `audio`
  std::unique_ptr<audio::AudioTrack> audio;  // feeds `pipeline`: declared after it, so it stops first
};

FrameStream::FrameStream(FrameStreamConfig config) : impl_(std::make_unique<Impl>(config)) {}
FrameStream::~FrameStream() = default;
FrameInput& FrameStream::input() { return impl_->input; }
void FrameStream::pushAudio(const std::int16_t* samples, std::size_t frames, std::int64_t captureNs) {
  if (!impl_->sound)
    throw Error(Errc::kInvalidArgument,
                "pushAudio: this stream has no sound: set FrameStreamConfig::audioChannels to 1 or 2 when creating it");
  impl_->sound->push(samples, frames, captureNs);
}
std::string FrameStream::url() const {
  return impl_->server ? impl_->server->url() : std::string{};
}
PipelineStatus FrameStream::status() const { return impl_->pipeline.status(); }
std::string FrameStream::statsJson() const { return impl_->pipeline.statsJson(); }
std::optional<Error> FrameStream::failure() const { return impl_->pipeline.failure(); }

}  // namespace zerohop
