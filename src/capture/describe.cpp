#include <cstdio>
#include <sstream>

#include "zerohop/capture.hpp"

namespace zerohop {

std::string describeCaptureDevice(const CaptureDevice& d) {
  std::ostringstream os;
  os << d.path << "  " << d.card << "  (" << d.driver << ", " << d.busInfo << ")\n";
  os << "  memory:" << (d.mmap ? " mmap" : "") << (d.userptr ? " userptr" : "")
     << (!d.mmap && !d.userptr ? " none (not a streaming device)" : "")
     << "  expbuf: " << (d.exportsDmabuf ? "yes" : "no") << "\n";
  for (const auto& f : d.formats) {
    const std::string name =
        f.format == PixelFormat::kUnknown ? "(unused)" : std::string(formatName(f.format));
    char head[96];
    std::snprintf(head, sizeof head, "  %-5s %-9s", fourccString(f.fourcc).c_str(), name.c_str());
    os << head << f.description << (f.compressed ? " (compressed)" : "")
       << (f.stepwise ? " (size range)" : "") << "\n";
    for (const auto& s : f.sizes) {
      char size[32];
      std::snprintf(size, sizeof size, "%ux%u", s.width, s.height);
      char line[64];
      std::snprintf(line, sizeof line, "%18s%-11s", "", size);
      os << line;
      for (double r : s.fps) os << ' ' << r;
      os << (s.fps.empty() ? " (rates not listed)\n" : " fps\n");
    }
  }
  return os.str();
}

}  // namespace zerohop
