// gstzerohop in real pipelines: zerohopsrc reads `zerohop serve --share` (raw frames whose pixel
// timecodes decode at the camera's rate, the H.264 share decoded, the sound share decoded to the test
// tone), reacts to its publisher going away (eos, error, wait + reattach), and zerohopsink publishes
// what `zerohop tap` reads (pictures) and what zerohopsrc reads back (stereo Opus).
#include <arpa/inet.h>
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "beside_program.hpp"
#include "child_process.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/share.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;

const std::string kCli = zerohop::testing::besideProgram(ZEROHOP_CLI_PATH);

void initGstreamer() {
  static const bool once = [] {
    setenv("GST_REGISTRY", zerohop::testing::besideProgram(ZEROHOP_GST_REGISTRY).c_str(), 1);
#ifdef ZEROHOP_GST_LOAD_PLUGIN_FILE
    gst_init(nullptr, nullptr);
    GError* err = nullptr;
    GstPlugin* plugin = gst_plugin_load_file(
        zerohop::testing::besideProgram(ZEROHOP_GST_PLUGIN_DIR "/libgstzerohop.so").c_str(), &err);
    if (!plugin) {
      ADD_FAILURE() << "gst_plugin_load_file: " << (err ? err->message : "?");
      if (err) g_error_free(err);
      return false;
    }
    gst_object_unref(plugin);  // the registry keeps its own reference
#else
    setenv("GST_PLUGIN_PATH", zerohop::testing::besideProgram(ZEROHOP_GST_PLUGIN_DIR).c_str(),
           1);  // found like any installed plugin
    gst_init(nullptr, nullptr);
#endif
    return true;
  }();
  (void)once;
}

std::unique_ptr<ChildProcess> startServe(const std::string& share) {
  auto serve = std::make_unique<ChildProcess>(std::vector<std::string>{
      kCli, "serve", "--source", "test:640x360@30", "--audio", "test", "--share", share, "--keyint", "30",
      "--gpu", "off", "--listen", "127.0.0.1:" + std::to_string(testing::freePort())});
  if (!serve->waitForStdoutLine("open http://", 20s)) return nullptr;
  return serve;
}

