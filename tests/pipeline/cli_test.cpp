// Black-box tests of the zerohop CLI: the exit codes and one-line errors a user sees, and serve's
// start-up, /stats and clean shutdown.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "beside_program.hpp"
#include "child_process.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::run;
using testing::freePort;

const std::string kCli = zerohop::testing::besideProgram(ZEROHOP_CLI_PATH);

// Signals a running serve and checks that it exits 0 within `bound`, by serve's own "stopped in N ms"
// (signal -> every pipeline joined) and, without sanitizers, by the wall clock to the exit (under ASan
// the exit adds LeakSanitizer's heap scan: 0.3 s on an idle box, seconds under load).
// It first waits for "WebRTC ready": a stop during the start-up warm-up waits for its DTLS key
// (WebrtcWarmup; about 2 s under ASan on a loaded box), which is not a running serve's stop.
void expectStopsCleanly(ChildProcess& serve, int signal, std::chrono::milliseconds bound) {
  ASSERT_TRUE(serve.waitForStderrLine("WebRTC ready", 20s)) << serve.stderrText();
  const auto t0 = std::chrono::steady_clock::now();
  serve.signal(signal);
  const auto code = serve.waitExit(10s);
  ASSERT_TRUE(code) << "serve did not exit within 10 s of signal " << signal;
  const auto took = std::chrono::steady_clock::now() - t0;
  const std::string err = serve.stderrText();
  EXPECT_EQ(*code, 0) << err;
  const auto at = err.find("stopped in ");
  ASSERT_NE(at, std::string::npos) << err;
#ifdef ZEROHOP_SANITIZED
  // Instrumented code runs 2-15x slower (TSan at the top), on 2 cores shared with the other tests: the
  // stop's own time gets three times the bound there (1.5 s was exceeded under TSan on a busy box).
  const auto stopBound = bound * 3;
#else
  const auto stopBound = bound;
#endif
  EXPECT_LT(std::stoi(err.substr(at + 11)), stopBound.count()) << err.substr(at);
#ifndef ZEROHOP_SANITIZED
  EXPECT_LT(took, bound);
#else
  (void)took;
#endif
}

TEST(Cli, VersionAndHelp) {
  auto v = run({kCli, "--version"});
  EXPECT_EQ(v.exitCode, 0);
  EXPECT_NE(v.out.find("zerohop 0."), std::string::npos) << v.out;
  auto h = run({kCli, "serve", "--help"});
  EXPECT_EQ(h.exitCode, 0);
  EXPECT_NE(h.out.find("--source"), std::string::npos);
  EXPECT_NE(h.out.find("--listen"), std::string::npos);
}

