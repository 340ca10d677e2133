#include "stream/ssrc_gate_probe.hpp"

#include <atomic>
#include <cstring>
#include <utility>

namespace zerohop::stream {
namespace {

// One per probe, deleted with it (by whichever thread drops the pad). Made on the negotiating thread and
// used on the transport's streaming thread: GStreamer's locks order that, but on futexes ThreadSanitizer
// cannot see (glib_handoff.hpp), so the same order is stated with an atomic: a release when made, an
// acquire as each probe call starts and a release as it ends, an acquire before it is freed.
class GateRef {
 public:
  explicit GateRef(std::shared_ptr<SsrcGate> gate) : gate_(std::move(gate)) {
    calls_.store(0, std::memory_order_release);
  }
  ~GateRef() { (void)calls_.load(std::memory_order_acquire); }
  GateRef(const GateRef&) = delete;
  GateRef& operator=(const GateRef&) = delete;

  /// One probe call's use of the gate, from construction to destruction.
  class Call {
   public:
    explicit Call(GateRef& ref) : ref_(ref) {
      // A load, not the read-modify-write below: ThreadSanitizer checks an RMW's access before its
      // acquire, and would find the atomic's own construction unordered.
      (void)ref_.calls_.load(std::memory_order_acquire);
    }
    ~Call() { ref_.calls_.fetch_add(1, std::memory_order_release); }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    SsrcGate& gate() { return *ref_.gate_; }

   private:
    GateRef& ref_;
  };

 private:
  const std::shared_ptr<SsrcGate> gate_;
  std::atomic<std::uint64_t> calls_;
};

GQuark gatedQuark() {
  static const GQuark q = g_quark_from_static_string("zerohop-ssrc-gate");
  return q;
}

bool admitBuffer(SsrcGate& gate, GstBuffer* buffer) {
  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return true;  // not ours to judge
  const bool pass = gate.admit(map.data, map.size);
  gst_buffer_unmap(buffer, &map);
  return pass;
}

GstPadProbeReturn onDatagrams(GstPad*, GstPadProbeInfo* info, gpointer data) {
  GateRef::Call call(*static_cast<GateRef*>(data));
  SsrcGate& gate = call.gate();
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
    return admitBuffer(gate, GST_PAD_PROBE_INFO_BUFFER(info)) ? GST_PAD_PROBE_OK : GST_PAD_PROBE_DROP;
  }
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    GstBufferList* list = gst_buffer_list_make_writable(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
    GST_PAD_PROBE_INFO_DATA(info) = list;
    for (guint i = gst_buffer_list_length(list); i-- > 0;) {
      if (!admitBuffer(gate, gst_buffer_list_get(list, i))) gst_buffer_list_remove(list, i, 1);
    }
    return gst_buffer_list_length(list) == 0 ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
  }
  return GST_PAD_PROBE_OK;
}

void deleteRef(gpointer data) {
  delete static_cast<GateRef*>(data);
}

bool isNiceSrc(GstElement* e) {
  GstElementFactory* f = gst_element_get_factory(e);
  return f && std::strcmp(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(f)), "nicesrc") == 0;
}

}  // namespace

std::size_t attachSsrcGate(GstElement* webrtcbin, const std::shared_ptr<SsrcGate>& gate) {
  std::size_t gated = 0;
  GstIterator* it = gst_bin_iterate_recurse(GST_BIN(webrtcbin));
  GValue item = G_VALUE_INIT;
  bool done = false;
  while (!done) {
    switch (gst_iterator_next(it, &item)) {
      case GST_ITERATOR_OK: {
        GstElement* e = GST_ELEMENT(g_value_get_object(&item));
        if (isNiceSrc(e)) {
          if (GstPad* pad = gst_element_get_static_pad(e, "src")) {
            if (!g_object_get_qdata(G_OBJECT(pad), gatedQuark())) {
              gst_pad_add_probe(
                  pad,
                  static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST),
                  onDatagrams, new GateRef(gate), deleteRef);
              g_object_set_qdata(G_OBJECT(pad), gatedQuark(), GINT_TO_POINTER(1));
            }
            ++gated;
            gst_object_unref(pad);
          }
        }
        g_value_reset(&item);
        break;
      }
      case GST_ITERATOR_RESYNC:
        gst_iterator_resync(it);
        gated = 0;
        break;
      case GST_ITERATOR_ERROR:
      case GST_ITERATOR_DONE:
        done = true;
        break;
    }
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  return gated;
}

}  // namespace zerohop::stream