// A pipeline ending in appsink "out", torn down (to NULL) on scope exit.
class Pipeline {
 public:
  explicit Pipeline(const std::string& description) {
    GError* err = nullptr;
    pipeline_ = gst_parse_launch(description.c_str(), &err);
    if (err) {
      error_ = err->message;
      g_error_free(err);
    }
    if (pipeline_) sink_ = gst_bin_get_by_name(GST_BIN(pipeline_), "out");
  }
  ~Pipeline() {
    if (sink_) gst_object_unref(sink_);
    if (pipeline_) {
      gst_element_set_state(pipeline_, GST_STATE_NULL);
      gst_object_unref(pipeline_);
    }
  }
  bool ok() const { return pipeline_ && error_.empty(); }
  const std::string& error() const { return error_; }
  bool play() { return gst_element_set_state(pipeline_, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE; }
  GstElement* element(const char* name) { return gst_bin_get_by_name(GST_BIN(pipeline_), name); }
  GstAppSink* sink() { return GST_APP_SINK(sink_); }
  GstSample* pull(std::chrono::milliseconds timeout) {
    return gst_app_sink_try_pull_sample(sink(), static_cast<GstClockTime>(timeout.count()) * GST_MSECOND);
  }
  // The first error message on the bus within `timeout`, or "" if none.
  std::string waitError(std::chrono::milliseconds timeout) {
    GstBus* bus = gst_element_get_bus(pipeline_);
    GstMessage* m = gst_bus_timed_pop_filtered(bus, static_cast<GstClockTime>(timeout.count()) * GST_MSECOND,
                                               GST_MESSAGE_ERROR);
    gst_object_unref(bus);
    if (!m) return "";
    GError* err = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(m, &err, &debug);
    std::string text = std::string(err->message) + " (" + (debug ? debug : "") + ")";
    g_error_free(err);
    g_free(debug);
    gst_message_unref(m);
    return text;
  }

 private:
  GstElement* pipeline_ = nullptr;
  GstElement* sink_ = nullptr;
  std::string error_;
};

// The channel count on `element`'s src pad now (0 without caps).
int padChannels(Pipeline& p, const char* element) {
  GstElement* e = p.element(element);
  GstPad* pad = gst_element_get_static_pad(e, "src");
  GstCaps* caps = gst_pad_get_current_caps(pad);
  int channels = 0;
  if (caps) gst_structure_get_int(gst_caps_get_structure(caps, 0), "channels", &channels);
  if (caps) gst_caps_unref(caps);
  gst_object_unref(pad);
  gst_object_unref(e);
  return channels;
}

// What an appsink of S16LE mono 48 kHz sound received: its samples and their buffers' timestamps.
struct Sound {
  std::vector<std::int16_t> samples;
  std::vector<GstClockTime> pts;
  double rms() const {
    double sum = 0;
    for (const auto v : samples) sum += static_cast<double>(v) * v;
    return samples.empty() ? 0 : std::sqrt(sum / static_cast<double>(samples.size()));
  }
  // The sine's frequency from the median gap between its upward zero crossings. A count of crossings
  // would not do: each marker click (2 ms of 4 kHz, once a second) rings through Opus into some 40
  // crossings, and two clicks in a 2 s window read as 477 Hz.
  double frequencyHz() const {
    std::vector<std::size_t> gaps;
    std::size_t last = 0;
    for (std::size_t i = 1; i < samples.size(); ++i) {
      if (samples[i - 1] < 0 && samples[i] >= 0) {
        if (last != 0) gaps.push_back(i - last);
        last = i;
      }
    }
    if (gaps.empty()) return 0;
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    return 48000.0 / static_cast<double>(gaps[gaps.size() / 2]);
  }
};

Sound pullSound(Pipeline& p) {
  Sound sound;
  while (GstSample* s = p.pull(5s)) {
    GstBuffer* buf = gst_sample_get_buffer(s);
    sound.pts.push_back(GST_BUFFER_PTS(buf));
    GstMapInfo map;
    if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
      const auto* v = reinterpret_cast<const std::int16_t*>(map.data);
      sound.samples.insert(sound.samples.end(), v, v + map.size / sizeof(std::int16_t));
      gst_buffer_unmap(buf, &map);
    }
    gst_sample_unref(s);
  }
  return sound;
}

guint64 uint64Property(Pipeline& p, const char* element, const char* property) {
  GstElement* e = p.element(element);
  guint64 v = 0;
  g_object_get(e, property, &v, nullptr);
  gst_object_unref(e);
  return v;
}

struct Decoded {
  std::optional<Timecode> tc;
  GstClockTime pts = GST_CLOCK_TIME_NONE;
};

// Reads the timecode of an I420 sample.
Decoded decode(GstSample* sample) {
  Decoded d;
  GstBuffer* buf = gst_sample_get_buffer(sample);
  d.pts = GST_BUFFER_PTS(buf);
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample))) return d;
  GstVideoFrame vf;
  if (!gst_video_frame_map(&vf, &info, buf, GST_MAP_READ)) return d;
  Frame f;
  f.format = PixelFormat::kI420;
  f.width = GST_VIDEO_FRAME_WIDTH(&vf);
  f.height = GST_VIDEO_FRAME_HEIGHT(&vf);
  f.planeCount = 3;
  for (guint p = 0; p < 3; ++p) {
    f.data[p] = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&vf, p));
    f.pitch[p] = static_cast<std::uint32_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&vf, p));
  }
  d.tc = readTimecode(f);
  gst_video_frame_unmap(&vf);
  return d;
}

class ZerohopSrcFromServe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    initGstreamer();
    share_ = "gst" + std::to_string(getpid());
    serve_ = startServe(share_);
  }
  static void TearDownTestSuite() { serve_.reset(); }
  void SetUp() override { ASSERT_TRUE(serve_) << "zerohop serve did not start"; }

  static inline std::unique_ptr<ChildProcess> serve_;
  static inline std::string share_;
};

