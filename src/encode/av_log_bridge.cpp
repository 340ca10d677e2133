#include <cstdarg>
#include <cstdio>
#include <string>

extern "C" {
#include <libavutil/log.h>
}

#include "zerohop/encoder.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

// FFmpeg's chatter (libx264's "using cpu capabilities", "profile ... level ...") is debug detail
// for us; its errors are warnings of the library (the encoder reports failures as zerohop::Error).
log::Level levelFor(int avLevel) {
  if (avLevel <= AV_LOG_ERROR) return log::Level::kWarn;
  if (avLevel <= AV_LOG_WARNING) return log::Level::kInfo;
  return log::Level::kDebug;
}

void forward(void* avcl, int avLevel, const char* fmt, va_list args) {
  if (avLevel > av_log_get_level()) return;
  const log::Level level = levelFor(avLevel);
  if (level < log::level()) return;
  char line[1024];
  int prefix = 1;
  av_log_format_line2(avcl, avLevel, fmt, args, line, sizeof line, &prefix);
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (!text.empty()) log::write(level, text);
}

}  // namespace

void routeFfmpegLogsToZerohopLog() {
  av_log_set_level(AV_LOG_VERBOSE);
  av_log_set_callback(&forward);
}

}  // namespace zerohop
