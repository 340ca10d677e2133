#pragma once
// Shared by the GPU benchmarks: clocks, nearest-rank percentiles, number formatting.
// Thread-safety: reentrant.

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace zerohop::bench {

/// Microseconds on `clock` (CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID for CPU time).
inline double nowUs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

/// Nearest-rank percentile `p` (0..100) of `v`; 0 for an empty series.
inline double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size()) + 0.999999);
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return v[rank - 1];
}

/// "%.0f" from 100 up, "%.1f" below.
inline std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 100 ? "%.0f" : "%.1f", v);
  return b;
}

/// The command line as "--key value" pairs (a last key without a value gets "").
inline std::vector<std::pair<std::string, std::string>> keyValueArgs(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 1; i < argc; i += 2) out.emplace_back(argv[i], i + 1 < argc ? argv[i + 1] : "");
  return out;
}

/// "720p,1080p" -> {"720p", "1080p"}.
inline std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string s; std::getline(ss, s, ',');) out.push_back(s);
  return out;
}

/// Prints the Markdown `report` to stdout and writes it to `path` (unless empty); false, with a
/// message on stderr naming `program`, when the file cannot be written.
inline bool publishReport(const std::string& report, const std::string& path, const char* program) {
  std::cout << report << std::flush;
  if (path.empty()) return true;
  std::ofstream out(path);
  out << report;
  if (out) return true;
  std::fprintf(stderr, "%s: cannot write %s\n", program, path.c_str());
  return false;
}

}  // namespace zerohop::bench
