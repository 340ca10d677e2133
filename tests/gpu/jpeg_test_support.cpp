#include "jpeg_test_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace zerohop::test {

TurboPlanes turboDecode(const std::vector<std::uint8_t>& jpeg) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  TurboPlanes t;
  int colorspace = 0;
  if (tjDecompressHeader3(tj.get(), jpeg.data(), jpeg.size(), &t.width, &t.height, &t.subsamp, &colorspace) != 0)
    throw std::runtime_error(std::string("tjDecompressHeader3: ") + tjGetErrorStr2(tj.get()));
  // libjpeg-turbo's luma plane is padded to whole chroma samples (odd sizes): decode into that,
  // keep width x height.
  const int lumaWidth = tjPlaneWidth(0, t.width, t.subsamp),
            lumaHeight = tjPlaneHeight(0, t.height, t.subsamp);
  std::vector<std::uint8_t> luma(std::size_t(lumaWidth) * lumaHeight);
  unsigned char* planes[3] = {luma.data(), nullptr, nullptr};
  int strides[3] = {lumaWidth, 0, 0};
  if (t.subsamp != TJSAMP_GRAY) {
    t.chromaWidth = tjPlaneWidth(1, t.width, t.subsamp);
    t.chromaHeight = tjPlaneHeight(1, t.height, t.subsamp);
    t.u.resize(std::size_t(t.chromaWidth) * t.chromaHeight);
    t.v.resize(t.u.size());
    planes[1] = t.u.data();
    planes[2] = t.v.data();
    strides[1] = strides[2] = t.chromaWidth;
  }
  if (tjDecompressToYUVPlanes(tj.get(), jpeg.data(), jpeg.size(), planes, t.width, strides, t.height, 0) != 0)
    throw std::runtime_error(std::string("tjDecompressToYUVPlanes: ") + tjGetErrorStr2(tj.get()));
  t.y.resize(std::size_t(t.width) * t.height);
  for (int row = 0; row < t.height; ++row)
    std::copy_n(luma.begin() + std::ptrdiff_t(row) * lumaWidth, t.width,
                t.y.begin() + std::ptrdiff_t(row) * t.width);
  return t;
}

testing::SourcePlanes randomPlanes(std::uint32_t width, std::uint32_t height, std::mt19937& rng) {
  testing::SourcePlanes p;
  p.width = width;
  p.height = height;
  std::uniform_int_distribution<int> byte(0, 255);
  p.y.resize(std::size_t(width) * height);
  p.u422.resize(std::size_t(width / 2) * height);
  p.v422.resize(p.u422.size());
  for (auto* plane : {&p.y, &p.u422, &p.v422})
    for (auto& b : *plane) b = static_cast<std::uint8_t>(byte(rng));
  return p;
}

std::vector<std::uint8_t> compressWithTjEnv(const testing::SourcePlanes& p, int subsamp, const char* name,
                                            const char* value) {
  // libjpeg-turbo 2.x reads these when it sets up each compression.
  setenv(name, value, 1);
  std::vector<std::uint8_t> jpeg;
  try {
    jpeg = testing::compressJpeg(p, subsamp);
  } catch (...) {
    unsetenv(name);
    throw;
  }
  unsetenv(name);
  return jpeg;
}

bool hasRestartInterval(const std::vector<std::uint8_t>& jpeg) {
  for (std::size_t i = 2; i + 5 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA) return false;  // start of scan: headers are over
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDD) return (jpeg[i + 4] | jpeg[i + 5]) != 0;
  }
  return false;
}

HostImage expected420(const TurboPlanes& t, PixelFormat format) {
  const auto w = static_cast<std::uint32_t>(t.width), h = static_cast<std::uint32_t>(t.height);
  HostImage im = makeImage(format, w, h);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) im.at(0, x, y) = t.y[std::size_t(y) * w + x];
  const int sx = t.subsamp == TJSAMP_GRAY ? 0 : t.chromaWidth / static_cast<int>(w / 2);
  const int sy = t.subsamp == TJSAMP_GRAY ? 0 : t.chromaHeight / static_cast<int>(h / 2);
  for (std::uint32_t y = 0; y < h / 2; ++y) {
    for (std::uint32_t x = 0; x < w / 2; ++x) {
      int u = 128, v = 128;
      if (sx > 0) {
        int su = 0, sv = 0;
        for (int j = 0; j < sy; ++j)
          for (int i = 0; i < sx; ++i) {
            const std::size_t at = std::size_t(y * sy + j) * t.chromaWidth + x * sx + i;
            su += t.u[at];
            sv += t.v[at];
          }
        const int n = sx * sy;
        u = (su + n / 2) / n;
        v = (sv + n / 2) / n;
      }
      if (format == PixelFormat::kNV12) {
        im.at(1, 2 * x, y) = static_cast<std::uint8_t>(u);
        im.at(1, 2 * x + 1, y) = static_cast<std::uint8_t>(v);
      } else {
        im.at(1, x, y) = static_cast<std::uint8_t>(u);
        im.at(2, x, y) = static_cast<std::uint8_t>(v);
      }
    }
  }
  return im;
}

DiffStats compare420(const HostImage& got, const HostImage& want, std::uint8_t poison) {
  DiffStats d;
  double sum = 0;
  std::size_t count = 0;
  for (std::uint32_t p = 0; p < want.planeCount; ++p) {
    for (std::uint32_t y = 0; y < want.rows[p]; ++y) {
      for (std::uint32_t x = 0; x < got.pitch[p]; ++x) {
        if (x >= want.rowBytes[p]) {
          d.paddingWritten += got.at(p, x, y) != poison;
          continue;
        }
        const int diff = std::abs(int(got.at(p, x, y)) - int(want.at(p, x, y)));
        d.max = std::max(d.max, diff);
        sum += diff;
        ++count;
      }
    }
  }
  d.mean = count ? sum / double(count) : 0;
  return d;
}

bool isProgressive(const std::vector<std::uint8_t>& jpeg) {
  for (std::size_t i = 2; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] != 0xFF) continue;
    if (jpeg[i + 1] == 0xC2) return true;
    if (jpeg[i + 1] == 0xC0 || jpeg[i + 1] == 0xC1 || jpeg[i + 1] == 0xDA) return false;
  }
  return false;
}

std::string subsampName(int subsamp) {
  switch (subsamp) {
    case TJSAMP_444: return "444";
    case TJSAMP_422: return "422";
    case TJSAMP_420: return "420";
    case TJSAMP_GRAY: return "grey";
    case TJSAMP_440: return "440";
    case TJSAMP_411: return "411";
    default: return "other";
  }
}

}  // namespace zerohop::test
