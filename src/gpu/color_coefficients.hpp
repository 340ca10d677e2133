#pragma once
// Internal: RGB <-> Y'CbCr coefficients for a ColorDesc (BT.601 / BT.709, limited / full range).
//   Y' = Kr R + Kg G + Kb B                         (R, G, B in 0..255)
//   limited: Y = 16 + 219/255 Y',  Cb = 128 + 224/255 (B - Y') / (2 (1 - Kb)),  Cr likewise with R, Kr
//   full:    Y = Y',               Cb = 128 +         (B - Y') / (2 (1 - Kb))
//   BT.601: Kr = 0.299, Kb = 0.114;  BT.709: Kr = 0.2126, Kb = 0.0722
// and its inverse, Y'CbCr -> RGB:  Y' = (Y - 16) 255/219 (full: Y),
//   Pb = (Cb - 128) 255/224 (full: Cb - 128), Pr likewise with Cr,
//   B = Y' + 2 (1 - Kb) Pb,  R = Y' + 2 (1 - Kr) Pr,  G = (Y' - Kr R - Kb B) / Kg
// Thread-safety: pure functions.

#include "gpu/kernels.hpp"
#include "zerohop/pixel_format.hpp"

namespace zerohop {

namespace colordetail {
struct Weights {
  double kr, kb, kg;
  bool limited;
};
inline Weights weightsOf(const ColorDesc& color) {
  const double kr = color.matrix == ColorMatrix::kBt709 ? 0.2126 : 0.299;
  const double kb = color.matrix == ColorMatrix::kBt709 ? 0.0722 : 0.114;
  return {kr, kb, 1.0 - kr - kb, color.range == ColorRange::kLimited};
}
}  // namespace colordetail

inline kernels::RgbToYuv rgbToYuvCoefficients(const ColorDesc& color) {
  const auto [kr, kb, kg, limited] = colordetail::weightsOf(color);
  const double ys = limited ? 219.0 / 255.0 : 1.0;
  const double cs = limited ? 224.0 / 255.0 : 1.0;
  const double cb = cs / (2.0 * (1.0 - kb));
  const double cr = cs / (2.0 * (1.0 - kr));
  kernels::RgbToYuv c{};
  c.yR = static_cast<float>(ys * kr);
  c.yG = static_cast<float>(ys * kg);
  c.yB = static_cast<float>(ys * kb);
  c.yOffset = limited ? 16.f : 0.f;
  c.uR = static_cast<float>(-kr * cb);
  c.uG = static_cast<float>(-kg * cb);
  c.uB = static_cast<float>((1.0 - kb) * cb);
  c.vR = static_cast<float>((1.0 - kr) * cr);
  c.vG = static_cast<float>(-kg * cr);
  c.vB = static_cast<float>(-kb * cr);
  return c;
}

inline kernels::YuvToRgb yuvToRgbCoefficients(const ColorDesc& color) {
  const auto [kr, kb, kg, limited] = colordetail::weightsOf(color);
  const double cs = limited ? 255.0 / 224.0 : 1.0;
  kernels::YuvToRgb c{};
  c.yScale = static_cast<float>(limited ? 255.0 / 219.0 : 1.0);
  c.yOffset = limited ? 16.f : 0.f;
  c.rV = static_cast<float>(2.0 * (1.0 - kr) * cs);
  c.bU = static_cast<float>(2.0 * (1.0 - kb) * cs);
  c.gU = static_cast<float>(-kb * 2.0 * (1.0 - kb) * cs / kg);
  c.gV = static_cast<float>(-kr * 2.0 * (1.0 - kr) * cs / kg);
  return c;
}

}  // namespace zerohop
