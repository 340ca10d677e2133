#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "camera_options.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "listen_address.hpp"
#include "status_line.hpp"
#include "zerohop/camera_server.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::cli {
namespace {

// serve runs for days while each viewer's GStreamer threads come and go: glibc's default gives many
// of them a malloc arena of their own, whose freed blocks stay resident. With two, RSS per WHEP session
// fell from ~520 to ~330 bytes in session-heavy runs; the 30-minute soak grew +5.7 % against +6.0 % with
// the default (both on a shared box; docs/reliability.md, Soak). MALLOC_ARENA_MAX in the environment
// still decides where it is set.
void limitMallocArenas() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
}

// Every viewer's GStreamer pipeline and every HTTP connection take descriptors, and GLib aborts the
// process when it cannot make a wakeup pipe: start with the soft limit at the hard one. The HTTP side
// and POST /whep keep a reserve below it (docs/exposure.md).
void raiseDescriptorLimit() {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) != 0 || nofile.rlim_cur >= nofile.rlim_max) return;
  const rlim_t was = nofile.rlim_cur;
  nofile.rlim_cur = nofile.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    log::debug("RLIMIT_NOFILE raised from ", was, " to ", nofile.rlim_cur);
  } else {
    log::warn("setrlimit(RLIMIT_NOFILE, ", nofile.rlim_max, ") failed: ", std::strerror(errno), "; staying at ", was);
  }
}

struct ServeOptions {
  std::string source = "test:1280x720@30";
  std::string listen = "127.0.0.1:8080";
  std::uint32_t bitrateKbps = 2500;
  std::uint32_t keyint = 120;
  std::string encoder = "auto";
  std::string preset = "auto";
  int encoderThreads = 1;
  bool intraRefresh = false;
  std::string gpu = "auto";
  std::uint32_t maxViewers = 16;
  std::uint32_t batchJpegFrom = 8;  // CameraServerConfig::batchJpegCameras
  std::string webRoot;
  std::string share;
  bool shareGiven = false;   // --share, with or without a NAME
  std::string audio;         // --audio SOURCE: the first camera's sound
  std::uint32_t audioFrameMs = CameraConfig{}.audioFrameMs;  // --audio-frame-ms: every camera's, unless its table says
  bool sourceGiven = false;  // --source (or source = in [serve])
  std::vector<std::string> cameras;  // --camera NAME=SOURCE
  std::string configPath;    // --config, for its [[camera]] tables
  std::string whepToken;
  bool whepTokenGiven = false;  // --whep-token or ZEROHOP_WHEP_TOKEN, even when empty
  std::string whepTokenFile;
  bool protectStats = false;
  std::string tlsCert;  // --tls-cert / --tls-key: HTTPS
  std::string tlsKey;
  std::string whipUrl;
  std::string whipToken;
  std::string whipSimulcast = "off";
  std::string janus;
  std::string recordPath;  // --record / --record-segment: the first camera's recording
  double recordSegmentSeconds = 0;
  std::string playoutDelay = "auto";  // auto, or MIN,MAX
  std::vector<std::string> iceServers;
  std::string turnSecret;
  std::string iceHost;
  std::string udpPorts;
  std::uint32_t minBitrateKbps = 300;
  std::string renditions = "auto";
  std::string congestionControl = "on";
  double statusInterval = 0;  // 0 = every second on a terminal, every 10 s otherwise
};

