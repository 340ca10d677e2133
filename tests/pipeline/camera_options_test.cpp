// Several cameras: --camera NAME=SOURCE, [[camera]] tables, checkCameras, and /metrics with a camera label.
#include "camera_options.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "metrics_text.hpp"
#include "zerohop/error.hpp"

namespace zerohop::cli {
namespace {

// The message of the Error(kInvalidArgument) `f` throws, or "" when it throws none (a failure).
template <typename F>
std::string usageError(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

struct TomlFile {
  explicit TomlFile(const std::string& text) {
    path = testing::TempDir() + "cameras-" + std::to_string(getpid()) + "-" +
           testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml";
    std::ofstream(path) << text;
  }
  ~TomlFile() { ::unlink(path.c_str()); }
  std::string path;
};

CameraConfig camera(const std::string& name, const std::string& source, const std::string& share = {}) {
  CameraConfig c;
  c.name = name;
  c.source = parseSourceSpec(source);
  c.shareName = share;
  return c;
}

TEST(CameraOptions, ArgumentIsNameEqualsAnySourceSpec) {
  CameraDefaults d;
  d.encoder.bitrateKbps = 900;
  d.gpu = "off";
  const CameraConfig c = parseCameraArgument("side-2=v4l2:/dev/video1?format=mjpeg", d);
  EXPECT_EQ(c.name, "side-2");
  EXPECT_EQ(c.source.kind, "v4l2");
  EXPECT_EQ(c.source.path, "/dev/video1");
  EXPECT_EQ(c.source.format, PixelFormat::kMJPEG);
  EXPECT_EQ(c.encoder.bitrateKbps, 900u);
  EXPECT_EQ(c.gpu, "off");
  EXPECT_EQ(parseCameraArgument("s=share:foo", d).source.kind, "share");
}

TEST(CameraOptions, BadArgumentsNameTheCamera) {
  EXPECT_NE(usageError([] { parseCameraArgument("v4l2:/dev/video0", {}); }).find("NAME=SOURCE"), std::string::npos);
  EXPECT_NE(usageError([] { parseCameraArgument("a/b=test", {}); }).find("camera \"a/b\""), std::string::npos);
  EXPECT_NE(usageError([] { parseCameraArgument("=test", {}); }).find("camera \"\""), std::string::npos);
  EXPECT_NE(usageError([] { parseCameraArgument("a=bogus:1", {}); }).find("camera \"a\""), std::string::npos);
}

TEST(CameraOptions, AnRtspCameraIsTakenAndItsPasswordNeverQuoted) {
  const CameraConfig c = parseCameraArgument("door=rtsp://admin:hunter2@192.168.1.20/stream1", {});
  EXPECT_EQ(c.source.kind, "rtsp");
  EXPECT_EQ(toString(c.source), "rtsp://***@192.168.1.20/stream1");
  const std::string error = usageError([] { parseCameraArgument("door=rtsp://admin:hunter2@cam:0/x", {}); });
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
  EXPECT_NE(error.find("--camera door=rtsp://***@cam:0/x"), std::string::npos) << error;
}

TEST(CameraOptions, TablesGiveEachCameraItsSettings) {
  TomlFile f(R"([serve]
listen = "127.0.0.1:0"

[[camera]]
name = "front"   # the door
source = 'v4l2:/dev/video0?format=mjpeg'
bitrate = 1200
threads = 4
gpu = "1"
share = "front_raw"
renditions = "on"
audio = "alsa:plughw:1,0"
audio_frame_ms = 20

[[camera]]
source = "test:640x360@30"
name = "back"
encoder = "x264"
)");
  const auto tables = readCameraTables(f.path);
  ASSERT_EQ(tables.size(), 2u);
  CameraDefaults d;
  d.encoder.bitrateKbps = 2500;
  const CameraConfig front = cameraFromTable(tables[0], d, f.path);
  EXPECT_EQ(front.name, "front");
  EXPECT_EQ(front.source.format, PixelFormat::kMJPEG);
  EXPECT_EQ(front.encoder.bitrateKbps, 1200u);
  EXPECT_EQ(front.encoder.threads, 4);
  EXPECT_EQ(front.gpu, "1");
  EXPECT_EQ(front.shareName, "front_raw");
  EXPECT_EQ(front.renditions, "on");
  EXPECT_EQ(front.audio, "alsa:plughw:1,0");
  EXPECT_EQ(front.audioFrameMs, 20u);
  const CameraConfig back = cameraFromTable(tables[1], d, f.path);
  EXPECT_EQ(back.name, "back");
  EXPECT_EQ(back.encoder.bitrateKbps, 2500u);
  EXPECT_EQ(back.encoder.threads, 1) << "serve's --encoder-threads";
  EXPECT_EQ(back.encoder.encoder, "x264");
  EXPECT_TRUE(back.shareName.empty());
  EXPECT_EQ(back.renditions, "auto") << "serve's --renditions default";
  EXPECT_TRUE(back.audio.empty()) << "no sound unless asked";
  EXPECT_EQ(back.audioFrameMs, 10u) << "serve's --audio-frame-ms default";
}

// Every camera has every built-in output, each configured once in its own table.
TEST(CameraOptions, EachCameraTableGivesItsOwnWhipAndJanusOutputs) {
  TomlFile f(R"([[camera]]
name = "front"
source = "test"
whip = "https://whip.example.com/front"
whip_token = "tok-front-5"
whip_simulcast = "on"

[[camera]]
name = "back"
source = "test"
janus = "10.0.0.9:5004?audio=5006"

[[camera]]
name = "side"
source = "test"
)");
  const auto tables = readCameraTables(f.path);
  ASSERT_EQ(tables.size(), 3u);
  CameraDefaults d;
  const CameraConfig front = cameraFromTable(tables[0], d, f.path);
  EXPECT_EQ(front.whipUrl, "https://whip.example.com/front");
  EXPECT_EQ(front.whipToken, "tok-front-5");
  EXPECT_TRUE(front.whipSimulcast);
  EXPECT_TRUE(front.janus.empty());
  const CameraConfig back = cameraFromTable(tables[1], d, f.path);
  EXPECT_TRUE(back.whipUrl.empty());
  EXPECT_EQ(back.janus, "10.0.0.9:5004?audio=5006") << "the second camera has an output of its own";
  const CameraConfig side = cameraFromTable(tables[2], d, f.path);
  EXPECT_TRUE(side.whipUrl.empty() && side.whipToken.empty() && side.janus.empty() && !side.whipSimulcast)
      << "no output unless asked";
}

TEST(CameraOptions, EachCameraTableGivesItsOwnRecordingAndItsMistakesNameTheCamera) {
  TomlFile f(R"([[camera]]
name = "front"
source = "test"
record = "/var/rec/front.mkv"
record_segment = 600

[[camera]]
name = "back"
source = "test"
)");
  const auto tables = readCameraTables(f.path);
  CameraDefaults d;
  const CameraConfig front = cameraFromTable(tables.at(0), d, f.path);
  EXPECT_EQ(front.recordPath, "/var/rec/front.mkv");
  EXPECT_EQ(front.recordSegmentSeconds, 600);
  const CameraConfig back = cameraFromTable(tables.at(1), d, f.path);
  EXPECT_TRUE(back.recordPath.empty()) << "no recording unless asked";
  EXPECT_EQ(back.recordSegmentSeconds, 0);

  const auto mistake = [&](const std::string& lines) {
    TomlFile m("[[camera]]\nname = \"a\"\nsource = \"test\"\n" + lines);
    const auto t = readCameraTables(m.path);
    return usageError([&] { cameraFromTable(t.at(0), d, m.path); });
  };
  std::string e = mistake("record = \"a.avi\"\n");
  EXPECT_NE(e.find("camera \"a\""), std::string::npos) << e;
  EXPECT_NE(e.find(".mp4"), std::string::npos) << "says which names work: " << e;
  e = mistake("record_segment = 60\n");
  EXPECT_NE(e.find("without record"), std::string::npos) << e;
  e = mistake("record = \"a.mp4\"\nrecord_segment = 0\n");
  EXPECT_NE(e.find("at least 1"), std::string::npos) << e;

  CameraConfig a, b;
  a.name = "a";
  b.name = "b";
  a.source = b.source = parseSourceSpec("test");
  a.recordPath = b.recordPath = "/tmp/same.mp4";
  e = usageError([&] { checkCameras({a, b}); });
  EXPECT_NE(e.find("give each camera its own file"), std::string::npos) << e;
}

TEST(CameraOptions, AWhipMistakeNamesTheCameraAndQuotesNoSecret) {
  CameraDefaults d;
  {
    TomlFile f("[[camera]]\nname = \"a\"\nsource = \"test\"\nwhip = \"user:s3cret@whip.example.com/x\"\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("camera \"a\""), std::string::npos) << e;
    EXPECT_NE(e.find("http[s]://HOST[:PORT]/PATH"), std::string::npos) << e;
    EXPECT_EQ(e.find("s3cret"), std::string::npos) << "a URL that may hold a password is quoted: " << e;
  }
  {
    TomlFile f("[[camera]]\nname = \"a\"\nsource = \"test\"\nwhip_token = \"tok-9\"\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("whip_token is given without whip"), std::string::npos) << e;
    EXPECT_EQ(e.find("tok-9"), std::string::npos) << "the token is quoted: " << e;
  }
  {
    TomlFile f(
        "[[camera]]\nname = \"a\"\nsource = \"test\"\nwhip = \"http://h/w\"\nwhip_simulcast = \"yes\"\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("whip_simulcast = yes: give \"on\""), std::string::npos) << e;
  }
  {
    TomlFile f("[[camera]]\nname = \"a\"\nsource = \"test\"\nwhip_simulcast = \"on\"\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("whip_simulcast is given without whip"), std::string::npos) << e;
  }
}

TEST(CameraOptions, UnknownKeyNamesTheCameraAndLineEvenWhenTheNameComesLater) {
  TomlFile f("[[camera]]\nsource = \"test\"\nbitrat = 100\nname = \"porch\"\n");
  const std::string e = usageError([&] { readCameraTables(f.path); });
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("camera \"porch\""), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key \"bitrat\""), std::string::npos) << e;
}

TEST(CameraOptions, TableMistakesNameTheCamera) {
  CameraDefaults d;
  {
    TomlFile f("[[camera]]\nname = \"a\"\nname = \"b\"\n");
    EXPECT_NE(usageError([&] { readCameraTables(f.path); }).find("name is given twice"), std::string::npos);
  }
  {
    TomlFile f("[[camera]]\nname = \"a\"\nsource = \"test\" trailing\n");
    EXPECT_NE(usageError([&] { readCameraTables(f.path); }).find("camera \"a\""), std::string::npos);
  }
  {
    TomlFile f("[[camera]]\nname = \"a\"\n");
    const auto t = readCameraTables(f.path);
    EXPECT_NE(usageError([&] { cameraFromTable(t.at(0), d, f.path); }).find("source"), std::string::npos);
  }
  {
    TomlFile f("[[camera]]\nname = \"a\"\nsource = \"test\"\nbitrate = 5\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("camera \"a\""), std::string::npos) << e;
    EXPECT_NE(e.find("line 4"), std::string::npos) << e;
  }
  {
    TomlFile f("[[camera]]\nname = \"a\"\nsource = \"test\"\nthreads = 65\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("threads"), std::string::npos) << e;
    EXPECT_NE(e.find("line 4"), std::string::npos) << e;
  }
  {
    TomlFile f("[[camera]]\nname = \"a\"\nsource = \"test\"\naudio = \"mic\"\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("audio = \"mic\""), std::string::npos) << e;
    EXPECT_NE(e.find("alsa:DEVICE"), std::string::npos) << e;
  }
  {
    // audio = "rtsp" is an IP camera's own sound: refused for another source, taken for an rtsp:// one.
    TomlFile f("[[camera]]\nname = \"a\"\nsource = \"test\"\naudio = \"rtsp\"\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("audio = \"rtsp\" is an IP camera's own sound"), std::string::npos) << e;
    TomlFile ok("[[camera]]\nname = \"a\"\nsource = \"rtsp://10.0.0.5/stream1\"\naudio = \"rtsp\"\n");
    EXPECT_EQ(cameraFromTable(readCameraTables(ok.path).at(0), d, ok.path).audio, "rtsp");
  }
  for (const char* ms : {"15", "30"}) {
    TomlFile f(
        std::string("[[camera]]\nname = \"a\"\nsource = \"test\"\naudio = \"test\"\naudio_frame_ms = ") + ms +
        "\n");
    const auto t = readCameraTables(f.path);
    const std::string e = usageError([&] { cameraFromTable(t.at(0), d, f.path); });
    EXPECT_NE(e.find("audio_frame_ms"), std::string::npos) << e;
    EXPECT_NE(e.find("camera \"a\""), std::string::npos) << e;
  }
  {
    TomlFile f("[[camera]]\nname = \"a b\"\nsource = \"test\"\n");
    const auto t = readCameraTables(f.path);
    EXPECT_NE(usageError([&] { cameraFromTable(t.at(0), d, f.path); }).find("camera \"a b\""), std::string::npos);
  }
}