TEST_F(ZerohopSrcFromServe, NinetyFramesWhoseTimecodesDecodeAtTheSourceRate) {
  Pipeline p("zerohopsrc name=src share=" + share_ +
             " num-buffers=90 ! videoconvert ! video/x-raw,format=I420 ! appsink name=out sync=false");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  std::vector<Decoded> frames;
  bool queriedLatency = false;
  while (GstSample* s = p.pull(5s)) {
    frames.push_back(decode(s));
    gst_sample_unref(s);
    if (frames.size() == 30 && !queriedLatency) {  // the latency query answers the measured delay
      queriedLatency = true;
      GstElement* src = p.element("src");
      GstQuery* q = gst_query_new_latency();
      ASSERT_TRUE(gst_element_query(src, q));
      gboolean live = FALSE;
      GstClockTime min = 0, max = 0;
      gst_query_parse_latency(q, &live, &min, &max);
      gst_query_unref(q);
      gst_object_unref(src);
      EXPECT_TRUE(live);
      EXPECT_GT(min, 0u);
      EXPECT_LT(min, 500 * GST_MSECOND);
      EXPECT_GE(max, min);
    }
  }
  EXPECT_TRUE(gst_app_sink_is_eos(p.sink())) << "no EOS after num-buffers";
  ASSERT_EQ(frames.size(), 90u);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    ASSERT_TRUE(frames[i].tc) << "frame " << i << ": no timecode in the pixels";
    ASSERT_TRUE(GST_CLOCK_TIME_IS_VALID(frames[i].pts)) << "frame " << i;
    if (i > 0) {
      EXPECT_GT(frames[i].tc->sequence, frames[i - 1].tc->sequence) << "frame " << i;
      EXPECT_GT(frames[i].pts, frames[i - 1].pts) << "frame " << i;
    }
  }
  // 30 fps: the capture clock in the pixels and the buffer timestamps both advance 33.3 ms a frame.
  const double tcPeriodMs =
      static_cast<double>(frames.back().tc->wallClockMs - frames.front().tc->wallClockMs) / 89.0;
  const double ptsPeriodMs = static_cast<double>(frames.back().pts - frames.front().pts) / 1e6 / 89.0;
  const auto seqSpan = frames.back().tc->sequence - frames.front().tc->sequence;
  EXPECT_NEAR(tcPeriodMs * 89.0 / seqSpan, 33.3, 2.0) << "capture period per source frame";
  EXPECT_NEAR(ptsPeriodMs, tcPeriodMs, 1.0) << "PTS follow the capture times";
  EXPECT_LE(seqSpan, 95u) << "more than 5 frames of the 90 were missed";
  EXPECT_EQ(uint64Property(p, "src", "frames"), 90u);
  EXPECT_EQ(uint64Property(p, "src", "copies"), 0u) << "videoconvert takes GstVideoMeta: nothing to copy";
}

TEST_F(ZerohopSrcFromServe, TheH264ShareDecodes) {
  const char* decoder = nullptr;
  for (const char* name : {"avdec_h264", "openh264dec"}) {
    if (GstElementFactory* f = gst_element_factory_find(name)) {
      gst_object_unref(f);
      decoder = name;
      break;
    }
  }
  if (!decoder) GTEST_SKIP() << "no H.264 decoder element (gstreamer1.0-libav or the openh264 plugin)";
  Pipeline p("zerohopsrc share=" + share_ + ".h264 num-buffers=90 ! h264parse ! " + decoder +
             " ! videoconvert ! video/x-raw,format=I420 ! appsink name=out sync=false");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  std::size_t decoded = 0, withTimecode = 0;
  while (GstSample* s = p.pull(5s)) {
    ++decoded;
    if (decode(s).tc) ++withTimecode;
    gst_sample_unref(s);
  }
  EXPECT_TRUE(gst_app_sink_is_eos(p.sink()));
  // Decoding starts at the first keyframe (one a second with --keyint 30): at least 2 s of the 3.
  EXPECT_GE(decoded, 60u) << decoder;
  EXPECT_EQ(withTimecode, decoded) << "decoded pictures whose timecode did not read";
}

