#include "hostile_viewer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>

namespace zerohop::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::int64_t realtimeMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void put32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

std::uint32_t get32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// rtpbin's send_rtcp_src_0 inside `webrtcbin` (a reference), or null.
GstPad* rtcpSendPad(GstElement* webrtcbin) {
  GstElement* rtpbin = gst_bin_get_by_name(GST_BIN(webrtcbin), "rtpbin");
  if (!rtpbin) return nullptr;
  GstPad* pad = gst_element_get_static_pad(rtpbin, "send_rtcp_src_0");
  gst_object_unref(rtpbin);
  return pad;
}

}  // namespace

GstPad* niceSinkPad(GstElement* webrtcbin) {
  GstPad* found = nullptr;
  GstIterator* it = gst_bin_iterate_recurse(GST_BIN(webrtcbin));
  GValue item = G_VALUE_INIT;
  while (!found && gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    auto* e = GST_ELEMENT(g_value_get_object(&item));
    GstElementFactory* f = gst_element_get_factory(e);
    if (f && std::strcmp(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(f)), "nicesink") == 0)
      found = gst_element_get_static_pad(e, "sink");
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  return found;
}

std::array<std::uint8_t, 22> junkRtpPacket(std::uint16_t seq, std::mt19937& random) {
  std::array<std::uint8_t, 22> p{};
  p[0] = 0x80;
  p[1] = 96;
  p[2] = static_cast<std::uint8_t>(seq >> 8);
  p[3] = static_cast<std::uint8_t>(seq);
  for (std::size_t b = 4; b < p.size(); ++b) p[b] = static_cast<std::uint8_t>(random());  // fresh SSRC
  return p;
}

int claimLossInReports(std::uint8_t* data, std::size_t size, int percent) {
  const auto fraction = static_cast<std::uint8_t>(std::min(255, percent * 256 / 100));
  int rewritten = 0;
  std::size_t at = 0;
  while (at + 8 <= size) {
    const std::uint8_t* h = data + at;
    if ((h[0] >> 6) != 2) break;
    const std::size_t length = (std::size_t{h[2]} << 8 | h[3]) * 4 + 4;
    if (at + length > size) break;
    const int blocks = h[0] & 0x1f;
    const std::size_t first = h[1] == 200 ? 28 : h[1] == 201 ? 8 : length;  // SR: after the sender info
    for (int b = 0; b < blocks && first + (b + 1) * 24u <= length; ++b) {
      data[at + first + b * 24u + 4] = fraction;
      ++rewritten;
    }
    at += length;
  }
  return rewritten;
}

std::vector<std::uint8_t> compoundRtcp(std::uint32_t senderSsrc, const ClaimedReport* report, bool pli,
                                       std::uint32_t pliMediaSsrc) {
  std::vector<std::uint8_t> p(8 + (report ? 24 : 0) + (pli ? 12 : 0));
  p[0] = report ? 0x81 : 0x80;  // V=2, one report block or none
  p[1] = 201;                   // RR
  p[3] = report ? 7 : 1;        // length in words - 1
  put32(&p[4], senderSsrc);
  std::size_t at = 8;
  if (report) {
    put32(&p[at], report->mediaSsrc);
    put32(&p[at + 4], std::min<std::uint32_t>(report->cumulativeLost, 0x7fffff));
    p[at + 4] = static_cast<std::uint8_t>(std::min(255, report->lossPercent * 256 / 100));
    put32(&p[at + 8], report->extHighestSeq);  // jitter, LSR, DLSR: 0
    at += 24;
  }
  if (pli) {
    p[at] = 0x81;     // V=2, FMT=1: PLI
    p[at + 1] = 206;  // PSFB
    p[at + 3] = 2;    // length: 3 words - 1
    put32(&p[at + 4], senderSsrc);
    put32(&p[at + 8], pliMediaSsrc);
  }
  return p;
}

std::string HostileViewer::attach(GstElement* webrtcbin) {
  const auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {  // webrtcbin links its transport once the answer is applied
    if (!rtcpSrc_) rtcpSrc_ = rtcpSendPad(webrtcbin);
    if (rtcpSrc_ && !rtcpPeer_) rtcpPeer_ = gst_pad_get_peer(rtcpSrc_);
    if (!niceSink_) niceSink_ = niceSinkPad(webrtcbin);
    if (rtcpPeer_ && niceSink_) break;
    std::this_thread::sleep_for(20ms);
  }
  if (!rtcpSrc_ || !rtcpPeer_)
    return "webrtcbin has no linked rtpbin send_rtcp_src_0 (GStreamer's layout changed?)";
  if (!niceSink_) return "webrtcbin has no nicesink (GStreamer's layout changed?)";
  rtcpProbe_ = gst_pad_add_probe(rtcpSrc_, GST_PAD_PROBE_TYPE_BUFFER, onOwnRtcp, this, nullptr);
  thread_ = std::thread([this] { attack(); });
  return {};
}

void HostileViewer::watchMedia(GstPad* rtpSrcPad) {
  gst_pad_add_probe(rtpSrcPad, GST_PAD_PROBE_TYPE_BUFFER, onMediaRtp, this, nullptr);
}

void HostileViewer::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (rtcpSrc_ && rtcpProbe_) gst_pad_remove_probe(rtcpSrc_, rtcpProbe_);
  rtcpProbe_ = 0;
  for (GstPad** p : {&rtcpSrc_, &rtcpPeer_, &niceSink_}) {
    if (*p) gst_object_unref(*p);
    *p = nullptr;
  }
}