// Blocks SIGINT/SIGTERM in this thread before any other thread exists, so every thread inherits
// the mask and the main thread alone receives them through sigtimedwait.
sigset_t blockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// The WHEP token from --whep-token, ZEROHOP_WHEP_TOKEN or --whep-token-file (its first line). An
// empty one is an error: it would mean "no token", i.e. authentication silently off.
std::string whepToken(const ServeOptions& o) {
  if (!o.whepTokenFile.empty()) {
    std::ifstream in(o.whepTokenFile);
    if (!in) throw Error(Errc::kInvalidArgument, "--whep-token-file " + o.whepTokenFile + ": cannot be read");
    std::string token;
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
    if (token.empty()) {
      throw Error(Errc::kInvalidArgument, "--whep-token-file " + o.whepTokenFile +
                                              ": the first line is empty; put the token there (no token: leave the option out)");
    }
    return token;
  }
  const char* env = std::getenv("ZEROHOP_WHEP_TOKEN");
  if ((o.whepTokenGiven || env) && o.whepToken.empty()) {
    throw Error(Errc::kInvalidArgument,
                std::string(o.whepTokenGiven ? "--whep-token" : "ZEROHOP_WHEP_TOKEN") +
                    " is empty: an empty token would leave WHEP open to anyone; give one, or leave it out");
  }
  return o.whepToken;
}

// Where the WHEP token came from, for the line that says one is set (never the token itself).
std::string whepTokenSource(const ServeOptions& o) {
  if (!o.whepTokenFile.empty()) return "--whep-token-file " + o.whepTokenFile;
  const char* env = std::getenv("ZEROHOP_WHEP_TOKEN");
  if (env && o.whepToken == env) return "ZEROHOP_WHEP_TOKEN";  // the command line wins over it: same value
  return o.configPath.empty() ? "--whep-token" : "--whep-token or " + o.configPath;
}

// A secret as a user may see it: its first two characters when it is long enough that they give
// little away (16 or more), the rest as '*', and its length: "ab****** (32 characters)".
std::string maskedSecret(const std::string& secret) {
  const std::size_t shown = secret.size() >= 16 ? 2 : 0;
  return secret.substr(0, shown) + std::string(8, '*') + " (" + std::to_string(secret.size()) + " characters)";
}

// The cameras to serve: [[camera]] tables, then --camera arguments, or else --source as camera
// "cam0". Each takes serve's encoder and --gpu options unless its table says otherwise.
std::vector<CameraConfig> serveCameras(const ServeOptions& o) {
  CameraDefaults defaults;
  defaults.encoder.encoder = o.encoder;
  defaults.encoder.bitrateKbps = o.bitrateKbps;
  defaults.encoder.keyframeIntervalFrames = o.keyint;
  defaults.encoder.preset = o.preset;
  defaults.encoder.threads = o.encoderThreads;
  defaults.encoder.intraRefresh = o.intraRefresh;
  defaults.gpu = o.gpu;
  defaults.renditions = o.renditions;
  defaults.audioFrameMs = o.audioFrameMs;
  std::vector<CameraConfig> cameras;
  if (!o.configPath.empty()) {
    for (const auto& table : readCameraTables(o.configPath)) cameras.push_back(cameraFromTable(table, defaults, o.configPath));
  }
  for (const auto& argument : o.cameras) cameras.push_back(parseCameraArgument(argument, defaults));
  if (cameras.empty()) {
    CameraConfig c;
    c.name = "cam0";
    c.source = parseSourceSpec(o.source);
    applyDefaults(c, defaults);
    cameras.push_back(std::move(c));
  } else if (o.sourceGiven) {
    throw Error(Errc::kInvalidArgument,
                "--source together with --camera or [[camera]] tables: give every camera as --camera NAME=SOURCE "
                "(or a [[camera]] table), the first is the one /whep plays");
  }
  if (o.shareGiven) {
    if (!o.share.empty() && cameras.size() > 1) {
      throw Error(Errc::kInvalidArgument,
                  "--share " + o.share + " names one share, and there are " + std::to_string(cameras.size()) +
                      " cameras: give --share alone (each camera shares as its name, and NAME.h264) or "
                      "share = \"...\" in a [[camera]] table");
    }
    for (auto& c : cameras) {
      if (c.shareName.empty()) c.shareName = o.share.empty() ? c.name : o.share;
    }
  }
  if (!o.audio.empty()) {
    if (o.audio != "test" && o.audio != "rtsp" && o.audio.rfind("alsa:", 0) != 0) {
      throw Error(Errc::kInvalidArgument, "--audio " + o.audio +
                                              ": give test (a tone clicking at the A/V marker), alsa:DEVICE "
                                              "(alsa:default, alsa:hw:1,0; zerohop probe lists them) or rtsp (an IP "
                                              "camera's own sound)");
    }
    if (cameras.size() > 1) {
      throw Error(Errc::kInvalidArgument, "--audio " + o.audio + " with " + std::to_string(cameras.size()) +
                                              " cameras: give audio = \"...\" in each [[camera]] table instead");
    }
    if (o.audio == "rtsp" && cameras.front().source.kind != "rtsp") {
      throw Error(Errc::kInvalidArgument, "--audio rtsp is an IP camera's own sound, and the source is not "
                                          "rtsp://...: use --audio alsa:DEVICE for a microphone");
    }
    cameras.front().audio = o.audio;
  }
  // --whip and --janus are the first camera's outputs; a [[camera]] table gives any camera its own.
  CameraConfig& first = cameras.front();
  if (!o.whipUrl.empty()) {
    if (!first.whipUrl.empty()) {
      throw Error(Errc::kInvalidArgument, "--whip and camera \"" + first.name +
                                              "\"'s whip = \"...\" both name its WHIP endpoint: keep one");
    }
    first.whipUrl = o.whipUrl;
    first.whipToken = o.whipToken;
    first.whipSimulcast = o.whipSimulcast == "on";
  }
  if (!o.janus.empty()) {
    if (!first.janus.empty()) {
      throw Error(Errc::kInvalidArgument, "--janus and camera \"" + first.name +
                                              "\"'s janus = \"...\" both name its RTP target: keep one");
    }
    first.janus = o.janus;
  }
  if (!o.recordPath.empty()) {
    if (!first.recordPath.empty()) {
      throw Error(Errc::kInvalidArgument, "--record and camera \"" + first.name +
                                              "\"'s record = \"...\" both name its recording: keep one");
    }
    first.recordPath = o.recordPath;
    first.recordSegmentSeconds = o.recordSegmentSeconds;
  }
  checkCameras(cameras);
  return cameras;
}

