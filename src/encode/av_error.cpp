#include "av_error.hpp"

extern "C" {
#include <libavutil/error.h>
}

namespace zerohop::encode {

std::string avErrorText(int err) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  if (av_strerror(err, text, sizeof text) < 0) return "unknown FFmpeg error " + std::to_string(err);
  return text;
}

void throwAv(Errc code, std::string_view call, int err, std::string_view fix) {
  std::string msg(call);
  msg += " failed: ";
  msg += avErrorText(err);
  msg += " (" + std::to_string(err) + ")";
  if (!fix.empty()) {
    msg += "; ";
    msg += fix;
  }
  throw Error(code, std::move(msg));
}

}  // namespace zerohop::encode
