// zerohop_interop_bench: publish -> frame in the reader's hands, for the ways in through the GStreamer
// element and the FFmpeg wrapper, next to zerohop::Subscriber, on one host share in one run (docs/benchmarks.md, "Pipelines"):
//   subscriber  Subscriber::next() returned (the reference)
//   gstreamer   `zerohopsrc share=NAME ! appsink sync=false`: the appsink's new-sample callback ran
//   ffmpeg      Subscriber::next() + zerohop::wrapAsAVFrame() returned
// One publisher thread commits a frame in place every 1/fps s, stamping its capture time just before
// the commit; each path's latency is (time the frame reached the reader) - (that stamp). The paths run
// one at a time, in an order rotated every round, so each sees the same machine.
//
// Zero-copy is checked, not assumed: every appsink buffer's mapped pointer and every AVFrame's
// data[0] must lie inside a read-only mapping of this share's slots memfd (/proc/self/maps,
// "memfd:zerohop-slots-NAME", r--s: a reader's mapping, not the publisher's), and zerohopsrc's
// `copies` counter must stay 0. Any frame outside the mapping is reported and makes the exit status 1.
//
//   zerohop_interop_bench [--frames N] [--rounds R] [--fps F] [--size WxH]
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <unistd.h>

extern "C" {
#include <libavutil/frame.h>
}

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/ffmpeg.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

using namespace zerohop;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kStampSlots = 1 << 16;
constexpr int kWarmup = 10;  // frames each path reads before it measures

struct Options {
  int frames = 500;
  int rounds = 5;
  int fps = 100;
  std::uint32_t width = 1920, height = 1080;
};

// The publisher: commits a frame in place every period, its capture time stamped right before.
class PacedPublisher {
 public:
  PacedPublisher(const std::string& name, const ImageLayout& layout, int fps)
      : pub_(name, SlotLayout::images(layout, 8)), period_(1'000'000'000 / fps) {}
  ~PacedPublisher() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void start() {
    thread_ = std::thread([this] { run(); });
  }
  std::int64_t captureOf(std::uint64_t sequence) const {
    return stamps_[sequence % kStampSlots].load(std::memory_order_acquire);
  }
  const Publisher& publisher() const { return pub_; }

 private:
  void run() {
    std::int64_t next = monotonicNs();
    for (std::uint64_t seq = 1; !stop_; ++seq) {
      next += period_;
      if (const std::int64_t left = next - monotonicNs(); left > 0)
        std::this_thread::sleep_for(std::chrono::nanoseconds(left));  // the stamp is taken after waking
      WriteSlot slot = pub_.acquireWrite();
      Frame meta = slot.frame();
      meta.data[0][0] = static_cast<std::uint8_t>(seq);  // the writer touches the slot, as a producer would
      meta.sequence = seq;
      const std::int64_t t = monotonicNs();
      stamps_[seq % kStampSlots].store(t, std::memory_order_release);
      meta.times.mark(Stage::kCapture, t);
      pub_.commit(std::move(slot), meta);
    }
  }
  Publisher pub_;
  std::int64_t period_;
  std::array<std::atomic<std::int64_t>, kStampSlots> stamps_{};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The reader-side mappings of the share's slots (r--s "memfd:zerohop-slots-NAME"), from /proc/self/maps.
struct SlotMappings {
  std::string name;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  void refresh() {
    ranges.clear();
    std::ifstream maps("/proc/self/maps");
    const std::string tag = "memfd:zerohop-slots-" + name + " ";
    for (std::string line; std::getline(maps, line);) {
      if (line.find(tag) == std::string::npos && !line.ends_with("memfd:zerohop-slots-" + name)) continue;
      std::uintptr_t lo = 0, hi = 0;
      char perms[5] = {};
      if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
      if (std::string(perms) == "r--s") ranges.emplace_back(lo, hi);
    }
  }
  bool contains(const void* p, std::size_t bytes) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      const auto a = reinterpret_cast<std::uintptr_t>(p);
      for (const auto& [lo, hi] : ranges)
        if (a >= lo && a + bytes <= hi) return true;
      refresh();  // a new subscription maps the slots again
    }
    return false;
  }
};