TEST_F(ZerohopSrcFromServe, TheSoundShareDecodesToTheTestTone) {
  // serve --audio test: a 440 Hz sine at a quarter of full scale (RMS ~5,800), mono, in 10 ms packets
  // (serve's default --audio-frame-ms).
  Pipeline p(
      "zerohopsrc name=src share=" + share_ +
      ".opus num-buffers=100 ! opusdec ! audioconvert ! audio/x-raw,format=S16LE,channels=1,rate=48000 ! "
      "appsink name=out sync=false");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  const Sound sound = pullSound(p);
  EXPECT_TRUE(gst_app_sink_is_eos(p.sink())) << "no EOS after num-buffers";
  EXPECT_EQ(padChannels(p, "src"), 1) << "the caps should say what the packets' TOC says: mono";
  EXPECT_EQ(uint64Property(p, "src", "frames"), 100u);
  EXPECT_GE(sound.samples.size(), 100u * 480 * 9 / 10) << "100 packets of 10 ms";
  EXPECT_NEAR(sound.rms(), 5800, 1500);
  EXPECT_NEAR(sound.frequencyHz(), 440, 15);
  for (std::size_t i = 1; i < sound.pts.size(); ++i) {
    ASSERT_TRUE(GST_CLOCK_TIME_IS_VALID(sound.pts[i])) << "buffer " << i;
    EXPECT_GT(sound.pts[i], sound.pts[i - 1]) << "buffer " << i;
  }
}

TEST(ZerohopSrc, PublisherKilledMidStreamGivesEos) {
  initGstreamer();
  const std::string share = "gstkill" + std::to_string(getpid());
  auto serve = startServe(share);
  ASSERT_TRUE(serve) << "zerohop serve did not start";
  Pipeline p("zerohopsrc share=" + share + " on-publisher-gone=eos ! appsink name=out sync=false");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  for (int i = 0; i < 10; ++i) {
    GstSample* s = p.pull(5s);
    ASSERT_NE(s, nullptr) << "frame " << i;
    gst_sample_unref(s);
  }
  serve->signal(SIGKILL);
  ASSERT_TRUE(serve->waitExit(5s).has_value());
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!gst_app_sink_is_eos(p.sink()) && std::chrono::steady_clock::now() < deadline) {
    if (GstSample* s = p.pull(200ms)) gst_sample_unref(s);  // frames still in flight
  }
  EXPECT_TRUE(gst_app_sink_is_eos(p.sink())) << "no EOS within 5 s of the publisher's death";
  EXPECT_EQ(p.waitError(0ms), "");
}

// An in-process publisher of small I420 frames at ~100 fps, started and stopped at will.
class PacedPublisher {
 public:
  explicit PacedPublisher(std::string name) : name_(std::move(name)) {}
  ~PacedPublisher() { stop(); }
  void start() {
    publisher_ = std::make_unique<Publisher>(
        name_, SlotLayout::images(computeLayout(PixelFormat::kI420, 320, 240), 4));
    running_ = true;
    thread_ = std::thread([this] {
      std::vector<std::uint8_t> pixels(computeLayout(PixelFormat::kI420, 320, 240).totalBytes, 128);
      Frame f;
      bindLayout(f, computeLayout(PixelFormat::kI420, 320, 240), pixels.data(), MemoryKind::kHost);
      f.format = PixelFormat::kI420;
      f.width = 320;
      f.height = 240;
      while (running_) {
        f.times.mark(Stage::kCapture, monotonicNs());
        ++f.sequence;
        publisher_->publish(f);
        std::this_thread::sleep_for(10ms);
      }
    });
  }
  ShareStats stats() const { return publisher_->stats(); }
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
    publisher_.reset();  // readers see "publisher went away"
  }

 private:
  std::string name_;
  std::unique_ptr<Publisher> publisher_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

TEST(ZerohopSrc, PublisherGoneIsAnErrorByDefault) {
  initGstreamer();
  const std::string share = "gsterr" + std::to_string(getpid());
  PacedPublisher pub(share);
  pub.start();
  Pipeline p("zerohopsrc share=" + share + " ! appsink name=out sync=false");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  GstSample* s = p.pull(5s);
  ASSERT_NE(s, nullptr);
  gst_sample_unref(s);
  pub.stop();
  const std::string error = p.waitError(5s);
  EXPECT_NE(error.find("went away"), std::string::npos) << "error: '" << error << "'";
}

