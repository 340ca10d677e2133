#include "rtsp/gst_support.hpp"

#include <mutex>

#include "zerohop/error.hpp"

namespace zerohop::rtsp {

void ensureGstInit() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    GError* error = nullptr;
    if (!gst_init_check(nullptr, nullptr, &error)) {
      failure = error ? error->message : "unknown error";
      if (error) g_error_free(error);
    }
  });
  if (!failure.empty()) throw Error(Errc::kUnavailable, "gst_init_check: " + failure);
}

GstElement* makeElement(const char* factory, const char* neededBy, const char* package) {
  GstElement* e = gst_element_factory_make(factory, nullptr);
  if (!e) {
    throw Error(Errc::kUnsupported, std::string("the GStreamer element '") + factory + "' is missing, which " +
                                        neededBy + " needs; install " + package);
  }
  return e;
}

std::string lastLine(const gchar* debug) {
  if (!debug) return {};
  std::string d(debug);
  while (!d.empty() && (d.back() == '\n' || d.back() == ' ')) d.pop_back();
  const auto nl = d.rfind('\n');
  return nl == std::string::npos ? std::string{} : d.substr(nl + 1);
}

GstCaps* ntpCaps() {
  static GstCaps* caps = gst_caps_new_empty_simple("timestamp/x-ntp");
  return caps;
}

}  // namespace zerohop::rtsp