struct Samples {
  std::vector<std::int64_t> ns;
  std::vector<std::int64_t> pushedNs;  // gstreamer path: when zerohopsrc pushed the buffer (src pad probe)
  std::uint64_t outsideMapping = 0;  // frames whose pixels were not in the share's mapping (copied)
  std::uint64_t copiesCounted = 0;   // zerohopsrc's own `copies` counter
};

double pct(std::vector<std::int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]);
}

void runSubscriber(const std::string& name, PacedPublisher& pub, int frames, Samples& out) {
  Subscriber sub(name);
  for (int got = 0; got < frames + kWarmup;) {
    auto f = sub.next(1s);
    if (!f) throw Error(Errc::kTimeout, "subscriber: no frame within 1 s");
    const std::int64_t t = monotonicNs();
    if (got++ >= kWarmup) out.ns.push_back(t - pub.captureOf(f->frame().sequence));
  }
}

void runFfmpeg(const std::string& name, PacedPublisher& pub, int frames, Samples& out, SlotMappings& maps) {
  Subscriber sub(name);
  for (int got = 0; got < frames + kWarmup;) {
    auto f = sub.next(1s);
    if (!f) throw Error(Errc::kTimeout, "ffmpeg path: no frame within 1 s");
    const std::uint64_t seq = f->frame().sequence;
    const std::uint8_t* slot = f->frame().data[0];
    const std::size_t bytes = static_cast<std::size_t>(f->frame().pitch[0]) * f->frame().height;
    AVFramePtr av = wrapAsAVFrame(std::move(*f));
    const std::int64_t t = monotonicNs();
    if (got++ < kWarmup) continue;
    out.ns.push_back(t - pub.captureOf(seq));
    if (av->data[0] != slot || !maps.contains(av->data[0], bytes)) ++out.outsideMapping;
  }
}

struct GstRun {
  PacedPublisher* pub = nullptr;
  SlotMappings* maps = nullptr;
  Samples* out = nullptr;
  int want = 0;
  int got = 0;
  std::mutex lock;
  std::condition_variable done;
};

// zerohopsrc's src pad: the buffer leaves the element (before appsink), for the breakdown.
GstPadProbeReturn onPush(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto& run = *static_cast<GstRun*>(data);
  const std::int64_t t = monotonicNs();
  GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
  std::lock_guard g(run.lock);
  if (run.got >= kWarmup && run.got < run.want + kWarmup)
    run.out->pushedNs.push_back(t - run.pub->captureOf(GST_BUFFER_OFFSET(buf)));
  return GST_PAD_PROBE_OK;
}

GstFlowReturn onSample(GstAppSink* sink, gpointer data) {
  auto& run = *static_cast<GstRun*>(data);
  GstSample* sample = gst_app_sink_pull_sample(sink);
  const std::int64_t t = monotonicNs();
  if (!sample) return GST_FLOW_ERROR;
  GstBuffer* buf = gst_sample_get_buffer(sample);
  std::lock_guard g(run.lock);
  if (run.got < run.want + kWarmup && run.got++ >= kWarmup) {
    run.out->ns.push_back(t - run.pub->captureOf(GST_BUFFER_OFFSET(buf)));
    GstMapInfo map;
    if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
      if (!run.maps->contains(map.data, map.size)) ++run.out->outsideMapping;
      gst_buffer_unmap(buf, &map);
    } else {
      ++run.out->outsideMapping;
    }
    if (run.got == run.want + kWarmup) run.done.notify_all();
  }
  gst_sample_unref(sample);
  return GST_FLOW_OK;
}