// open-timeout: the element's start waits for a share not yet published (without it, start fails).
TEST(ZerohopSrc, OpenTimeoutWaitsForAShareNotYetPublished) {
  initGstreamer();
  const std::string share = "gstopen" + std::to_string(getpid());
  PacedPublisher pub(share);
  Pipeline p("zerohopsrc name=src open-timeout=20000 share=" + share + " ! appsink name=out sync=false");
  ASSERT_TRUE(p.ok()) << p.error();
  std::thread later([&] {
    std::this_thread::sleep_for(300ms);  // the publisher's late start is what is tested
    pub.start();
  });
  const bool playing = p.play();  // start() runs in this state change and waits for the share
  later.join();
  ASSERT_TRUE(playing) << p.waitError(0ms);
  GstSample* s = p.pull(10s);
  ASSERT_NE(s, nullptr) << "no frame after the share appeared: " << p.waitError(0ms);
  gst_sample_unref(s);
  EXPECT_EQ(p.waitError(0ms), "");
}

TEST(ZerohopSrc, WaitReattachesWhenThePublisherReturns) {
  initGstreamer();
  const std::string share = "gstwait" + std::to_string(getpid());
  PacedPublisher pub(share);
  pub.start();
  Pipeline p("zerohopsrc name=src share=" + share +
             " on-publisher-gone=wait reconnect-interval=50 ! appsink name=out sync=false");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  for (int i = 0; i < 5; ++i) {
    GstSample* s = p.pull(5s);
    ASSERT_NE(s, nullptr) << "frame " << i;
    gst_sample_unref(s);
  }
  pub.stop();
  while (GstSample* s = p.pull(300ms)) gst_sample_unref(s);  // drain what was queued
  EXPECT_FALSE(gst_app_sink_is_eos(p.sink()));
  pub.start();
  int after = 0;
  for (; after < 5; ++after) {
    GstSample* s = p.pull(5s);
    if (!s) break;
    gst_sample_unref(s);
  }
  EXPECT_EQ(after, 5) << "no frames after the publisher returned";
  EXPECT_EQ(uint64Property(p, "src", "reconnects"), 1u);
  EXPECT_EQ(p.waitError(0ms), "");
}

// Zero-copy: the buffer is the ring slot (read-only memory + GstVideoMeta) and holds the frame's
// lease exactly as long as it lives.
TEST(ZerohopSrc, ABufferWrapsTheSlotAndHoldsItsLeaseUntilFreed) {
  initGstreamer();
  const std::string share = "gstlease" + std::to_string(getpid());
  PacedPublisher pub(share);
  pub.start();
  auto p = std::make_unique<Pipeline>("zerohopsrc share=" + share +
                                      " ! appsink name=out sync=false max-buffers=1 drop=true");
  ASSERT_TRUE(p->ok()) << p->error();
  ASSERT_TRUE(p->play());
  GstSample* held = p->pull(5s);
  ASSERT_NE(held, nullptr);
  GstBuffer* buf = gst_sample_get_buffer(held);
  ASSERT_EQ(gst_buffer_n_memory(buf), 1u);
  EXPECT_TRUE(GST_MEMORY_IS_READONLY(gst_buffer_peek_memory(buf, 0))) << "the ring is mapped read-only";
  const GstVideoMeta* meta = gst_buffer_get_video_meta(buf);
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(meta->n_planes, 3u);
  EXPECT_EQ(meta->stride[0], 320);
  EXPECT_EQ(meta->offset[1], 320u * 240u);
  EXPECT_GE(pub.stats().leasedSlots, 1u) << "a held buffer holds its lease";
  p.reset();  // pipeline to NULL: every buffer but `held` is gone
  EXPECT_EQ(pub.stats().leasedSlots, 1u) << "only the held buffer still leases a slot";
  gst_sample_unref(held);
  EXPECT_EQ(pub.stats().leasedSlots, 0u) << "freeing the buffer released the lease";
}

