#version 450
// Draws one frame of a share, read from the storage buffer the frame was imported as (its planes at
// byte offsets, rows `pitch` bytes apart), into an RGBA8 image: BT.601 or BT.709, limited or full range.
// Regenerate yuv_to_rgba.spv.h after a change: glslangValidator -V --vn kYuvToRgbaSpirv -o yuv_to_rgba.spv.h yuv_to_rgba.comp
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer FrameBytes { uint words[]; };
layout(rgba8, binding = 1) writeonly uniform image2D outImage;
layout(push_constant) uniform Params {
  uint width;
  uint height;
  uint format;  // 0 I420, 1 NV12, 2 YUYV, 3 UYVY
  uint offset0;
  uint offset1;
  uint offset2;
  uint pitch0;
  uint pitch1;
  uint bt709;
  uint fullRange;
} p;

uint byteAt(uint offset) { return (words[offset >> 2] >> ((offset & 3u) * 8u)) & 0xffu; }

void main() {
  uvec2 xy = gl_GlobalInvocationID.xy;
  if (xy.x >= p.width || xy.y >= p.height) return;
  uint cx = xy.x / 2u, cy = xy.y / 2u;
  float y, u, v;
  if (p.format == 0u) {
    y = float(byteAt(p.offset0 + xy.y * p.pitch0 + xy.x));
    u = float(byteAt(p.offset1 + cy * p.pitch1 + cx));
    v = float(byteAt(p.offset2 + cy * p.pitch1 + cx));
  } else if (p.format == 1u) {
    y = float(byteAt(p.offset0 + xy.y * p.pitch0 + xy.x));
    u = float(byteAt(p.offset1 + cy * p.pitch1 + 2u * cx));
    v = float(byteAt(p.offset1 + cy * p.pitch1 + 2u * cx + 1u));
  } else {
    uint row = p.offset0 + xy.y * p.pitch0 + cx * 4u;  // one macropixel: Y0 U Y1 V (YUYV), U Y0 V Y1 (UYVY)
    uint yOff = p.format == 2u ? (xy.x & 1u) * 2u : 1u + (xy.x & 1u) * 2u;
    y = float(byteAt(row + yOff));
    u = float(byteAt(row + (p.format == 2u ? 1u : 0u)));
    v = float(byteAt(row + (p.format == 2u ? 3u : 2u)));
  }
  float c = p.fullRange != 0u ? y / 255.0 : (y - 16.0) / 219.0;
  float d = p.fullRange != 0u ? (u - 128.0) / 255.0 : (u - 128.0) / 224.0;
  float e = p.fullRange != 0u ? (v - 128.0) / 255.0 : (v - 128.0) / 224.0;
  float kr = p.bt709 != 0u ? 0.2126 : 0.299;
  float kb = p.bt709 != 0u ? 0.0722 : 0.114;
  float kg = 1.0 - kr - kb;
  float r = c + 2.0 * (1.0 - kr) * e;
  float b = c + 2.0 * (1.0 - kb) * d;
  float g = (c - kr * r - kb * b) / kg;
  imageStore(outImage, ivec2(xy), vec4(clamp(vec3(r, g, b), 0.0, 1.0), 1.0));
}
