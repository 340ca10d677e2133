#include "zerohop/camera_server.hpp"

#include <algorithm>

#include "audio/audio_track.hpp"
#include "camera_loads.hpp"
#include "camera_runner.hpp"
#include "gpupath/gpu_placement.hpp"
#include "metrics_text.hpp"
#include "rtsp/rtsp_audio_source.hpp"
#include "stats_json.hpp"
#include "viewer_loss.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {

using pipeline_detail::CameraRunner;

std::vector<CameraLoadInput> cameraLoads(const std::vector<CameraConfig>& cameras) {
  std::vector<CameraLoadInput> out;
  out.reserve(cameras.size());
  for (const CameraConfig& c : cameras) {
    CameraLoadInput in;
    in.name = c.name;
    in.gpu = c.gpu;
    in.format = c.source.format;
    if (in.format == PixelFormat::kUnknown && c.source.kind == "test") in.format = PixelFormat::kYUYV;
    in.width = c.source.width;
    in.height = c.source.height;
    in.fps = c.source.fps;
    out.push_back(std::move(in));
  }
  return out;
}

class CameraServer::Impl {
 public:
  explicit Impl(CameraServerConfig config) : config_(std::move(config)) {
    checkCameras(config_.cameras);
    // The port first: a busy port fails before any camera is opened.
    config_.stream.defaultStream = config_.cameras.front().name;
    // Which GPU each camera runs on, decided once: a device number that does not exist fails here,
    // naming the camera, before the port is bound or any camera opened.
    // (No CUDA probe at all when every camera is off the GPU.)
    const bool anyGpu = std::any_of(config_.cameras.begin(), config_.cameras.end(),
                                    [](const CameraConfig& c) { return c.gpu != "off"; });
    placement_ = placeCameras(cameraLoads(config_.cameras), anyGpu ? usableGpuCount() : 0);
    server_ = std::make_unique<StreamServer>(config_.stream);
    audio_.resize(config_.cameras.size());
    audioStreams_.resize(config_.cameras.size());
    for (std::size_t i = 0; i < config_.cameras.size(); ++i) {
      const CameraConfig& cam = config_.cameras[i];
      PipelineConfig p;
      p.source = cam.source;
      p.encoder = cam.encoder;
      p.gpu = cam.gpu;
      if (placement_[i].automatic) p.autoGpuDevice = placement_[i].device;
      p.shareName = cam.shareName;
      p.renditions = cam.renditions;
      p.whipUrl = cam.whipUrl;
      p.whipToken = cam.whipToken;
      p.whipSimulcast = cam.whipSimulcast;
      // The WHIP session's ICE servers are the viewers' (p.stream is otherwise unused with p.viewers).
      p.stream.iceServers = config_.stream.iceServers;
      p.stream.turnSecret = config_.stream.turnSecret;
      p.stream.turnCredentialSeconds = config_.stream.turnCredentialSeconds;
      p.janus = cam.janus;
      p.recordPath = cam.recordPath;
      p.recordSegmentSeconds = cam.recordSegmentSeconds;
      p.viewers = server_->addStream(cam.name);
      if (!cam.audio.empty()) {
        // One Opus encode of the camera's sound for all its viewers; opened now, so a bad spec or a
        // missing device fails serve's start with the device's own message.
        // "rtsp": the IP camera's own sound, over the camera's one RTSP connection, which its picture
        // opens (rtsp_connection.hpp): opened here, before the camera's pipeline, so the picture's first
        // session carries it.
        // Its packets go through the camera's runner (started before the sound, stopped after it): to the
        // pipeline's sinks that take sound: the viewers, the camera's WHIP session and RTP target.
        // Blocks of 10 ms, or of one packet where packets are shorter (5 ms: each waits for no more than
        // itself).
        const std::uint32_t blockFrames = std::min<std::uint32_t>(cam.audioFrameMs, 10) * 48;
        auto source = cam.audio == "rtsp" ? rtsp::openRtspAudioSource(cam.source)
                                          : audio::openAudioSource(cam.audio, blockFrames);
        audio::OpusSettings opus;
        opus.frameMs = cam.audioFrameMs;
        audio_[i] = std::make_unique<audio::AudioTrack>(
            std::move(source), opus, [this, i](EncodedUnitPtr unit) { runners_[i]->publishAudio(unit); });
        // In-band FEC for the loss the camera's viewers report (the worst of them), none while they lose nothing.
        audio_[i]->setLossProbe([stream = p.viewers] { return worstViewerLossPercent(stream->viewerStats()); });
        audioStreams_[i] = p.viewers;
        p.stream.sound = true;  // the WHIP session offers an audio section (makeWhipSink)
      }
      p.batchJpeg = config_.batchJpegCameras > 0 && config_.cameras.size() >= config_.batchJpegCameras;
      runners_.push_back(std::make_unique<CameraRunner>(cam.name, std::move(p), config_.failFast));
    }
    server_->setStatsProvider([this] { return statsJson(); });
    server_->setMetricsProvider([this] { return metricsText(); });
  }