// A buffer held past the share's lease timeout (1 s) loses its slot to the publisher; freeing it
// counts the overrun.
TEST(ZerohopSrc, ABufferHeldPastItsLeaseCountsAnOverrunWhenFreed) {
  initGstreamer();
  const std::string share = "gstover" + std::to_string(getpid());
  PacedPublisher pub(share);
  pub.start();
  Pipeline p("zerohopsrc name=src share=" + share + " ! appsink name=out sync=false max-buffers=1 drop=true");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  GstSample* held = p.pull(5s);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(uint64Property(p, "src", "overruns"), 0u);
  // The lease expires after the share's lease timeout (1 s: a time by definition, so waited as time),
  // then the publisher (4 slots) must write every slot again: that is waited for on its own counter
  // (a slow publisher on a busy box takes longer; the old fixed 1.3 s did not wait for it).
  std::this_thread::sleep_for(1100ms);
  const auto expiredAt = pub.stats().publishes;
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       pub.stats().publishes < expiredAt + 8 && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(20ms);
  ASSERT_GE(pub.stats().publishes, expiredAt + 8) << "the publisher stopped publishing";
  gst_sample_unref(held);
  // The counter reaches the property with the next frame the element reads.
  guint64 overruns = 0;
  for (auto deadline = std::chrono::steady_clock::now() + 3s;
       overruns == 0 && std::chrono::steady_clock::now() < deadline;) {
    if (GstSample* s = p.pull(100ms)) gst_sample_unref(s);
    overruns = uint64Property(p, "src", "overruns");
  }
  EXPECT_GE(overruns, 1u);
}

// A pipeline that stalls downstream (100 ms a buffer) never slows the publisher (~100 fps); what it
// missed is counted in `drops`.
TEST(ZerohopSrc, AStalledPipelineNeverSlowsThePublisher) {
  initGstreamer();
  const std::string share = "gststall" + std::to_string(getpid());
  PacedPublisher pub(share);
  pub.start();
  Pipeline p("zerohopsrc name=src share=" + share +
             " ! identity sleep-time=100000 ! appsink name=out sync=false");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  GstSample* first = p.pull(5s);
  ASSERT_NE(first, nullptr);
  gst_sample_unref(first);
  const auto published0 = pub.stats().publishes;
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(1s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double publishRate = static_cast<double>(pub.stats().publishes - published0) / seconds;
  // A publisher held back by the pipeline would publish at its 10 buffers a second; paced alone it
  // publishes ~100. Three times the pipeline's rate tells the two apart also when a sanitizer on a busy
  // 2-core box slows the publisher's own loop (a bound of 60 was flaky there).
  EXPECT_GT(publishRate, 30.0) << "the publisher slowed down with the pipeline";
  EXPECT_LT(uint64Property(p, "src", "frames"), 20u) << "the pipeline did not stall";
  EXPECT_GT(uint64Property(p, "src", "drops"), 15u) << "missed frames are not counted";
}

TEST(ZerohopSink, VideotestsrcIsReadByZerohopTap) {
  initGstreamer();
  const std::string share = "gstsink" + std::to_string(getpid());
  Pipeline p(
      "videotestsrc is-live=true ! video/x-raw,format=I420,width=640,height=360,framerate=30/1 ! "
      "zerohopsink name=out share=" +
      share);
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.play());
  // The share exists once caps arrived: wait (bounded) for the first publish.
  GstElement* sink = p.element("out");
  guint64 published = 0;
  for (auto deadline = std::chrono::steady_clock::now() + 5s;
       published == 0 && std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms)) {
    g_object_get(sink, "published", &published, nullptr);
  }
  gst_object_unref(sink);
  ASSERT_GT(published, 0u) << "zerohopsink published nothing within 5 s: " << p.waitError(0ms);
  ChildProcess tap({kCli, "tap", share, "--count", "10", "--timeout", "5"});
  const auto code = tap.waitExit(15s);
  ASSERT_TRUE(code.has_value()) << "tap did not finish";
  EXPECT_EQ(*code, 0) << tap.stderrText();
  const std::string& out = tap.stdoutText();
  std::size_t lines = 0;
  for (std::size_t at = out.find("i420  640x360"); at != std::string::npos;
       at = out.find("i420  640x360", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 10u) << out;
  EXPECT_NE(tap.stderrText().find("10 frames, 0 missed"), std::string::npos) << tap.stderrText();
}

