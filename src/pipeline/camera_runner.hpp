#pragma once
// One camera of a CameraServer: its Pipeline and the thread that opens it, watches it and, when it
// fails, opens it again after a back-off (1 s doubling to 30 s), without touching the other cameras.
// Thread-safety: thread-safe; start()/stop() from the controlling thread, status() from any.
// Owns its Pipeline and its thread, and the camera's recording (a RecordSink each pipeline it opens is
// given, so a camera opened again goes on in the same file instead of starting it over); borrows
// nothing (the WhepStream it feeds is shared with the server).

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "record_sink.hpp"
#include "zerohop/camera_server.hpp"
#include "zerohop/pipeline.hpp"

namespace zerohop::pipeline_detail {

class CameraRunner {
 public:
  static constexpr std::chrono::milliseconds kFirstRetry{1000};
  static constexpr std::chrono::milliseconds kLastRetry{30000};

  /// `config.viewers` is the camera's stream. failFast: opens the pipeline now (throws Error like
  /// Pipeline's constructor) and never reopens it: a failure stays in failure().
  CameraRunner(std::string name, PipelineConfig config, bool failFast);
  ~CameraRunner();  ///< stop()
  CameraRunner(const CameraRunner&) = delete;
  CameraRunner& operator=(const CameraRunner&) = delete;

  void start();
  void stop() noexcept;
  /// One Opus packet of the camera's sound: to its pipeline's sinks that take sound (the viewers, WHIP:
  /// Pipeline::publishAudio) while it runs, else to its viewers alone (config.viewers), so they keep
  /// hearing the camera while its picture reopens. Non-blocking.
  void publishAudio(const EncodedUnitPtr& opusPacket);

  const std::string& name() const { return name_; }
  CameraStatus status() const;
  std::optional<Error> failure() const;  ///< failFast: the pipeline's failure; else nullopt

 private:
  void run();
  /// Waits up to `d` or until stop(); false when stopping.
  bool waitFor(std::chrono::milliseconds d);
  /// Opens and starts a pipeline; on failure records it and returns false.
  bool open();
  /// Takes the pipeline out (under mutex_) and stops and destroys it outside the lock.
  void close();

  const std::string name_;
  const std::shared_ptr<RecordSink> recording_;  // null without PipelineConfig::recordPath
  const PipelineConfig config_;                  // its recordPath cleared: recording_ is the recording
  const bool failFast_;
  mutable std::mutex mutex_;  // guards pipeline_, state_, error_, errorSetting_, restarts_, stopping_
  std::condition_variable wake_;
  std::unique_ptr<Pipeline> pipeline_;
  std::string state_ = "opening";
  std::optional<Error> error_;
  std::string errorSetting_;  // the setting error_ names when it was a SettingError (the log line carries it)
  std::uint64_t restarts_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zerohop::pipeline_detail
