#pragma once
// Renders pipeline status in the Prometheus text exposition format (0.0.4), `zerohop_` prefix.
// Thread-safety: pure function, reentrant.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stats_json.hpp"

namespace zerohop {

/// A camera's sound (serve --audio; audio::AudioTrackStats and what its viewers were sent), for /metrics.
struct AudioMetrics {
  bool running = false;
  std::uint64_t blocks = 0;      ///< 10 ms blocks captured
  std::uint64_t overruns = 0;    ///< capture overruns (samples lost)
  std::uint64_t errors = 0;      ///< other recovered capture faults
  std::uint64_t reopens = 0;     ///< times the device came back
  std::uint64_t queueDrops = 0;  ///< blocks dropped before the encode (it fell behind)
  std::uint64_t failures = 0;    ///< faults it could not recover from
  std::uint64_t packets = 0;     ///< Opus packets encoded
  double encodeMsPerPacket = 0;  ///< mean encode time of one packet, recent
  std::uint64_t sent = 0;        ///< packets handed to viewers (each viewer counts)
  std::uint64_t sendDropped = 0; ///< packets a viewer's queue dropped
};

/// One camera's part of /metrics: its name (the `camera` label on every series; "" = no label, a
/// lone pipeline), its status (absent while it is being opened or retried) and its sound (absent
/// without one).
struct CameraMetrics {
  std::string camera;
  std::optional<PipelineStatus> status;
  StatsContext context;
  std::uint64_t restarts = 0;
  std::optional<AudioMetrics> audio;
};

std::string renderMetricsText(const PipelineStatus& status, const StatsContext& context);
/// Every camera's series, each family's lines together under one HELP/TYPE; with named cameras
/// also zerohop_camera_up and zerohop_camera_restarts_total; with sound the zerohop_audio_ families.
std::string renderMetricsText(const std::vector<CameraMetrics>& cameras);

}  // namespace zerohop