GstPadProbeReturn HostileViewer::onOwnRtcp(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* self = static_cast<HostileViewer*>(data);
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  if (!buffer) return GST_PAD_PROBE_OK;
  ++self->rtcpSeen_;
  std::uint8_t head[8];  // its SSRC now (rtpsession may start from one it made up before RTP came)
  if (gst_buffer_extract(buffer, 0, head, sizeof head) == sizeof head) self->ownSsrc_ = get32(head + 4);
  if (self->plan_.claimLossPercent <= 0) return GST_PAD_PROBE_OK;
  buffer = gst_buffer_make_writable(buffer);
  GST_PAD_PROBE_INFO_DATA(info) = buffer;
  GstMapInfo map;
  if (gst_buffer_map(buffer, &map, GST_MAP_READWRITE)) {
    self->reportsRewritten_ += claimLossInReports(map.data, map.size, self->plan_.claimLossPercent);
    gst_buffer_unmap(buffer, &map);
  }
  return GST_PAD_PROBE_OK;
}

GstPadProbeReturn HostileViewer::onMediaRtp(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* self = static_cast<HostileViewer*>(data);
  std::uint8_t head[12];
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  if (!buffer || gst_buffer_extract(buffer, 0, head, sizeof head) != sizeof head) return GST_PAD_PROBE_OK;
  self->mediaSsrc_ = get32(head + 8);
  const auto seq = static_cast<std::uint32_t>(head[2] << 8 | head[3]);
  const std::uint32_t last = self->extHighestSeq_.load();
  std::uint32_t ext = (last & 0xffff0000u) | seq;
  if (self->mediaPackets_++ > 0 && seq < (last & 0xffff) && (last & 0xffff) - seq > 0x8000)
    ext += 0x10000;  // wrapped
  if (self->mediaPackets_.load() == 1 || ext > last) self->extHighestSeq_ = ext;
  return GST_PAD_PROBE_OK;
}

void HostileViewer::attack() {
  const auto ready = Clock::now() + 10s;
  while (!stopping_ && (ownSsrc_.load() == 0 || mediaSsrc_.load() == 0) && Clock::now() < ready)
    std::this_thread::sleep_for(10ms);  // polling the probes' atomics, bounded
  if (stopping_) return;
  if (ownSsrc_.load() == 0 || mediaSsrc_.load() == 0) {
    error_ = "within 10 s no RTCP went out or no RTP came in: nothing to attack";
    return;
  }
  startedMs_ = realtimeMs();
  std::mt19937 random(std::random_device{}());
  const auto start = Clock::now();
  bool plis = plan_.plisPerSecond > 0, junk = plan_.junkPerSecond > 0;
  bool reports = plan_.claimLossPercent > 0 && plan_.reportsPerSecond > 0;
  for (auto next = start; !stopping_; next += 10ms) {
    std::this_thread::sleep_until(next);  // pacing the flood, not waiting for a result
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    // Each compound packet's RR claims the loss about what was received so far (or has no block).
    auto send = [&](bool pli) {
      ClaimedReport claim{mediaSsrc_.load(), plan_.claimLossPercent, 0, extHighestSeq_.load()};
      claim.cumulativeLost = mediaPackets_.load() * static_cast<std::uint32_t>(plan_.claimLossPercent) / 100;
      const std::vector<std::uint8_t> p = compoundRtcp(
          ownSsrc_.load(), plan_.claimLossPercent > 0 ? &claim : nullptr, pli, mediaSsrc_.load());
      const GstFlowReturn flow = gst_pad_chain(rtcpPeer_, gst_buffer_new_memdup(p.data(), p.size()));
      if (flow != GST_FLOW_OK && !stopping_)
        error_ = std::string("RTCP refused by the SRTP encoder: ") + gst_flow_get_name(flow);
      return flow == GST_FLOW_OK;
    };
    while (plis && plisSent_ < static_cast<long>(elapsed * plan_.plisPerSecond)) {
      if (!(plis = send(true))) break;
      ++plisSent_;
    }
    while (reports && reportsSent_ < static_cast<long>(elapsed * plan_.reportsPerSecond)) {
      if (!(reports = send(false))) break;
      ++reportsSent_;
    }
    while (junk && junkSent_ < static_cast<long>(elapsed * plan_.junkPerSecond)) {
      const auto p = junkRtpPacket(static_cast<std::uint16_t>(junkSent_), random);
      const GstFlowReturn flow = gst_pad_chain(niceSink_, gst_buffer_new_memdup(p.data(), p.size()));
      if (flow != GST_FLOW_OK) {
        if (!stopping_) error_ = std::string("junk refused by nicesink: ") + gst_flow_get_name(flow);
        junk = false;
        break;
      }
      ++junkSent_;
    }
  }
  endedMs_ = realtimeMs();
}

std::string HostileViewer::json() const {
  std::string error;
  for (char c : error_) error += (c == '"' || c == '\\') ? '\'' : c;
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "{\"claim_loss_pct\": %d, \"plis_per_s\": %d, \"junk_per_s\": %d, \"started_wall_ms\": %lld, "
                "\"ended_wall_ms\": %lld, \"own_ssrc\": %u, \"media_ssrc\": %u, \"rtcp_packets\": %ld, "
                "\"reports_rewritten\": %ld, \"reports_sent\": %ld, \"plis_sent\": %ld, \"junk_sent\": %ld, "
                "\"media_packets\": %u, \"error\": \"%s\"}",
                plan_.claimLossPercent, plan_.plisPerSecond, plan_.junkPerSecond,
                static_cast<long long>(startedMs_), static_cast<long long>(endedMs_), ownSsrc_.load(),
                mediaSsrc_.load(), rtcpSeen_.load(), reportsRewritten_.load(), reportsSent_, plisSent_,
                junkSent_, mediaPackets_.load(), error.c_str());
  return buf;
}

}  // namespace zerohop::test