TEST(CheckCameras, RefusesWhatCannotBeServedNamingTheCamera) {
  EXPECT_NO_THROW(checkCameras({camera("a", "test"), camera("b", "test"), camera("c", "v4l2:/dev/video0")}));
  EXPECT_NE(usageError([] { checkCameras({}); }).find("no camera"), std::string::npos);
  EXPECT_NE(usageError([] { checkCameras({camera("a", "test"), camera("a", "test")}); }).find("two cameras are named \"a\""),
            std::string::npos);
  const std::string twice = usageError([] {
    checkCameras({camera("a", "v4l2:/dev/video3"), camera("b", "v4l2:/dev/../dev/video3")});
  });
  EXPECT_NE(twice.find("camera \"b\""), std::string::npos) << twice;
  EXPECT_NE(twice.find("camera \"a\""), std::string::npos) << twice;
  EXPECT_NE(usageError([] { checkCameras({camera("a", "test", "s"), camera("b", "test", "s")}); }).find("camera \"b\""),
            std::string::npos);
  EXPECT_NE(usageError([] { checkCameras({camera("bad.name", "test")}); }).find("camera \"bad.name\""), std::string::npos);
  EXPECT_FALSE(isValidCameraName(std::string(65, 'a')));
}

TEST(CameraMetrics, EveryFamilyOnceEverySeriesWithItsCamera) {
  PipelineStatus s;
  s.latency.frames = 7;
  std::vector<CameraMetrics> cams{{"front", s, StatsContext{"test", "libx264", "cpu"}, 0},
                                  {"back", std::nullopt, {}, 2}};
  const std::string text = renderMetricsText(cams);
  std::size_t helps = 0;
  for (std::size_t p = 0; (p = text.find("# HELP zerohop_frames_total ", p)) != std::string::npos; ++p) ++helps;
  EXPECT_EQ(helps, 1u);
  EXPECT_NE(text.find("zerohop_frames_total{camera=\"front\"} 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("zerohop_camera_up{camera=\"back\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("zerohop_camera_restarts_total{camera=\"back\"} 2\n"), std::string::npos);
  EXPECT_EQ(text.find("zerohop_frames_total{camera=\"back\"}"), std::string::npos);
  // Every sample line carries the label.
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line[0] != '#') {
      EXPECT_NE(line.find("camera=\""), std::string::npos) << line;
    }
    pos = end + 1;
  }
}

