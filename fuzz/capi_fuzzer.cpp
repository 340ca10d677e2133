// The C API's argument checks: bytes drive a sequence of zh_* calls over a small pool of handles,
// mixing live handles with NULL, closed, foreign and made-up pointers, fuzzed struct sizes, formats,
// layouts and timeouts of 0. Every call must return a status (never crash, leak or trip a
// sanitizer); everything still open is closed at the end of each input.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "zerohop/log.hpp"
#include "zerohop/zerohop.h"

namespace {

struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  std::uint8_t u8() { return n ? (--n, *p++) : 0; }
  std::uint32_t u32() { return u8() | (u8() << 8) | (u8() << 16) | (std::uint32_t{u8()} << 24); }
};

template <class T>
T* pick(std::vector<T*>& live, std::uint8_t b) {
  static int stackWord;
  switch (b % 5) {
    case 0: return nullptr;
    case 1: return reinterpret_cast<T*>(&stackWord);  // a pointer that is no handle at all
    case 2: return reinterpret_cast<T*>(static_cast<std::uintptr_t>(0x1000 + b));
    default: return live.empty() ? nullptr : live[b % live.size()];
  }
}

std::string dir() {
  static std::string d = [] {
    char tmpl[] = "/tmp/zh-fuzz-capi-XXXXXX";
    if (!::mkdtemp(tmpl)) std::abort();
    return std::string(tmpl);
  }();
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static bool quiet = (zerohop::log::setLevel(zerohop::log::Level::kOff), true);
  (void)quiet;
  Bytes in{data, size};
  std::vector<zh_publisher*> pubs;
  std::vector<zh_reader*> readers;
  std::vector<zh_frame*> frames;
  std::vector<zh_slot*> slots;
  static std::uint8_t pixels[64 * 64 * 4 * 2];
  const std::string d = dir();
  int ops = 0;
  while (in.n && ops++ < 64) {
    const std::uint8_t op = in.u8();
    const std::uint8_t b = in.u8();
    const std::string name = "f" + std::to_string(b % 3);
    switch (op % 14) {
      case 0: {  // create a publisher with fuzzed options
        zh_publisher_options o = ZH_PUBLISHER_OPTIONS_INIT;
        if (in.u8() & 1) o.struct_size = in.u8();
        o.format = static_cast<zh_format>(in.u8() % 12);
        o.width = in.u8() % 66;
        o.height = in.u8() % 66;
        o.slots = in.u8() % 6;
        o.memory = static_cast<zh_memory>(in.u8() % 4);
        o.unit_capacity = in.u8() * 16u;
        o.pitch_align = 1u << (in.u8() % 8);
        o.directory = d.c_str();
        zh_publisher* p = nullptr;
        if (zh_publisher_create(in.u8() & 1 ? name.c_str() : "bad/name", &o, &p) == ZH_OK) pubs.push_back(p);
        break;
      }
      case 1: {
        zh_reader_options o = ZH_READER_OPTIONS_INIT;
        o.directory = d.c_str();
        if (in.u8() & 1) o.struct_size = in.u8();
        zh_reader* r = nullptr;
        if (zh_reader_open_with(name.c_str(), &o, &r) == ZH_OK) readers.push_back(r);
        break;
      }
      case 2: {
        zh_frame* f = nullptr;
        zh_reader* r = pick(readers, in.u8());
        if ((b & 1 ? zh_reader_next(r, 0, &f) : zh_reader_latest(r, 0, &f)) == ZH_OK) frames.push_back(f);
        break;
      }
      case 3: {
        zh_frame_info info = ZH_FRAME_INFO_INIT;
        if (b & 1) info.struct_size = in.u8();
        zh_frame* f = pick(frames, in.u8());
        (void)zh_frame_get_info(f, b & 2 ? &info : nullptr);
        (void)zh_frame_check(f);
        (void)zh_frame_wait_on_stream(f, nullptr);
        std::uint64_t ms;
        std::uint32_t seq;
        (void)zh_frame_read_timecode(f, &ms, b & 4 ? &seq : nullptr);
        break;
      }
      case 4: {
        zh_frame* f = pick(frames, in.u8());
        if (zh_frame_release(f) == ZH_OK && f) std::erase(frames, f);
        break;
      }
      case 5: {
        zh_slot* s = nullptr;
        if (zh_publisher_acquire(pick(pubs, in.u8()), &s) == ZH_OK) slots.push_back(s);
        break;
      }
      case 6: {
        zh_slot* s = pick(slots, in.u8());
        zh_frame_meta m = ZH_FRAME_META_INIT;
        if (b & 1) m.struct_size = in.u8();
        m.bytes_used = in.u32() % 5000;
        m.sequence = in.u8();
        const zh_status st = zh_publisher_commit(pick(pubs, in.u8()), s, b & 2 ? &m : nullptr, nullptr);
        // A commit ends the slot unless the slot or its publisher was refused.
        if (s && std::find(slots.begin(), slots.end(), s) != slots.end() &&
            (st == ZH_OK || std::string(zh_last_error()).find("is NULL, already") == std::string::npos))
          std::erase(slots, s);
        break;
      }
      case 7: {
        zh_slot* s = pick(slots, in.u8());
        if (zh_slot_abandon(s) == ZH_OK && s) std::erase(slots, s);
        break;
      }
      case 8: {  // publish a described frame: pointers stay inside `pixels`, the rest is fuzzed
        zh_frame_info f = ZH_FRAME_INFO_INIT;
        if (b & 1) f.struct_size = in.u8();
        f.format = static_cast<zh_format>(in.u8() % 12);
        f.width = in.u8() % 66;
        f.height = in.u8() % 66;
        f.plane_count = in.u8() % 5;
        f.memory = static_cast<zh_memory>(in.u8() % 4 == 3 ? 0 : in.u8() % 2);
        for (int i = 0; i < 3; ++i) {
          f.planes[i] = in.u8() & 1 ? pixels : nullptr;
          f.pitches[i] = in.u8() % 2 ? 64 * 4 : in.u8() % 64;
        }
        f.bytes_used = in.u32() % sizeof pixels;
        (void)zh_publisher_publish(pick(pubs, in.u8()), &f, nullptr, nullptr);
        break;
      }
      case 9: {
        zh_reader* r = pick(readers, in.u8());
        if (zh_reader_close(r) == ZH_OK && r) std::erase(readers, r);
        break;
      }
      case 10: {
        zh_publisher* p = pick(pubs, in.u8());
        if (zh_publisher_close(p) == ZH_OK && p) std::erase(pubs, p);
        break;
      }
      case 11: {
        zh_share_info si = ZH_SHARE_INFO_INIT;
        zh_reader_stats rs = ZH_READER_STATS_INIT;
        zh_publisher_stats ps = ZH_PUBLISHER_STATS_INIT;
        if (b & 1) si.struct_size = rs.struct_size = ps.struct_size = in.u8();
        (void)zh_reader_get_info(pick(readers, in.u8()), &si);
        (void)zh_reader_get_stats(pick(readers, in.u8()), &rs);
        (void)zh_publisher_get_stats(pick(pubs, in.u8()), &ps);
        (void)zh_reader_reconnect(pick(readers, in.u8()));
        break;
      }
      case 12: {
        zh_slot* s = pick(slots, in.u8());
        zh_frame_info info = ZH_FRAME_INFO_INIT;
        if (zh_slot_get_info(s, &info) == ZH_OK && info.memory == ZH_MEMORY_HOST && info.planes[0])
          std::memset(info.planes[0], b, std::min<std::size_t>(info.capacity, 64));  // the caller writes the slot
        break;
      }
      default: {
        (void)zh_status_name(static_cast<zh_status>(static_cast<std::int8_t>(b)));
        (void)zh_format_name(static_cast<zh_format>(b));
        zh_stream* st = nullptr;
        zh_stream_options so = ZH_STREAM_OPTIONS_INIT;
        (void)zh_stream_create(b & 1 ? &so : nullptr, &st);
        break;
      }
    }
  }
  for (auto* f : frames) zh_frame_release(f);
  for (auto* s : slots) zh_slot_abandon(s);
  for (auto* r : readers) zh_reader_close(r);
  for (auto* p : pubs) zh_publisher_close(p);
  return 0;
}
