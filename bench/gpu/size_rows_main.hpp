#pragma once
// Shared by the GPU benchmarks that print one Markdown table of rows per frame size (download_bench,
// rendition_scale_bench): the sizes, the command line (--iterations N --sizes 720p,1080p,4k --device N
// --out FILE), the GPU probe, the table's header and the report. Plain main: the GPU machine has no
// Google Benchmark.
// Thread-safety: call from main only.

#include <cstdint>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop::bench {

struct FrameSize {
  std::string name;
  std::uint32_t w = 0, h = 0;
};

inline bool parseFrameSize(const std::string& s, FrameSize& out) {
  if (s == "720p") out = {s, 1280, 720};
  else if (s == "1080p") out = {s, 1920, 1080};
  else if (s == "4k") out = {s, 3840, 2160};
  else return false;
  return true;
}

/// One row's measurements: wall and CPU time of each kept iteration, microseconds.
struct Series {
  std::vector<double> wall, cpu;
  void add(double w, double c) {
    wall.push_back(w);
    cpu.push_back(c);
  }
};

/// "| SIZE | WHAT | wall p50 / p99 | CPU p50 / p99 |" and a newline.
inline std::string sizeRow(const FrameSize& size, const std::string& what, const Series& s) {
  return "| " + size.name + " | " + what + " | " + fmt(pct(s.wall, 50)) + " / " + fmt(pct(s.wall, 99)) + " | " +
         fmt(pct(s.cpu, 50)) + " / " + fmt(pct(s.cpu, 99)) + " |\n";
}

/// What a benchmark's rows are: `title` (before "(GPU name, N frames a row, ...)") and `rows`, the
/// table rows of one size ("| size | what | wall p50 / p99 | CPU p50 / p99 |\n" each).
struct SizeRows {
  std::string title;
  std::function<std::string(const FrameSize& size, int device, int iterations)> rows;
};

/// main() of such a benchmark: 0 done, 1 failed (a zerohop Error), 2 usage or no GPU.
inline int sizeRowsMain(int argc, char** argv, const SizeRows& bench) {
  int iterations = 300, device = 0;
  std::string sizes = "720p,1080p", outPath;
  for (const auto& [k, v] : keyValueArgs(argc, argv)) {
    if (k == "--iterations") iterations = std::stoi(v);
    else if (k == "--sizes") sizes = v;
    else if (k == "--device") device = std::stoi(v);
    else if (k == "--out") outPath = v;
    else {
      std::cerr << "usage: " << argv[0] << " [--iterations N] [--sizes 720p,1080p,4k] [--device N] [--out FILE]\n";
      return 2;
    }
  }
  const GpuInfo gpu = probeGpu();
  if (!gpu.available) {
    std::cerr << argv[0] << ": no usable GPU: " << gpu.reason << "\n";
    return 2;
  }
  try {
    std::ostringstream report;
    report << bench.title << " (" << gpu.name << ", " << iterations
           << " frames a row, interleaved; wall and CPU in microseconds, p50 / p99)\n\n"
           << "| size | per frame | wall p50 / p99 (µs) | CPU p50 / p99 (µs) |\n|---|---|---:|---:|\n";
    for (const std::string& s : splitList(sizes)) {
      FrameSize size;
      if (!parseFrameSize(s, size)) {
        std::cerr << "unknown size '" << s << "' (720p, 1080p, 4k)\n";
        return 2;
      }
      report << bench.rows(size, device, iterations);
    }
    return publishReport(report.str(), outPath, argv[0]) ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace zerohop::bench
