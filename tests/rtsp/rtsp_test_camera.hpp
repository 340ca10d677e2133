#pragma once
// The test IP camera (rtsp_camera.py: GStreamer's RTSP server) as a child process of a test.
// Thread-safety: thread-bound test helper.

#include <signal.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "beside_program.hpp"
#include "child_process.hpp"

namespace zerohop::rtsp {

// The test camera, started on port 0 (the kernel's choice) or a given one (a restart). `script` picks the
// server: rtsp_camera.py (GStreamer's RTSP server) or rtsp_clip_server.py (FFmpeg's RTP, RTSP of its own);
// both take --port and print the same lines.
class TestCamera {
 public:
  explicit TestCamera(std::vector<std::string> args = {}, std::uint16_t port = 0,
                      std::string script = zerohop::testing::besideProgram(ZEROHOP_RTSP_CAMERA_SCRIPT)) {
    std::vector<std::string> argv{"/usr/bin/python3", std::move(script), "--port", std::to_string(port)};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<testing::ChildProcess>(argv);
    const auto line = process_->waitForStdoutLine("PORT ", std::chrono::seconds(20));
    if (!line) throw std::runtime_error("the test RTSP camera did not start: " + process_->stderrText());
    port_ = static_cast<std::uint16_t>(std::stoi(line->substr(5)));
  }
  std::uint16_t port() const { return port_; }
  std::string url(const std::string& userinfo = "") const {
    return "rtsp://" + (userinfo.empty() ? "" : userinfo + "@") + "127.0.0.1:" + std::to_string(port_) +
           "/test";
  }
  /// The RTSP connections it has taken so far, after reading its output for `window`.
  int connections(std::chrono::milliseconds window = std::chrono::milliseconds(0)) { return count("CONNECT", window); }
  /// The PLAY requests it has answered so far, after reading its output for `window`.
  int plays(std::chrono::milliseconds window = std::chrono::milliseconds(0)) { return count("\nPLAY", window); }
  void kill() {
    process_->signal(SIGKILL);
    process_->waitExit(std::chrono::seconds(10));
  }

 private:
  int count(const char* line, std::chrono::milliseconds window) {
    process_->waitForStdoutLine("\x01 never printed", window);
    int n = 0;
    const std::string& out = process_->stdoutText();
    for (std::size_t at = 0; (at = out.find(line, at)) != std::string::npos; ++at) ++n;
    return n;
  }

  std::unique_ptr<testing::ChildProcess> process_;
  std::uint16_t port_ = 0;
};

}  // namespace zerohop::rtsp
