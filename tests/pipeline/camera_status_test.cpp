// CameraStatus::error and CameraServer's /stats carry a camera's failure with its code, not only
// its words (issue 36 item 4): a camera that cannot open is "retrying" with the Error that said why.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "zerohop/camera_server.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

TEST(CameraStatus, ACameraThatCannotOpenIsRetryingWithTheErrorsCode) {
  CameraServerConfig config;
  CameraConfig camera;
  camera.name = "gone";
  // A V4L2 device that does not exist (named per process: nothing else opens it).
  camera.source = parseSourceSpec("v4l2:/dev/zerohop-camera-status-test-" + std::to_string(::getpid()));
  camera.gpu = "off";
  config.cameras.push_back(camera);
  config.stream.port = 0;
  CameraServer server(config);  // without failFast: the camera opens (and fails) on its own thread
  server.start();

  // Bounded wait on the condition: the first open fails at once; 20 s covers a sanitizer on a busy box.
  CameraStatus status;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (;;) {
    status = server.cameras().at(0);
    if (status.state == "retrying" || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(status.state, "retrying");
  ASSERT_TRUE(status.error.has_value());
  EXPECT_EQ(status.error->code(), Errc::kNotFound) << status.error->what();
  EXPECT_NE(std::string(status.error->what()).find("zerohop-camera-status-test"), std::string::npos)
      << status.error->what();
  EXPECT_FALSE(server.failure()) << "without failFast a camera's failure is its status, not the server's";

  const auto stats = nlohmann::json::parse(server.statsJson());
  const auto& entry = stats.at("cameras").at(0);
  EXPECT_EQ(entry.at("error_code"), errcName(Errc::kNotFound)) << entry.dump();
  EXPECT_EQ(entry.at("error"), status.error->what()) << entry.dump();
  server.stop();
}

TEST(CameraStatus, FailFastThrowsTheOpeningErrorWithItsCode) {
  CameraServerConfig config;
  CameraConfig camera;
  camera.name = "gone";
  camera.source = parseSourceSpec("v4l2:/dev/zerohop-camera-status-test-ff-" + std::to_string(::getpid()));
  camera.gpu = "off";
  config.cameras.push_back(camera);
  config.stream.port = 0;
  config.failFast = true;
  try {
    CameraServer server(config);
    FAIL() << "a camera that does not exist opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNotFound) << e.what();
  }
}

}  // namespace
}  // namespace zerohop