void runGstreamer(const std::string& name, PacedPublisher& pub, int frames, Samples& out, SlotMappings& maps) {
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      ("zerohopsrc name=src share=" + name + " ! appsink name=out sync=false max-buffers=4 drop=true").c_str(), &err);
  if (err) {
    std::string why = err->message;
    g_error_free(err);
    if (pipeline) gst_object_unref(pipeline);
    throw Error(Errc::kUnavailable, "gst_parse_launch: " + why + " (is GST_PLUGIN_PATH at build/lib/gstreamer-1.0?)");
  }
  GstRun run;
  run.pub = &pub;
  run.maps = &maps;
  run.out = &out;
  run.want = frames;
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  GstAppSinkCallbacks callbacks{};
  callbacks.new_sample = onSample;
  gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, &run, nullptr);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstPad* srcPad = gst_element_get_static_pad(src, "src");
  gst_pad_add_probe(srcPad, GST_PAD_PROBE_TYPE_BUFFER, onPush, &run, nullptr);
  gst_object_unref(srcPad);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  bool finished;
  {
    std::unique_lock g(run.lock);
    finished = run.done.wait_for(g, std::chrono::milliseconds(frames * 100 + 10000),
                                 [&] { return run.got >= run.want + kWarmup; });
  }
  guint64 copies = 0;
  g_object_get(src, "copies", &copies, nullptr);
  out.copiesCounted += copies;
  gst_object_unref(src);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  if (!finished) throw Error(Errc::kTimeout, "gstreamer path: frames stopped arriving (see GST_DEBUG=zerohopsrc:5)");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--frames") o.frames = std::max(10, std::atoi(argv[i + 1]));
    else if (k == "--rounds") o.rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--fps") o.fps = std::clamp(std::atoi(argv[i + 1]), 1, 1000);
    else if (k == "--size") {
      if (std::sscanf(argv[i + 1], "%ux%u", &o.width, &o.height) != 2) throw Error(Errc::kInvalidArgument, "--size WxH");
    } else {
      throw Error(Errc::kInvalidArgument, "unknown option " + k +
                                              " (options: --frames N --rounds R --fps F --size WxH)");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  log::setLevel(log::Level::kWarn);
  if (!std::getenv("GST_PLUGIN_PATH")) setenv("GST_PLUGIN_PATH", ZEROHOP_GST_PLUGIN_DIR, 1);
  gst_init(&argc, &argv);

  const std::string name = "interopbench" + std::to_string(getpid());
  PacedPublisher pub(name, computeLayout(PixelFormat::kNV12, o.width, o.height), o.fps);
  pub.start();
  SlotMappings maps{name, {}};

  enum Path { kSubscriber, kGstreamer, kFfmpeg, kPaths };
  const char* names[kPaths] = {"zerohop::Subscriber::next", "zerohopsrc ! appsink (new-sample)",
                               "Subscriber::next + wrapAsAVFrame"};
  std::array<Samples, kPaths> samples;
  for (int r = 0; r < o.rounds; ++r) {
    for (int k = 0; k < kPaths; ++k) {
      const int path = (r + k) % kPaths;
      if (path == kSubscriber) runSubscriber(name, pub, o.frames, samples[path]);
      if (path == kGstreamer) runGstreamer(name, pub, o.frames, samples[path], maps);
      if (path == kFfmpeg) runFfmpeg(name, pub, o.frames, samples[path], maps);
    }
  }

  std::printf("publish (in-place commit) -> frame in the reader, host share, %ux%u NV12, %d fps, %d frames x %d "
              "rounds per path\n",
              o.width, o.height, o.fps, o.frames, o.rounds);
  std::printf("| path | p50 us | p99 us | p50 ratio | p99 ratio | frames outside the share's mapping | copies |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  const double ref50 = pct(samples[kSubscriber].ns, 0.5), ref99 = pct(samples[kSubscriber].ns, 0.99);
  bool copied = false;
  for (int p = 0; p < kPaths; ++p) {
    const double p50 = pct(samples[p].ns, 0.5), p99 = pct(samples[p].ns, 0.99);
    const bool checked = p != kSubscriber;
    std::printf("| %s | %.1f | %.1f | %.2fx | %.2fx | %s | %s |\n", names[p], p50 / 1e3, p99 / 1e3, p50 / ref50,
                p99 / ref99, checked ? std::to_string(samples[p].outsideMapping).c_str() : "-",
                p == kGstreamer ? std::to_string(samples[p].copiesCounted).c_str() : "-");
    copied = copied || samples[p].outsideMapping > 0 || samples[p].copiesCounted > 0;
  }
  std::printf("gstreamer path: the buffer left zerohopsrc at p50 %.1f us, p99 %.1f us after the commit\n",
              pct(samples[kGstreamer].pushedNs, 0.5) / 1e3, pct(samples[kGstreamer].pushedNs, 0.99) / 1e3);
  std::printf("%s\n", copied ? "COPIED: some frames did not point into the share's slots"
                             : "zero-copy held: every checked frame pointed into the share's read-only slot mapping "
                               "(0 bytes copied)");
  return copied ? 1 : 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "zerohop_interop_bench: %s\n", e.what());
  return 2;
}
