#include "camera_runner.hpp"

#include <algorithm>

#include "core/setting_log.hpp"
#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::pipeline_detail {

using namespace std::chrono_literals;

namespace {

// The camera's recording, made once for every pipeline the runner opens; `config` keeps no path, so
// no pipeline makes a recording of its own (which would start the file over at each reopen).
std::shared_ptr<RecordSink> takeRecording(PipelineConfig& config) {
  if (config.recordPath.empty()) return nullptr;
  auto sink = std::make_shared<RecordSink>(
      record::RecorderOptions{config.recordPath, config.recordSegmentSeconds, 0, config.stream.sound});
  config.recordPath.clear();
  return sink;
}

}  // namespace

CameraRunner::CameraRunner(std::string name, PipelineConfig config, bool failFast)
    : name_(std::move(name)),
      recording_(takeRecording(config)),
      config_(std::move(config)),
      failFast_(failFast) {
  if (failFast_) {
    pipeline_ = std::make_unique<Pipeline>(config_);
    if (recording_) pipeline_->addUnitSink(recording_);
    state_ = "running";
  }
}

CameraRunner::~CameraRunner() {
  stop();
}

void CameraRunner::start() {
  if (failFast_) {
    pipeline_->start();
    return;
  }
  thread_ = std::thread([this] { run(); });
}

void CameraRunner::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  close();
}

void CameraRunner::publishAudio(const EncodedUnitPtr& opusPacket) {
  std::lock_guard lock(mutex_);  // close() takes the pipeline out under it
  if (pipeline_)
    pipeline_->publishAudio(opusPacket);
  else if (config_.viewers)
    config_.viewers->publishAudio(opusPacket);
}

bool CameraRunner::waitFor(std::chrono::milliseconds d) {
  std::unique_lock lock(mutex_);
  return !wake_.wait_for(lock, d, [this] { return stopping_; });
}

bool CameraRunner::open() {
  try {
    auto pipeline = std::make_unique<Pipeline>(config_);
    if (recording_) pipeline->addUnitSink(recording_);
    pipeline->start();
    std::lock_guard lock(mutex_);
    pipeline_ = std::move(pipeline);
    state_ = "running";
    error_.reset();
    errorSetting_.clear();
    return true;
  } catch (const Error& e) {
    const auto* about = dynamic_cast<const SettingError*>(&e);
    std::lock_guard lock(mutex_);
    state_ = "retrying";
    error_ = e;  // the code and the message
    errorSetting_ = about ? about->setting() : std::string{};
    return false;
  }
}

void CameraRunner::close() {
  std::unique_ptr<Pipeline> pipeline;
  {
    std::lock_guard lock(mutex_);
    pipeline.swap(pipeline_);
  }
  if (pipeline) pipeline->stop();  // the destructor, outside the lock, frees the source and the shares
}

// Open; watch (4 times a second) for the pipeline failing; on failure close, wait, open again.
void CameraRunner::run() {
  auto delay = kFirstRetry;
  for (;;) {
    if (!open()) {
      std::string why, about;
      {
        std::lock_guard lock(mutex_);
        why = error_ ? error_->what() : "failed";
        about = errorSetting_;
      }
      if (about.empty()) {
        log::warn("camera ", name_, ": ", why, "; retrying in ", delay.count() / 1000.0, " s");
      } else {
        log::warnAbout(about, "camera ", name_, ": ", why, "; retrying in ", delay.count() / 1000.0, " s");
      }
      if (!waitFor(delay)) return;
      delay = std::min(delay * 2, kLastRetry);
      continue;
    }
    log::info("camera ", name_, ": running");
    delay = kFirstRetry;
    std::optional<Error> failure;
    while (!failure) {
      if (!waitFor(250ms)) return;
      std::lock_guard lock(mutex_);
      failure = pipeline_->failure();
    }
    log::warn("camera ", name_, ": ", failure->what(), "; opening it again in ", delay.count() / 1000.0, " s");
    close();
    {
      std::lock_guard lock(mutex_);
      state_ = "retrying";
      error_ = std::move(failure);
      errorSetting_.clear();
      ++restarts_;
    }
    if (!waitFor(delay)) return;
    delay = std::min(delay * 2, kLastRetry);
  }
}

CameraStatus CameraRunner::status() const {
  std::lock_guard lock(mutex_);
  CameraStatus s;
  s.name = name_;
  s.state = state_;
  // A copy with its own message: copies of a std::runtime_error share one reference-counted string,
  // which libstdc++ frees without TSan seeing the order (the HTTP thread reads it while this runner's
  // next failure replaces error_: reported as a race, halting serve under TSan).
  if (error_) s.error = Error(error_->code(), std::string(error_->what()));
  s.restarts = restarts_;
  if (pipeline_) {
    s.hasPipeline = true;
    s.pipeline = pipeline_->status();
    if (recording_) s.pipeline.recording = recording_->stats();
  }
  return s;
}

std::optional<Error> CameraRunner::failure() const {
  if (!failFast_) return std::nullopt;
  std::lock_guard lock(mutex_);
  return pipeline_ ? pipeline_->failure() : std::nullopt;
}

}  // namespace zerohop::pipeline_detail