  ~Impl() { stop(); }

  void start() {
    for (std::size_t i = 0; i < config_.cameras.size(); ++i) {
      const CameraConfig& cam = config_.cameras[i];
      const CameraPlacement& where = placement_[i];
      log::info("camera ", cam.name, ": ", toString(cam.source), " at ", server_->url(), "whep/", cam.name,
                cam.shareName.empty() ? "" : ", shared as '" + cam.shareName + "'",
                where.device >= 0 ? "; GPU " + std::to_string(where.device) + " (" + where.reason + ")" : "");
    }
    for (auto& r : runners_) r->start();
    for (std::size_t i = 0; i < audio_.size(); ++i) {
      if (!audio_[i]) continue;
      const std::string frame = "48 kHz, " + std::to_string(config_.cameras[i].audioFrameMs) + " ms packets";
      log::info("camera ", config_.cameras[i].name, ": sound from ", config_.cameras[i].audio,
                config_.cameras[i].audio == "rtsp"
                    ? " (Opus: the camera's own as it comes, any other codec encoded at " + frame + ")"
                    : " (Opus, " + frame + ")",
                " to viewers whose offer has audio");
      audio_[i]->start();
    }
  }

  // The cameras first (their pipelines feed the server's streams), then the server (its HTTP threads
  // call the providers, which read the runners), then the runners' memory.
  void stop() noexcept {
    for (auto& a : audio_)
      if (a) a->stop();
    for (auto& r : runners_) r->stop();
    server_.reset();
  }

  std::vector<CameraStatus> cameras() const {
    std::vector<CameraStatus> out;
    out.reserve(runners_.size());
    for (const auto& r : runners_) out.push_back(r->status());
    return out;
  }