// "MIN-MAX" or one "PORT" for --udp-ports.
void parseUdpPorts(const std::string& text, std::uint16_t& min, std::uint16_t& max) {
  const auto refuse = [&text] {
    return Error(Errc::kInvalidArgument, "--udp-ports \"" + text +
                                             "\": give MIN-MAX (e.g. 40000-40099: one port per viewer) or one "
                                             "PORT, 1-65535");
  };
  const std::size_t dash = text.find('-');
  const std::string a = text.substr(0, dash), b = dash == std::string::npos ? a : text.substr(dash + 1);
  const auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 5 || t.find_first_not_of("0123456789") != std::string::npos) throw refuse();
    const int v = std::stoi(t);
    if (v < 1 || v > 65535) throw refuse();
    return static_cast<std::uint16_t>(v);
  };
  min = number(a);
  max = number(b);
  if (min > max) throw refuse();
}

int runServe(ServeOptions o) {
  o.whepToken = whepToken(o);
  if (o.protectStats && o.whepToken.empty()) {
    throw Error(Errc::kInvalidArgument, "--protect-stats needs a WHEP token (--whep-token-file, ZEROHOP_WHEP_TOKEN or --whep-token)");
  }
  CameraServerConfig config;
  config.cameras = serveCameras(o);
  const auto listen = parseListenAddress(o.listen);
  config.stream.host = listen.host;
  config.stream.port = listen.port;
  config.stream.maxViewers = o.maxViewers;
  config.batchJpegCameras = o.batchJpegFrom;
  config.stream.webRoot = o.webRoot;
  config.stream.whepToken = o.whepToken;
  config.stream.protectStats = o.protectStats;
  config.stream.tlsCertFile = o.tlsCert;
  config.stream.tlsKeyFile = o.tlsKey;
  if (o.playoutDelay == "auto") {
    config.stream.adaptivePlayoutDelay = true;  // the default delay, raised for a viewer whose lost packets come back slowly
  } else if (o.playoutDelay == "off") {
    config.stream.adaptivePlayoutDelay = false;
    config.stream.sendPlayoutDelay = false;  // what GStreamer's webrtcbin alone sends: nothing
  } else {
    // The numbers' range and steps are StreamServer's to check (its error names them).
    int minMs = 0, maxMs = 0;
    char tail = 0;
    if (std::sscanf(o.playoutDelay.c_str(), "%d,%d%c", &minMs, &maxMs, &tail) != 2) {
      throw Error(Errc::kInvalidArgument, "--playout-delay '" + o.playoutDelay +
                                              "': give auto, off, or MIN,MAX in milliseconds (e.g. 0,100 or 100,200)");
    }
    config.stream.adaptivePlayoutDelay = false;  // fixed: what the user asked for, always
    config.stream.playoutDelayMinMs = minMs;
    config.stream.playoutDelayMaxMs = maxMs;
  }
  config.stream.congestionControl = o.congestionControl == "on";
  config.stream.minBitrateKbps = o.minBitrateKbps;
  config.stream.iceServers = o.iceServers;
  config.stream.turnSecret = o.turnSecret;
  config.stream.iceHost = o.iceHost;
  if (!o.udpPorts.empty()) parseUdpPorts(o.udpPorts, config.stream.udpPortMin, config.stream.udpPortMax);
  // One camera fails as serve always has (at start, or when it fails for good: exit 1); of several,
  // one that fails is reported in /stats and opened again while the others run on.
  config.failFast = config.cameras.size() == 1;
  // Each camera's pipeline decides its data path (choosePath) and, on the GPU path, NVENC or x264
  // (probeNvenc), logging one line with the reason for each.

  limitMallocArenas();
  raiseDescriptorLimit();
  const sigset_t stopSignals = blockStopSignals();
  CameraServer server(std::move(config));
  server.start();
  // The token itself is never printed (stdout ends up in journald and CI logs): a viewer adds it.
  std::printf("open %s\n", server.url().c_str());
  if (!o.whepToken.empty()) {
    std::printf("WHEP token %s, from %s: viewers open the page with ?token=TOKEN\n", maskedSecret(o.whepToken).c_str(),
                whepTokenSource(o).c_str());
  }
  std::fflush(stdout);

  const bool tty = isatty(STDERR_FILENO) != 0;
  const double interval = o.statusInterval > 0 ? o.statusInterval : (tty ? 1.0 : 10.0);
  double sinceStatus = 0;
  int exitCode = kExitOk;
  std::chrono::steady_clock::time_point stopAsked;
  for (;;) {
    timespec wait{0, 250'000'000};
    const int sig = sigtimedwait(&stopSignals, nullptr, &wait);
    if (sig == SIGINT || sig == SIGTERM) {
      if (tty) std::fprintf(stderr, "\n");
      log::info("stopping (", sig == SIGINT ? "SIGINT" : "SIGTERM", ")");
      stopAsked = std::chrono::steady_clock::now();
      break;
    }
    if (auto failure = server.failure()) {
      std::fprintf(stderr, "%szerohop: error: %s\n", tty ? "\n" : "", failure->what());
      exitCode = kExitFailure;
      break;
    }
    sinceStatus += 0.25;
    if (sinceStatus + 1e-9 >= interval) {
      sinceStatus = 0;
      if (tty) {
        std::fprintf(stderr, "\r\033[K%s", cli::statusLine(server.cameras()).c_str());
      } else {
        std::fprintf(stderr, "%s\n", cli::statusLine(server.cameras()).c_str());
      }
      std::fflush(stderr);
    }
  }
  server.stop();
  if (exitCode == kExitOk) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - stopAsked);
    log::info("stopped in ", ms.count(), " ms");  // every pipeline joined, every viewer closed
  }
  return exitCode;
}

}  // namespace

