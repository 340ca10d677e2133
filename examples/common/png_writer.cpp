#include "png_writer.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

void putU32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

void chunk(std::vector<std::uint8_t>& out, const char type[4], const std::vector<std::uint8_t>& data) {
  putU32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  const uLong crc = crc32(0L, out.data() + start, static_cast<uInt>(out.size() - start));
  putU32(out, static_cast<std::uint32_t>(crc));
}

}  // namespace

std::string writePngRgb(const std::string& path, const std::uint8_t* rgba, std::uint32_t width,
                        std::uint32_t height, std::uint32_t pitch) {
  std::vector<std::uint8_t> raw;
  raw.reserve(std::size_t{height} * (1 + std::size_t{width} * 3));
  for (std::uint32_t y = 0; y < height; ++y) {
    raw.push_back(0);  // filter: none
    const std::uint8_t* row = rgba + std::size_t{y} * pitch;
    for (std::uint32_t x = 0; x < width; ++x) raw.insert(raw.end(), row + x * 4, row + x * 4 + 3);
  }
  uLongf packedSize = compressBound(static_cast<uLong>(raw.size()));
  std::vector<std::uint8_t> packed(packedSize);
  const int z =
      compress2(packed.data(), &packedSize, raw.data(), static_cast<uLong>(raw.size()), Z_BEST_SPEED);
  if (z != Z_OK) return std::string("compress2: zlib error ") + std::to_string(z);
  packed.resize(packedSize);

  std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> ihdr;
  putU32(ihdr, width);
  putU32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8 bits, truecolour, deflate, filter 0, no interlace
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", packed);
  chunk(png, "IEND", {});

  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "fopen " + path + ": " + std::strerror(errno);
  const bool ok = std::fwrite(png.data(), 1, png.size(), f) == png.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) return "write " + path + ": " + std::strerror(ok ? errno : err);
  return {};
}
