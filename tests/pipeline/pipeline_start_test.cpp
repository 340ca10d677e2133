// Pipeline::start() against the HTTP thread: /stats (status()) may be asked while start() runs; a
// pipeline without the viewers' stream it feeds.
// start() used to write startNs_ (the uptime's origin) unsynchronised with that read; the TSan
// build (cmake --preset tsan) reports such a race, this test gives it the interleaving.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "zerohop/error.hpp"
#include "zerohop/pipeline.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

TEST(PipelineStart, StatusWhileStartingIsRaceFreeAndCountsUptime) {
  PipelineConfig c;
  c.source = parseSourceSpec("test:320x240@30");
  c.stream.port = 0;  // the kernel's choice
  c.gpu = "off";
  StreamServer server(c.stream);  // the viewers' server: the pipeline binds no port
  c.viewers = server.unnamedStream();
  Pipeline pipeline(c);
  std::atomic<bool> done{false};
  std::atomic<int> asked{0};
  std::thread http([&] {  // what the HTTP thread does for GET /stats
    while (!done.load()) {
      (void)pipeline.status();
      asked.fetch_add(1);
    }
  });
  while (asked.load() == 0) std::this_thread::yield();  // status() runs before and during start()
  pipeline.start();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  double uptime = 0;
  while ((uptime = pipeline.status().uptimeSeconds) <= 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);  // polling the condition, bounded
  done = true;
  http.join();
  pipeline.stop();
  EXPECT_GT(uptime, 0) << "uptime never started counting";
  EXPECT_GT(asked.load(), 0);
}

// The pipeline binds no port: without the viewers' stream it refuses, naming what to pass.
TEST(PipelineStart, WithoutAViewersStreamItRefusesAndSaysWhatToPass) {
  PipelineConfig c;
  c.source = parseSourceSpec("test:320x240@30");
  c.gpu = "off";
  try {
    Pipeline pipeline(c);
    FAIL() << "a pipeline without PipelineConfig::viewers was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("unnamedStream()"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zerohop