Runner addServeCommand(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto* cmd = app.add_subcommand("serve", "Stream a camera to browsers over WebRTC (WHEP) and serve the viewer page");
  auto* source = cmd->add_option("--source", o->source,
                                 "test[:WxH[@FPS]][?format=yuyv|uyvy] (built-in test camera), "
                                 "v4l2:/dev/videoN[?format=..&size=WxH&fps=N&memory=mmap|userptr] or share:NAME: "
                                 "the one camera (named cam0)")
                     ->capture_default_str();
  cmd->add_option(
         "--camera", o->cameras,
         "NAME=SOURCE, repeatable: several cameras, each its own pipeline, WHEP at /whep/NAME (the first "
         "also at /whep), shares NAME and NAME.h264 with --share; NAME is letters, digits, _ and -. "
         "Or [[camera]] tables in --config (name, source, bitrate, keyint, encoder, preset, threads, gpu, "
         "share, renditions, audio, audio_frame_ms, whip, whip_token, whip_simulcast, janus, record, "
         "record_segment)")
      ->excludes(source);
  cmd->add_option("--listen", o->listen, "HOST:PORT for the viewer page, WHEP (/whep) and /stats")->capture_default_str();
  cmd->add_option("--bitrate", o->bitrateKbps, "H.264 bitrate in kbit/s (CBR, one-frame VBV)")
      ->check(CLI::Range(100u, 100000u))
      ->capture_default_str();
  cmd->add_option(
         "--min-bitrate", o->minBitrateKbps,
         "kbit/s: the least congestion control lowers the bitrate to for a viewer with a poor link "
         "(--bitrate is the most; a viewer on the ladder of --renditions goes down to its lowest rung's "
         "own minimum, where that is lower)")
      ->check(CLI::Range(50u, 100000u))
      ->capture_default_str();
  cmd->add_option("--congestion-control", o->congestionControl,
                  "on: the bitrate follows the weakest viewer's link (RTCP loss and round trip, transport-cc), "
                  "between --min-bitrate and --bitrate; off: it stays at --bitrate")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--renditions", o->renditions,
                  "on: a ladder of full, 1/2 and 1/4 size (each with its own bitrate range: 0.4-1, 0.15-0.4, "
                  "0.05-0.15 x --bitrate), each H.264 viewer on the highest its own link fits; auto: on, without the "
                  "rungs under 320x180 (none below 640x360; none in passthrough); off: one encode every viewer "
                  "shares; or DIV:MIN-MAX,... (e.g. 1:1000-2500,2:300-1000,4:100-300). A rung no viewer is on is "
                  "not encoded")
      ->capture_default_str();
  cmd->add_option("--keyint", o->keyint, "frames between periodic keyframes (0: only when a viewer asks)")
      ->capture_default_str();
  cmd->add_option("--encoder", o->encoder,
                  "auto (NVENC from VRAM when the GPU path is used and a session opens, else x264), x264, or nvenc "
                  "(fails within seconds, naming the cause, where NVENC cannot be used)")
      ->check(CLI::IsMember({"auto", "x264", "nvenc"}))
      ->capture_default_str();
  cmd->add_option("--preset", o->preset,
                  "x264 preset (ultrafast..medium), or auto: superfast up to 1080p30's macroblock rate (720p60 "
                  "included), ultrafast above (1080p60), as measured on a 2-core box; NVENC: p1..p7 (auto: p1)")
      ->capture_default_str();
  cmd->add_option("--encoder-threads", o->encoderThreads,
                  "x264 (and VP8) threads per camera, each encoding a slice of every frame: a frame is ready sooner "
                  "where cores are free, for some more CPU (docs/benchmarks.md); 0: by the number of cores")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmd->add_flag("--intra-refresh", o->intraRefresh,
                "NVENC: refresh the picture with an intra-coded region that sweeps it over --keyint frames instead of periodic IDRs "
                "(no keyframe-sized bursts on the wire; a new viewer still gets an IDR); x264 ignores it");
  cmd->add_option("--gpu", o->gpu,
                  "auto (convert/decode in VRAM when a CUDA device works: `zerohop probe` says which path and why), "
                  "off (CPU path: libyuv, libjpeg-turbo), or a CUDA device number (an error if it cannot be used)")
      ->capture_default_str();
  cmd->add_option("--max-viewers", o->maxViewers, "viewers past this get 503")->capture_default_str();
  cmd->add_option("--batch-jpeg-from", o->batchJpegFrom,
                  "with this many cameras or more, the MJPEG cameras of a GPU share one batched nvJPEG decoder (more "
                  "cameras per GPU, each frame decoded whole); fewer: a decoder each, splitting frames over several "
                  "JPEG engines (lower latency). 0: never batch")
      ->capture_default_str();
  cmd->add_option("--web-root", o->webRoot, "serve the viewer page from this folder instead of the built-in copy");
  cmd->add_option("--audio", o->audio,
                  "send the camera's sound to WebRTC viewers beside its picture (Opus): test (a tone that clicks at "
                  "the A/V marker instants), alsa:DEVICE (alsa:default, alsa:hw:1,0, alsa:plughw:1,0) or rtsp (an rtsp:// "
                  "camera's own sound: G.711, AAC, Opus, decoded and encoded to Opus); none unless given");
  cmd->add_option(
         "--audio-frame-ms", o->audioFrameMs,
         "milliseconds of sound in each Opus packet: 10 (the sound plays ~7 ms sooner in a browser than with "
         "20), 20 (half the packets: ~20 kb/s less per viewer) or 5 (sooner still, twice the packets of 10, "
         "and "
         "no in-band FEC: Opus's low-delay mode); every camera's, unless its [[camera]] table gives "
         "audio_frame_ms")
      ->check(CLI::IsMember({5, 10, 20}))
      ->capture_default_str();
  auto* share = cmd->add_option("--share", o->share,
                                "publish every converted frame as share NAME and every H.264 access unit as NAME.h264, "
                                "for other processes (zerohop tap NAME, zerohop::Subscriber); without NAME each "
                                "camera shares under its own name")
                    ->expected(0, 1);
  auto* token = cmd->add_option("--whep-token", o->whepToken,
                                 "require 'Authorization: Bearer TOKEN' on WHEP requests (open the page as "
                                 "/?token=TOKEN); visible in ps: prefer --whep-token-file or ZEROHOP_WHEP_TOKEN")
                     ->envname("ZEROHOP_WHEP_TOKEN");
  cmd->add_option("--whep-token-file", o->whepTokenFile, "read the WHEP token from the first line of this file")
      ->excludes(token);
  cmd->add_flag("--protect-stats", o->protectStats,
                "also require the WHEP token on /stats and /metrics (the page itself stays public: it holds no data)");
  cmd->add_option("--tls-cert", o->tlsCert,
                  "serve HTTPS only (page, WHEP, /stats) with this PEM certificate chain, the server's "
                  "certificate first (Let's Encrypt: fullchain.pem); needs --tls-key. docs/exposure.md");
  cmd->add_option("--tls-key", o->tlsKey,
                  "the unencrypted PEM private key of --tls-cert (Let's Encrypt: privkey.pem)");
  auto* whip =
      cmd->add_option("--whip", o->whipUrl,
                      "also publish the stream to this WHIP endpoint (http[s]://HOST[:PORT]/PATH); "
                      "reconnects with back-off. With several cameras: the first one's (whip = \"...\" "
                      "in a [[camera]] table gives any camera its own)");
  cmd->add_option("--whip-token", o->whipToken, "send 'Authorization: Bearer TOKEN' to the WHIP endpoint")
      ->needs(whip);
  cmd->add_option(
         "--whip-simulcast", o->whipSimulcast,
         "on: offer the WHIP endpoint the --renditions ladder (its first 3 rungs) as simulcast layers "
         "h, m, l, so an SFU (Janus, LiveKit, MediaMTX) gives each of its viewers the one its link "
         "carries; the layers its answer takes are encoded and sent. off: the full-size stream alone")
      ->check(CLI::IsMember({"on", "off"}))
      ->needs(whip)
      ->capture_default_str();
  auto* record =
      cmd->add_option("--record", o->recordPath,
                      "also record the stream (and its sound) to FILE.mp4 (fragmented) or FILE.mkv, "
                      "from the first keyframe, timestamped by capture time; written whole at stop. "
                      "With several cameras: the first one's (record = \"...\" in a [[camera]] "
                      "table gives any camera its own)");
  cmd->add_option("--record-segment", o->recordSegmentSeconds,
                  "with --record: a new file at the first keyframe SECONDS into the current one "
                  "(FILE-0000.mp4, FILE-0001.mp4, ...)")
      ->check(CLI::PositiveNumber)
      ->needs(record);
  cmd->add_option(
      "--janus", o->janus,
      "also send RTP H.264 (and, with --audio, the Opus) to a Janus streaming-plugin RTP mountpoint: "
      "HOST:PORT?mountpoint=ID[&secret=S] (Janus's HTTP API tells its ports) or "
      "HOST:PORT[?rtcp=PORT&pt=N&audio=APORT] (its video port; its rtcpport, default PORT+1, carries "
      "keyframe requests back; APORT takes the sound). With several cameras: the first one's (janus = "
      "\"...\" in a [[camera]] table gives any camera its own)");
  cmd->add_option("--playout-delay", o->playoutDelay,
                  "the RTP playout-delay the viewers' browsers are asked to keep between capture and display: "
                  "MIN,MAX ms (0..40950, steps of 10; 0,0 displays each frame as soon as it is decoded), fixed; "
                  "or auto: 0,0, raised for a viewer whose lost packets come back slowly (RTT >= 60 ms) to "
                  "1.5 x RTT + 50 ms, so frames wait for their retransmission instead of freezing (docs/stream.md); "
                  "or off: not sent, the browser's own default, as with a plain GStreamer webrtcbin sender")
      ->capture_default_str();
  cmd->add_option("--ice-server", o->iceServers,
                  "a STUN/TURN server for the viewers (repeatable): stun://HOST[:PORT], "
                  "turn://USER:PASS@HOST[:PORT][?transport=tcp], turns://USER:PASS@HOST[:PORT]; used by the "
                  "sender and given to WHEP players (Link headers) and the viewer page");
  cmd->add_option("--turn-secret", o->turnSecret,
                  "TURN REST API shared secret (coturn static-auth-secret): turn:// servers given without "
                  "USER:PASS get credentials valid for a day; visible in ps: prefer ZEROHOP_TURN_SECRET")
      ->envname("ZEROHOP_TURN_SECRET");
  cmd->add_option("--ice-host", o->iceHost,
                  "advertise this address in the host candidates instead of the one this host sees "
                  "(a 1:1 NAT, e.g. a cloud VM's public IP; the ports stay)");
  cmd->add_option("--udp-ports", o->udpPorts,
                  "MIN-MAX: the UDP ports ICE uses, for a firewall (one per viewer: give at least "
                  "--max-viewers)");
  cmd->add_option("--status-interval", o->statusInterval, "seconds between status lines (default 1 on a terminal, 10 otherwise)");
  return [o, token, source, share, cmd] {
    o->whepTokenGiven = token->count() > 0;
    o->sourceGiven = source->count() > 0;
    o->shareGiven = share->count() > 0;
    if (const CLI::Option* config = cmd->get_parent()->get_config_ptr(); config && config->count() > 0) {
      o->configPath = config->as<std::string>();
    }
    return runServe(*o);
  };
}

}  // namespace zerohop::cli