  std::string statsJson() const {
    const auto cams = cameras();
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t i = 0; i < cams.size(); ++i) {
      const CameraStatus& c = cams[i];
      nlohmann::json entry =
          c.hasPipeline ? statsDocument(c.pipeline, context(c.pipeline)) : nlohmann::json::object();
      entry["name"] = c.name;
      entry["state"] = c.state;
      entry["error"] = c.error ? c.error->what() : "";
      entry["error_code"] = c.error ? errcName(c.error->code()) : "";
      entry["restarts"] = c.restarts;
      entry["whep"] = "/whep/" + c.name;
      entry["share"] = config_.cameras[i].shareName;
      if (!c.hasPipeline) entry["source"] = toString(config_.cameras[i].source);
      if (audio_[i]) entry["audio"] = audioJson(*audio_[i], *audioStreams_[i]);
      list.push_back(std::move(entry));
    }
    // The first camera's figures stay at the top level, where a single-camera reader looks for them.
    nlohmann::json doc = list.front();
    doc["cameras"] = std::move(list);
    return doc.dump();
  }

  std::string metricsText() const {
    std::vector<CameraMetrics> parts;
    const auto cams = cameras();
    for (std::size_t i = 0; i < cams.size(); ++i) {
      const CameraStatus& c = cams[i];
      CameraMetrics m;
      m.camera = c.name;
      m.restarts = c.restarts;
      if (c.hasPipeline) {
        m.status = c.pipeline;
        m.context = context(c.pipeline);
      }
      if (audio_[i]) m.audio = audioMetrics(*audio_[i], *audioStreams_[i]);
      parts.push_back(std::move(m));
    }
    return renderMetricsText(parts);
  }

  std::string url() const { return server_ ? server_->url() : std::string{}; }

  std::optional<Error> failure() const {
    for (const auto& r : runners_) {
      if (auto f = r->failure())
        return runners_.size() == 1 ? *f : Error(f->code(), "camera " + r->name() + ": " + f->what());
    }
    return std::nullopt;
  }

 private:
  static nlohmann::json audioJson(const audio::AudioTrack& track, const WhepStream& viewers) {
    const audio::AudioTrackStats s = track.stats();
    const StreamAudioSent sent = viewers.audioSent();
    return nlohmann::json{{"source", s.source},
                          {"running", s.running},
                          {"codec", "opus"},
                          {"blocks", s.capture.blocks},
                          {"overruns", s.capture.overruns},
                          {"errors", s.capture.errors},
                          {"reopens", s.capture.reopens},
                          {"queue_drops", s.queueDrops},
                          {"failures", s.failures},
                          {"error", s.lastError},
                          {"packets", s.packets},
                          {"passed", s.passed},
                          {"encode_ms", s.encodeMsPerFrame},
                          {"fec_loss_percent", s.expectedLossPercent},
                          {"units_sent", sent.units},
                          {"units_dropped", sent.dropped},
                          // The capture clock on the wall clock: a page times the test tone's clicks and
                          // the test camera's markers (full seconds of the capture clock) with it.
                          {"wall_minus_capture_ms", static_cast<double>(realtimeNs() - monotonicNs()) / 1e6}};
  }

  static AudioMetrics audioMetrics(const audio::AudioTrack& track, const WhepStream& viewers) {
    const audio::AudioTrackStats s = track.stats();
    const StreamAudioSent sent = viewers.audioSent();
    AudioMetrics a;
    a.running = s.running;
    a.blocks = s.capture.blocks;
    a.overruns = s.capture.overruns;
    a.errors = s.capture.errors;
    a.reopens = s.capture.reopens;
    a.queueDrops = s.queueDrops;
    a.failures = s.failures;
    a.packets = s.packets;
    a.encodeMsPerPacket = s.encodeMsPerFrame;
    a.sent = sent.units;
    a.sendDropped = sent.dropped;
    return a;
  }

  static StatsContext context(const PipelineStatus& s) {
    return StatsContext{s.sourceDescription, s.encoderName, s.dataPath};
  }

  CameraServerConfig config_;
  std::vector<CameraPlacement> placement_;  // one per camera, in config order
  std::unique_ptr<StreamServer> server_;
  std::vector<std::unique_ptr<CameraRunner>> runners_;  // fixed after construction
  std::vector<std::unique_ptr<audio::AudioTrack>> audio_;  // one per camera, null without sound; fixed after construction
  std::vector<std::shared_ptr<WhepStream>> audioStreams_;  // where each track's packets go
};

CameraServer::CameraServer(CameraServerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
CameraServer::~CameraServer() = default;
void CameraServer::start() {
  impl_->start();
}
void CameraServer::stop() noexcept {
  impl_->stop();
}
std::vector<CameraStatus> CameraServer::cameras() const {
  return impl_->cameras();
}
std::string CameraServer::statsJson() const {
  return impl_->statsJson();
}
std::string CameraServer::metricsText() const {
  return impl_->metricsText();
}
std::string CameraServer::url() const {
  return impl_->url();
}
std::optional<Error> CameraServer::failure() const {
  return impl_->failure();
}

}  // namespace zerohop
