#include "zerohop/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/setting_log.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::log {
namespace {
std::mutex gMutex;
Sink gSink;
SettingNote gSettingNote;  // guarded by gMutex
std::atomic<Level> gLevel{Level::kInfo};

const char* levelName(Level l) {
  switch (l) {
    case Level::kTrace: return "trace";
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
    case Level::kOff: return "off";
  }
  return "?";
}
}  // namespace

void setSink(Sink sink) {
  std::lock_guard lock(gMutex);
  gSink = std::move(sink);
}
void setLevel(Level l) { gLevel.store(l); }
Level level() noexcept { return gLevel.load(std::memory_order_relaxed); }

void write(Level l, std::string_view message) {
  if (l < level()) return;
  std::lock_guard lock(gMutex);
  if (gSink) {
    gSink(l, message);
    return;
  }
  const auto ms = realtimeNs() / 1'000'000;
  std::fprintf(stderr, "[%lld.%03lld] [zerohop] [%s] %.*s\n", static_cast<long long>(ms / 1000),
               static_cast<long long>(ms % 1000), levelName(l), static_cast<int>(message.size()), message.data());
}

void setSettingNote(SettingNote note) {
  std::lock_guard lock(gMutex);
  gSettingNote = std::move(note);
}

void writeAbout(Level l, std::string_view setting, std::string_view message) {
  if (l < level()) return;
  std::string note;
  {
    std::lock_guard lock(gMutex);  // released before write() takes it again
    note = gSettingNote ? gSettingNote(setting) : "(setting " + std::string(setting) + ")";
  }
  write(l, note.empty() ? std::string(message) : std::string(message) + " " + note);
}

bool parseLevel(std::string_view name, Level& out) noexcept {
  for (int i = 0; i <= static_cast<int>(Level::kOff); ++i) {
    if (name == levelName(static_cast<Level>(i))) {
      out = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}

}  // namespace zerohop::log