TEST(CameraMetrics, EachRungOfACamerasLadderHasItsSeries) {
  PipelineStatus ladder;
  ladder.renditions.resize(2);
  ladder.renditions[0].size = {320, 240, 600, 1000};
  ladder.renditions[0].viewers = 2;
  ladder.renditions[0].encoderKbps = 900;
  ladder.renditions[0].units = 300;
  ladder.renditions[0].keyframes = 4;
  ladder.renditions[1].size = {160, 120, 100, 600};
  ladder.renditions[1].viewers = 1;
  ladder.renditions[1].encoderKbps = 250;
  ladder.renditions[1].units = 120;
  ladder.renditions[1].keyframes = 3;
  ladder.renditions[1].keyframesForced = 2;
  ladder.renditions[1].switches = 1;
  ladder.vp8Renditions = ladder.renditions;  // the same ladder in VP8 (for VP8 viewers)
  for (RenditionStatus& r : ladder.vp8Renditions) r.codec = Codec::kVP8;
  ladder.vp8Renditions[1].units = 90;
  std::vector<CameraMetrics> cams{{"front", ladder, StatsContext{"test", "libx264", "cpu"}, 0},
                                  {"back", PipelineStatus{}, StatsContext{"test", "libx264", "cpu"}, 0}};
  const std::string text = renderMetricsText(cams);
  for (const char* line :
       {"zerohop_rendition_viewers{camera=\"front\",codec=\"H264\",rung=\"0\",size=\"320x240\"} 2\n",
        "zerohop_rendition_viewers{camera=\"front\",codec=\"H264\",rung=\"1\",size=\"160x120\"} 1\n",
        "zerohop_rendition_bitrate_bits_per_second{camera=\"front\",codec=\"H264\",rung=\"0\",size="
        "\"320x240\"} 900000\n",
        "zerohop_rendition_bitrate_bits_per_second{camera=\"front\",codec=\"H264\",rung=\"1\",size="
        "\"160x120\"} 250000\n",
        "zerohop_rendition_frames_total{camera=\"front\",codec=\"H264\",rung=\"1\",size=\"160x120\"} 120\n",
        "zerohop_rendition_keyframes_total{camera=\"front\",codec=\"H264\",rung=\"1\",size=\"160x120\"} 3\n",
        "zerohop_rendition_keyframes_forced_total{camera=\"front\",codec=\"H264\",rung=\"1\",size="
        "\"160x120\"} 2\n",
        "zerohop_rendition_switches_total{camera=\"front\",codec=\"H264\",rung=\"1\",size=\"160x120\"} 1\n",
        "zerohop_rendition_frames_total{camera=\"front\",codec=\"VP8\",rung=\"1\",size=\"160x120\"} 90\n",
        "# TYPE zerohop_rendition_switches_total counter\n", "# TYPE zerohop_rendition_viewers gauge\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  std::size_t helps = 0;
  for (std::size_t p = 0; (p = text.find("# HELP zerohop_rendition_viewers ", p)) != std::string::npos; ++p) ++helps;
  EXPECT_EQ(helps, 1u);
  EXPECT_EQ(text.find("zerohop_rendition_viewers{camera=\"back\""), std::string::npos) << "a camera without a ladder has no rungs";

  // No camera with a ladder: no rendition family at all.
  const std::string none = renderMetricsText(std::vector<CameraMetrics>{{"back", PipelineStatus{}, {}, 0}});
  EXPECT_EQ(none.find("zerohop_rendition_"), std::string::npos) << none;
}

TEST(CameraMetrics, ACamerasSoundHasItsSeriesAndACameraWithoutNone) {
  AudioMetrics sound;
  sound.running = true;
  sound.blocks = 500;
  sound.overruns = 2;
  sound.queueDrops = 1;
  sound.packets = 250;
  sound.encodeMsPerPacket = 0.5;
  sound.sent = 240;
  sound.sendDropped = 3;
  std::vector<CameraMetrics> cams{{"front", PipelineStatus{}, StatsContext{"test", "libx264", "cpu"}, 0, sound},
                                  {"back", PipelineStatus{}, StatsContext{"test", "libx264", "cpu"}, 0, std::nullopt}};
  const std::string text = renderMetricsText(cams);
  for (const char* line : {"zerohop_audio_running{camera=\"front\"} 1\n", "zerohop_audio_blocks_total{camera=\"front\"} 500\n",
                           "zerohop_audio_overruns_total{camera=\"front\"} 2\n",
                           "zerohop_audio_queue_drops_total{camera=\"front\"} 1\n",
                           "zerohop_audio_packets_total{camera=\"front\"} 250\n",
                           "zerohop_audio_encode_seconds{camera=\"front\"} 0.0005\n",
                           "zerohop_audio_sent_packets_total{camera=\"front\"} 240\n",
                           "zerohop_audio_send_dropped_packets_total{camera=\"front\"} 3\n",
                           "# TYPE zerohop_audio_packets_total counter\n", "# TYPE zerohop_audio_running gauge\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_EQ(text.find("zerohop_audio_running{camera=\"back\"}"), std::string::npos) << "a camera without sound has no audio series";
  // No camera with sound: no audio family at all.
  const std::string none = renderMetricsText(std::vector<CameraMetrics>{{"back", PipelineStatus{}, {}, 0}});
  EXPECT_EQ(none.find("zerohop_audio_"), std::string::npos) << none;
}

}  // namespace
}  // namespace zerohop::cli