TEST(Cli, UnknownOptionIsAUsageError) {
  auto r = run({kCli, "serve", "--no-such-option"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE((r.out + r.err).find("--no-such-option"), std::string::npos) << r.err;
}

TEST(Cli, BadSourceSaysHowToFixIt) {
  auto r = run({kCli, "serve", "--source", "test:12x7", "--listen", "127.0.0.1:" + std::to_string(freePort())});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("bad source spec"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(option --source)"), std::string::npos) << "the CLI names its flag: " << r.err;
  EXPECT_NE(r.err.find("test:1280x720@30"), std::string::npos) << r.err;
}

TEST(Cli, BadListenSaysHowToFixIt) {
  auto r = run({kCli, "serve", "--listen", "localhost"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("HOST:PORT"), std::string::npos) << r.err;
}

TEST(Cli, BadPlayoutDelaySaysWhatIsAccepted) {
  auto r = run({kCli, "serve", "--playout-delay", "5,10", "--listen", "127.0.0.1:" + std::to_string(freePort())});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("multiples of 10"), std::string::npos) << r.err;
  auto one = run({kCli, "serve", "--playout-delay", "100", "--listen", "127.0.0.1:" + std::to_string(freePort())});
  EXPECT_EQ(one.exitCode, 2);
  EXPECT_NE((one.out + one.err).find("--playout-delay"), std::string::npos) << one.err;
  EXPECT_NE((one.out + one.err).find("auto, off, or MIN,MAX"), std::string::npos) << one.err;
}

TEST(Cli, BadCongestionControlOptionsAreRefusedByName) {
  const std::string listen = "127.0.0.1:" + std::to_string(freePort());
  auto mode = run({kCli, "serve", "--congestion-control", "maybe", "--listen", listen});
  EXPECT_EQ(mode.exitCode, 2);
  EXPECT_NE((mode.out + mode.err).find("--congestion-control"), std::string::npos) << mode.err;
  auto low = run({kCli, "serve", "--min-bitrate", "10", "--listen", listen});
  EXPECT_EQ(low.exitCode, 2);
  EXPECT_NE((low.out + low.err).find("--min-bitrate"), std::string::npos) << low.err;
  auto help = run({kCli, "serve", "--help"});
  EXPECT_NE(help.out.find("--congestion-control"), std::string::npos);
  EXPECT_NE(help.out.find("weakest viewer"), std::string::npos);
}

TEST(Cli, PortInUseIsReportedWithTheFix) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  auto r = run({kCli, "serve", "--listen", "127.0.0.1:" + std::to_string(ntohs(a.sin_port))});
  close(fd);
  EXPECT_EQ(r.exitCode, 3) << r.err;
  EXPECT_NE(r.err.find("in use"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--listen"), std::string::npos) << "the CLI names its flag for the setting: " << r.err;
  // The error is one line, and the last one (start-up info such as the encoder choice may precede it).
  const auto lastLine = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
  EXPECT_EQ(lastLine.rfind("zerohop: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(lastLine.begin(), lastLine.end(), '\n'), 1) << r.err;
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << "not a stack of noise:\n" << r.err;
}

// What serve cannot do here is refused at start-up, naming the cause (this runs where there is no
// GPU and no NVENC; on a machine that has them `zerohop probe` says so and the test skips).
TEST(Cli, GpuAndNvencRequestsThatCannotBeMetFailNamingTheCause) {
  const auto probe = run({kCli, "probe"});
  ASSERT_EQ(probe.exitCode, 0) << probe.err;
  if (probe.out.find("no usable CUDA device") == std::string::npos &&
      probe.out.find("this build has no CUDA") == std::string::npos) {
    GTEST_SKIP() << "a CUDA device works here: serve would start";
  }
  const std::string listen = "127.0.0.1:" + std::to_string(freePort());
  const auto t0 = std::chrono::steady_clock::now();
  auto nvenc = run({kCli, "serve", "--source", "test:640x360@30", "--encoder", "nvenc", "--listen", listen});
  EXPECT_EQ(nvenc.exitCode, 3) << nvenc.err;
  EXPECT_NE(nvenc.err.find("encoder nvenc: NVENC unavailable: "), std::string::npos) << nvenc.err;
  EXPECT_NE(nvenc.err.find("use the x264 encoder"), std::string::npos) << nvenc.err;
  EXPECT_NE(nvenc.err.find("(option --encoder)"), std::string::npos) << "the CLI names its flag: " << nvenc.err;
#ifdef ZEROHOP_SANITIZED
  const auto refusalBound = 30s;  // instrumented start-up and probe: 10.3 s measured under ASan on a busy box
#else
  const auto refusalBound = 10s;
#endif
  EXPECT_LT(std::chrono::steady_clock::now() - t0, refusalBound) << "must fail within seconds";

  auto device = run({kCli, "serve", "--source", "test:640x360@30", "--gpu", "0", "--listen", listen});
  EXPECT_EQ(device.exitCode, 3) << device.err;
  EXPECT_NE(device.err.find("gpu \"0\": "), std::string::npos) << device.err;
  EXPECT_NE(device.err.find("(option --gpu)"), std::string::npos) << "the CLI names its flag: " << device.err;

  auto bad = run({kCli, "serve", "--gpu", "fast", "--listen", listen});
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
  EXPECT_NE(bad.err.find("auto, off or a CUDA device number"), std::string::npos) << bad.err;
}

TEST(Cli, ServeReportsStatsAndStopsCleanlyOnSigint) {
  const auto port = freePort();
  ChildProcess serve({kCli, "serve", "--source", "test:640x360@30", "--listen", "127.0.0.1:" + std::to_string(port),
                      "--encoder-threads", "2"});
  auto line = serve.waitForStdoutLine("open http://", 15s);
  ASSERT_TRUE(line) << serve.stderrText();
  EXPECT_EQ(*line, "open http://127.0.0.1:" + std::to_string(port) + "/");
  EXPECT_TRUE(serve.waitForStderrLine("2 thread(s)", 10s)) << "--encoder-threads reaches x264\n" << serve.stderrText();

  httplib::Client client("127.0.0.1", port);
  nlohmann::json stats;
  for (int i = 0; i < 40; ++i) {  // until the encoder has produced frames
    std::this_thread::sleep_for(100ms);
    auto res = client.Get("/stats");
    ASSERT_TRUE(res) << "no answer from /stats";
    ASSERT_EQ(res->status, 200);
    stats = nlohmann::json::parse(res->body);
    if (stats["frames"].get<int>() > 10) break;
  }
  EXPECT_GT(stats["frames"].get<int>(), 10) << stats.dump();
  EXPECT_TRUE(stats["stages"].contains("encode")) << stats.dump();
  EXPECT_GT(stats["stages"]["encode"]["p50_ms"].get<double>(), 0.0);
  EXPECT_EQ(stats["viewers"].get<int>(), 0);
  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<html"), std::string::npos);

  expectStopsCleanly(serve, SIGINT, 1500ms);
}

// The test camera at 1080p240 sends a frame every 4.2 ms; x264 (superfast, one thread) takes 15-20 ms
// for one here, far above 4.2 ms on any current core: the encode falls behind, and serve says so with the figures
// within one 2 s window (EncodeBacklog, whose own tests pin the rule and the wording).
TEST(Cli, ServeSaysWhenTheEncodeFallsBehindTheSource) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "under a sanitizer the instrumented test camera renders 1080p slower than x264 encodes it";
#endif
  const auto port = freePort();
  ChildProcess serve({kCli, "serve", "--source", "test:1920x1080@240", "--listen", "127.0.0.1:" + std::to_string(port)});
  ASSERT_TRUE(serve.waitForStdoutLine("open http://", 15s)) << serve.stderrText();
  auto line = serve.waitForStderrLine("falling behind the source", 10s);
  ASSERT_TRUE(line) << serve.stderrText();
  EXPECT_NE(line->find("the source sends one every 4.2 ms (240 fps)"), std::string::npos) << *line;
  EXPECT_NE(line->find("give the encoder more threads"), std::string::npos) << *line;
  expectStopsCleanly(serve, SIGINT, 1500ms);
}

}  // namespace
}  // namespace zerohop

namespace zerohop {
namespace {

// The token is a secret: stdout (journald, CI logs) shows it masked, with where it came from.
TEST(Cli, WhepTokenIsRequiredAndNeverPrinted) {
  const auto port = freePort();
  ChildProcess serve({kCli, "serve", "--source", "test:640x360@30", "--listen", "127.0.0.1:" + std::to_string(port),
                      "--whep-token", "tok123"});
  auto line = serve.waitForStdoutLine("open http://", 15s);
  ASSERT_TRUE(line) << serve.stderrText();
  EXPECT_EQ(*line, "open http://127.0.0.1:" + std::to_string(port) + "/");
  auto note = serve.waitForStdoutLine("WHEP token ", 15s);
  ASSERT_TRUE(note) << serve.stderrText();
  EXPECT_EQ(*note, "WHEP token ******** (6 characters), from --whep-token: viewers open the page with ?token=TOKEN");
  EXPECT_EQ(serve.stderrText().find("tok123"), std::string::npos) << serve.stderrText();
  httplib::Client client("127.0.0.1", port);
  auto r = client.Post("/whep", "v=0\r\n", "application/sdp");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  expectStopsCleanly(serve, SIGTERM, 1500ms);
}

}  // namespace
}  // namespace zerohop

namespace zerohop {
namespace {

// A config mistake fails with exit 2 naming the file line and the key, never silently
// leaving an option (the WHEP token) unset.
TEST(Cli, ConfigMistakesFailNamingTheKeyAndLine) {
  const std::string dir = ::testing::TempDir();
  struct Case {
    const char* name;
    const char* text;
    const char* expect;
  } cases[] = {
      {"typo.toml", "[serve]\nlisten = \"127.0.0.1:1\"\nwhep_tokne = \"x\"\n", "line 3: unknown key \"whep_tokne\" in [serve]"},
      {"table.toml", "# comment\n[srve]\nwhep-token = \"x\"\n", "line 2: unknown table [srve]"},
      {"underscore.toml", "[serve]\nwhep_token = \"x\"\n", "did you mean whep-token?"},
      {"dotted.toml", "serve.whep_tokne = \"x\"\n", "line 1: unknown key \"whep_tokne\""},
      {"garbage.toml", "\x7f" "ELF\x01\x01 binary junk\n", "line 1:"},
      {"empty-token.toml", "[serve]\nwhep-token = \"\"\n", "--whep-token is empty"},
      {"playout.toml", "[serve]\nplayout-delay = \"300,200\"\n", "playout delay 300,200: MIN is above MAX; give MIN,MAX with MIN <= MAX (option --playout-delay)"},
  };
  for (const auto& c : cases) {
    const std::string path = dir + "/" + c.name;
    { std::ofstream(path) << c.text; }
    auto r = run({kCli, "--config", path, "serve", "--listen", "127.0.0.1:" + std::to_string(freePort())});
    EXPECT_EQ(r.exitCode, 2) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.name << ": " << r.err;
  }
}

// A self-signed certificate for 127.0.0.1 and its key from the openssl CLI, as a user makes one.
bool makeCert(const std::string& cert, const std::string& key) {
  const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
                          "-subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 -keyout '" + key + "' -out '" +
                          cert + "' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// HTTPS: a key that is not the certificate's, or half of the pair, stops serve at start (exit 2)
// naming the cause; the pair from a --config [serve] table serves https:// and prints that URL.
TEST(Cli, TlsKeyMustMatchItsCertificateAndHttpsComesFromTheConfig) {
  const std::string dir = ::testing::TempDir();
  const std::string certA = dir + "/a.crt", keyA = dir + "/a.key", keyB = dir + "/b.key", certB = dir + "/b.crt";
  ASSERT_TRUE(makeCert(certA, keyA) && makeCert(certB, keyB)) << "openssl req failed (scripts/install-deps.sh)";
  const std::string listen = "127.0.0.1:" + std::to_string(freePort());
  auto mismatch = run({kCli, "serve", "--listen", listen, "--tls-cert", certA, "--tls-key", keyB});
  EXPECT_EQ(mismatch.exitCode, 2) << mismatch.err;
  const auto lastLine = mismatch.err.substr(mismatch.err.rfind('\n', mismatch.err.size() - 2) + 1);
  EXPECT_EQ(lastLine.rfind("zerohop: error: the TLS key " + keyB + " does not match the TLS certificate " + certA, 0),
            0u)
      << mismatch.err;
  EXPECT_NE(lastLine.find("(option --tls-key)"), std::string::npos) << "the CLI names its flag: " << mismatch.err;
  auto half = run({kCli, "serve", "--listen", listen, "--tls-cert", certA});
  EXPECT_EQ(half.exitCode, 2) << half.err;
  EXPECT_NE(half.err.find("a TLS certificate without a TLS key"), std::string::npos) << half.err;
  EXPECT_NE(half.err.find("(option --tls-key)"), std::string::npos) << "the CLI names the flag to add: " << half.err;

  const std::string config = dir + "/https.toml";
  { std::ofstream(config) << "[serve]\nlisten = \"" << listen << "\"\ntls-cert = \"" << certA << "\"\ntls-key = \"" << keyA << "\"\n"; }
  ChildProcess serve({kCli, "--config", config, "serve", "--source", "test:320x180@15"});
  auto line = serve.waitForStdoutLine("open https://", 15s);
  ASSERT_TRUE(line) << serve.stderrText();
  EXPECT_EQ(*line, "open https://" + listen + "/");
  httplib::Client client("https://" + listen);
  client.set_ca_cert_path(certA.c_str());
  client.enable_server_certificate_verification(true);
  auto stats = client.Get("/stats");
  ASSERT_TRUE(stats) << httplib::to_string(stats.error());
  EXPECT_EQ(stats->status, 200);
  expectStopsCleanly(serve, SIGTERM, 1500ms);
}

// A camera list that cannot be served stops serve at start (exit 2), naming the camera.
TEST(Cli, CameraMistakesFailNamingTheCamera) {
  const std::string listen = "127.0.0.1:" + std::to_string(freePort());
  const std::string path = ::testing::TempDir() + "/cameras.toml";
  { std::ofstream(path) << "[[camera]]\nname = \"yard\"\nsource = \"test\"\nzoom = 2\n"; }
  const std::string whipPath = ::testing::TempDir() + "/cameras-whip.toml";
  {
    std::ofstream(whipPath) << "[[camera]]\nname = \"gate\"\nsource = \"test\"\n"
                               "whip = \"http://127.0.0.1:9/whip\"\n";
  }
  struct Case {
    std::vector<std::string> args;
    const char* expect;
  } cases[] = {
      {{"serve", "--camera", "a=test", "--camera", "a=test"}, "two cameras are named \"a\""},
      {{"serve", "--camera", "a=v4l2:/dev/video7", "--camera", "b=v4l2:/dev/video7"},
       "camera \"b\" opens /dev/video7"},
      {{"serve", "--camera", "a.b=test"}, "camera \"a.b\""},
      {{"--config", path, "serve"}, "camera \"yard\" (line 1): unknown key \"zoom\""},
      {{"--config", whipPath, "serve", "--whip", "http://127.0.0.1:9/other"},
       "--whip and camera \"gate\"'s whip = \"...\" both name its WHIP endpoint: keep one"},
      {{"serve", "--whip-simulcast", "on"}, "--whip-simulcast requires --whip"},
      {{"serve", "--whip", "http://127.0.0.1:9/w", "--whip-simulcast", "yes"}, "yes not in {on,off}"},
  };
  for (auto& c : cases) {
    std::vector<std::string> argv{kCli};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    argv.insert(argv.end(), {"--listen", listen});
    auto r = run(argv);
    EXPECT_EQ(r.exitCode, 2) << c.expect << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
}

// Of several cameras, one that cannot be opened is reported and retried while the others run;
// each camera has its own WHEP endpoint and serve still stops at once.
TEST(Cli, CameraThatCannotOpenIsRetriedWhileTheOthersRun) {
  const auto port = freePort();
  ChildProcess serve({kCli, "serve", "--camera", "lab=test:320x240@30", "--camera", "gone=v4l2:/dev/video57",
                      "--listen", "127.0.0.1:" + std::to_string(port)});
  ASSERT_TRUE(serve.waitForStdoutLine("open http://", 15s)) << serve.stderrText();
  httplib::Client client("127.0.0.1", port);
  auto serveState = [&] {  // for a failure message: whether serve still runs, and its log so far
    serve.waitForStderrLine("\x01", 500ms);  // reads what serve wrote meanwhile
    const auto code = serve.waitExit(0ms);
    return (code ? "serve exited with " + std::to_string(*code) : std::string("serve runs")) + "; its log:\n" +
           serve.stderrText();
  };
  nlohmann::json stats;
  for (int i = 0; i < 50; ++i) {  // until the test camera has sent frames and the other failed an open
    std::this_thread::sleep_for(100ms);
    auto res = client.Get("/stats");
    ASSERT_TRUE(res) << "no answer from /stats: " << httplib::to_string(res.error()) << "; " << serveState();
    stats = nlohmann::json::parse(res->body);
    if (stats["cameras"][0].value("frames", 0) > 10 && stats["cameras"][1]["state"] == "retrying") break;
  }
  ASSERT_EQ(stats["cameras"].size(), 2u) << stats.dump();
  EXPECT_EQ(stats["cameras"][0]["name"], "lab");
  EXPECT_EQ(stats["cameras"][0]["state"], "running") << stats.dump();
  EXPECT_GT(stats["cameras"][0].value("frames", 0), 10) << stats.dump();
  EXPECT_EQ(stats["frames"], stats["cameras"][0]["frames"]);  // the first camera's figures at the top level
  EXPECT_EQ(stats["cameras"][1]["state"], "retrying") << stats.dump();
  EXPECT_NE(stats["cameras"][1]["error"].get<std::string>().find("/dev/video57"), std::string::npos) << stats.dump();
  // Each camera's endpoint exists (an offer that is not SDP is refused by it, not 404); others do not.
  for (const char* path : {"/whep/lab", "/whep/gone", "/whep"}) {
    auto res = client.Post(path, "x", "text/plain");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 415) << path;
  }
  auto none = client.Post("/whep/nope", "x", "application/sdp");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
  EXPECT_NE(none->body.find("gone, lab"), std::string::npos) << none->body;
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics) << "GET /metrics: " << httplib::to_string(metrics.error()) << "; " << serveState();
  EXPECT_NE(metrics->body.find("zerohop_camera_up{camera=\"gone\"} 0"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("zerohop_camera_up{camera=\"lab\"} 1"), std::string::npos) << metrics->body;

  expectStopsCleanly(serve, SIGINT, 2000ms);
}

// probe lists what each configured camera would use; a bad list is the same error as serve's.
TEST(Cli, ProbeListsTheConfiguredCameras) {
  auto r = run({kCli, "probe", "--camera", "lab=test:640x360@30", "--camera", "door=share:door_raw"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  const auto list = r.out.find("cameras (as serve would run them)");
  ASSERT_NE(list, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lab         test:640x360@30", list), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("door        share:door_raw", list), std::string::npos) << r.out;
  // The GPUs and the cameras each would take (docs/multi-gpu.md): here either on a GPU or on none.
  const auto gpus = r.out.find("\ngpus\n");
  ASSERT_NE(gpus, std::string::npos) << r.out;
  const std::string section = r.out.substr(gpus, list - gpus);
  EXPECT_TRUE(section.find("no GPU:    lab, door") != std::string::npos ||
              section.find("cameras: lab (auto), door (auto)") != std::string::npos)
      << section;
  auto twice = run({kCli, "probe", "--camera", "a=test", "--camera", "a=test"});
  EXPECT_EQ(twice.exitCode, 2);
  EXPECT_NE(twice.err.find("two cameras are named \"a\""), std::string::npos) << twice.err;
}

TEST(Cli, EmptyTokenIsAnError) {
  const std::string listen = "127.0.0.1:" + std::to_string(freePort());
  auto flag = run({kCli, "serve", "--listen", listen, "--whep-token", ""});
  EXPECT_EQ(flag.exitCode, 2) << flag.err;
  EXPECT_NE(flag.err.find("--whep-token is empty"), std::string::npos) << flag.err;
  auto env = run({"/usr/bin/env", "ZEROHOP_WHEP_TOKEN=", kCli, "serve", "--listen", listen});
  EXPECT_EQ(env.exitCode, 2) << env.err;
  EXPECT_NE(env.err.find("ZEROHOP_WHEP_TOKEN is empty"), std::string::npos) << env.err;
  const std::string file = ::testing::TempDir() + "/empty.token";
  { std::ofstream(file) << "\n"; }
  auto fromFile = run({kCli, "serve", "--listen", listen, "--whep-token-file", file});
  EXPECT_EQ(fromFile.exitCode, 2) << fromFile.err;
  EXPECT_NE(fromFile.err.find("is empty"), std::string::npos) << fromFile.err;
  auto protect = run({kCli, "serve", "--listen", listen, "--protect-stats"});
  EXPECT_EQ(protect.exitCode, 2) << protect.err;
}

// The token from a file (not in ps) or the environment guards WHEP, and with --protect-stats /stats.
TEST(Cli, TokenFromFileOrEnvironmentGuardsWhepAndProtectedStats) {
  const std::string file = ::testing::TempDir() + "/serve.token";
  { std::ofstream(file) << "filetok\n"; }
  for (const bool fromEnv : {false, true}) {
    const auto port = freePort();
    std::vector<std::string> argv = {"/usr/bin/env", fromEnv ? "ZEROHOP_WHEP_TOKEN=filetok" : "X=1", kCli, "serve",
                                     "--source", "test:320x240@15", "--listen", "127.0.0.1:" + std::to_string(port),
                                     "--protect-stats"};
    if (!fromEnv) argv.insert(argv.end(), {"--whep-token-file", file});
    ChildProcess serve(argv);
    auto line = serve.waitForStdoutLine("open http://", 15s);
    ASSERT_TRUE(line) << serve.stderrText();
    EXPECT_EQ(line->find("filetok"), std::string::npos) << "the token printed: " << *line;
    auto note = serve.waitForStdoutLine("WHEP token ", 15s);
    ASSERT_TRUE(note) << serve.stderrText();
    EXPECT_EQ(note->find("filetok"), std::string::npos) << "the token printed: " << *note;
    EXPECT_NE(note->find(fromEnv ? "from ZEROHOP_WHEP_TOKEN" : "from --whep-token-file " + file), std::string::npos)
        << *note;
    httplib::Client client("127.0.0.1", port);
    auto post = client.Post("/whep", "v=0\r\n", "application/sdp");
    ASSERT_TRUE(post);
    EXPECT_EQ(post->status, 401);
    auto stats = client.Get("/stats");
    ASSERT_TRUE(stats);
    EXPECT_EQ(stats->status, 401) << "--protect-stats: /stats answered without the token";
    auto authed = client.Get("/stats", {{"Authorization", "Bearer filetok"}});
    ASSERT_TRUE(authed);
    EXPECT_EQ(authed->status, 200);
    auto page = client.Get("/");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200) << "the page stays public";
    expectStopsCleanly(serve, SIGTERM, 1500ms);
  }
}

}  // namespace
}  // namespace zerohop

namespace zerohop {
namespace {

// ICE settings that cannot work fail at start with exit code 2 and the fix, before
// the camera is opened.
TEST(Cli, BadIceSettingsFailAtStartNamingTheFix) {
  const std::string listen = "127.0.0.1:" + std::to_string(testing::freePort());
  struct Case {
    std::vector<std::string> args;
    const char* expect;
    const char* flag;  // the option the CLI names for the fix
  } cases[] = {
      {{"--ice-server", "turn:/relay.example.net"}, "ICE server \"turn:/relay.example.net\": \"/relay.example.net\" is not a host", "(option --ice-server)"},
      {{"--ice-server", "turn://relay.example.net:3478"}, "TURN shared secret", "(option --turn-secret)"},
      {{"--ice-server", "stun://stun.example.net:3478?transport=tcp"}, "takes no", "(option --ice-server)"},
      {{"--ice-host", "public.example.net"}, "is not an IPv4 or IPv6 address", "(option --ice-host)"},
      {{"--udp-ports", "40100-40000"}, "--udp-ports \"40100-40000\"", "--udp-ports"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {kCli, "serve", "--listen", listen};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = run(argv);
    EXPECT_EQ(r.exitCode, 2) << c.args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(c.flag), std::string::npos) << c.args[1] << ": " << r.err;
  }
  // The same keys in --config (an array for the repeatable one) reach the same checks.
  const std::string path = ::testing::TempDir() + "/ice.toml";
  { std::ofstream(path) << "[serve]\nice-server = [\"stun://10.0.0.1:3478\", \"turn:/x\"]\nudp-ports = \"40000-40010\"\n"; }
  auto fromConfig = run({kCli, "--config", path, "serve", "--listen", listen});
  EXPECT_EQ(fromConfig.exitCode, 2) << fromConfig.err;
  EXPECT_NE(fromConfig.err.find("ICE server \"turn:/x\""), std::string::npos) << fromConfig.err;
  EXPECT_NE(fromConfig.err.find("(option --ice-server)"), std::string::npos) << fromConfig.err;
}

}  // namespace
}  // namespace zerohop

namespace zerohop {
namespace {

// tap --wait: a share not yet published is waited for (without it tap gives up at once).
TEST(Cli, TapWaitsForItsShareWithWait) {
  char tmpl[] = "/tmp/zh-cli-tap-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string runtime = tmpl;
  const std::string name = "tapwait" + std::to_string(::getpid());
  const std::string env = "XDG_RUNTIME_DIR=" + runtime;  // tap's share directory: $XDG_RUNTIME_DIR/zerohop
  auto now = run({"/usr/bin/env", env, kCli, "tap", name, "--count", "1"});
  EXPECT_NE(now.exitCode, 0);
  EXPECT_NE(now.err.find("no publisher '" + name + "'"), std::string::npos) << now.err;

  ChildProcess tap({"/usr/bin/env", env, kCli, "tap", name, "--wait", "20", "--count", "3", "--timeout", "10"});
  std::this_thread::sleep_for(300ms);  // the publisher's late start is what is tested
  ShareOptions so;
  so.directory = runtime + "/zerohop";
  const ImageLayout layout = computeLayout(PixelFormat::kNV12, 64, 48);
  Publisher pub(name, SlotLayout::images(layout, 4), so);
  std::vector<std::uint8_t> pixels(layout.totalBytes, 0x40);
  Frame f;
  bindLayout(f, layout, pixels.data(), MemoryKind::kHost);
  std::optional<int> code;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (std::uint64_t seq = 1; !code && std::chrono::steady_clock::now() < deadline; ++seq) {
    f.sequence = seq;
    pub.publish(f);
    code = tap.waitExit(10ms);  // the publisher's frame interval
  }
  ASSERT_TRUE(code) << "tap did not finish: " << tap.stderrText();
  EXPECT_EQ(*code, 0) << tap.stderrText();
  EXPECT_NE(tap.stderrText().find("attached to '" + name + "'"), std::string::npos) << tap.stderrText();
  EXPECT_EQ(std::count(tap.stdoutText().begin(), tap.stdoutText().end(), '\n'), 3) << tap.stdoutText();
  std::filesystem::remove_all(runtime);
}

// zerohop shares: one live share a line on stdout.
TEST(Cli, SharesListsWhatIsPublished) {
  char tmpl[] = "/tmp/zh-cli-shares-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto none = run({kCli, "shares", "--dir", dir});
  EXPECT_EQ(none.exitCode, 0) << none.err;
  EXPECT_EQ(none.out, "");
  ShareOptions so;
  so.directory = dir;
  const std::string name = "listed" + std::to_string(::getpid());
  Publisher pub(name, SlotLayout::images(computeLayout(PixelFormat::kNV12, 64, 48), 2), so);
  auto one = run({kCli, "shares", "--dir", dir});
  EXPECT_EQ(one.exitCode, 0) << one.err;
  EXPECT_EQ(one.out, name + "\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zerohop