TEST(ZerohopSink, StereoOpusIsReadBackByZerohopsrc) {
  initGstreamer();
  const std::string share = "gstopus" + std::to_string(getpid());
  Pipeline in(
      "audiotestsrc is-live=true freq=440 volume=0.25 ! audio/x-raw,rate=48000,channels=2 ! opusenc ! "
      "zerohopsink name=out share=" +
      share);
  ASSERT_TRUE(in.ok()) << in.error();
  ASSERT_TRUE(in.play());
  Pipeline outPipe(
      "zerohopsrc name=src open-timeout=5000 share=" + share +
      " num-buffers=50 ! opusdec ! audioconvert ! audio/x-raw,format=S16LE,channels=2,rate=48000 ! "
      "appsink name=out sync=false");
  ASSERT_TRUE(outPipe.ok()) << outPipe.error();
  ASSERT_TRUE(outPipe.play());
  const Sound both = pullSound(outPipe);
  Sound right;  // the interleaved samples' odd ones
  for (std::size_t i = 1; i < both.samples.size(); i += 2) right.samples.push_back(both.samples[i]);
  EXPECT_EQ(padChannels(outPipe, "src"), 2) << "stereo packets: the caps should say 2 channels";
  EXPECT_GE(right.samples.size(), 50u * 960 * 9 / 10) << "50 packets of 20 ms";
  EXPECT_NEAR(right.frequencyHz(), 440, 30) << "the right channel";
  EXPECT_GT(right.rms(), 2000);
}

// The ring of a sound share does not carry a channel count: after a reattach the caps are set again from
// the next packet's TOC, so a publisher that comes back in stereo is read as stereo.
TEST(ZerohopSink, ASoundShareThatComesBackInStereoIsReattachedWithStereoCaps) {
  initGstreamer();
  const std::string share = "gstopusre" + std::to_string(getpid());
  auto publish = [&](int channels) {
    auto in = std::make_unique<Pipeline>(
        "audiotestsrc is-live=true freq=440 volume=0.25 ! audio/x-raw,rate=48000,channels=" +
        std::to_string(channels) + " ! opusenc ! zerohopsink name=out share=" + share);
    EXPECT_TRUE(in->ok()) << in->error();
    EXPECT_TRUE(in->play());
    return in;
  };
  // Each sample's caps' channel count, for `count` samples (0 for a sample that did not come).
  auto channelsOf = [](Pipeline& p, int count) {
    std::vector<int> channels;
    for (int i = 0; i < count; ++i) {
      GstSample* s = p.pull(5s);
      int n = 0;
      if (s && gst_sample_get_caps(s))
        gst_structure_get_int(gst_caps_get_structure(gst_sample_get_caps(s), 0), "channels", &n);
      channels.push_back(n);
      if (s) gst_sample_unref(s);
    }
    return channels;
  };
  auto mono = publish(1);
  Pipeline reader(
      "zerohopsrc name=src share=" + share +
      " open-timeout=5000 on-publisher-gone=wait reconnect-interval=50 ! appsink name=out sync=false");
  ASSERT_TRUE(reader.ok()) << reader.error();
  ASSERT_TRUE(reader.play());
  EXPECT_EQ(channelsOf(reader, 10), std::vector<int>(10, 1)) << "the mono publisher's packets";
  mono.reset();                                                   // the publisher goes away
  while (GstSample* s = reader.pull(300ms)) gst_sample_unref(s);  // drain what was queued
  auto stereo = publish(2);
  EXPECT_EQ(channelsOf(reader, 10), std::vector<int>(10, 2))
      << "the stereo publisher's packets, after the reattach";
  EXPECT_EQ(uint64Property(reader, "src", "reconnects"), 1u);
  EXPECT_EQ(reader.waitError(0ms), "");
}

}  // namespace
}  // namespace zerohop
