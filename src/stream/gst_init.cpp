#include <gst/gst.h>

#include <mutex>

#include "stream/gst_handles.hpp"

namespace zerohop::stream {

void ensureGstInit() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!gst_is_initialized()) gst_init(nullptr, nullptr);
  });
}

}  // namespace zerohop::stream
