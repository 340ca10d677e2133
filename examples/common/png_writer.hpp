#pragma once
// A minimal PNG writer for the examples (vulkan_reader, gl_reader): 8-bit RGB, no interlace,
// every row filter 0, deflated by zlib (link ZLIB::ZLIB).
#include <cstdint>
#include <string>

/// Writes `width` x `height` RGBA pixels (`pitch` bytes a row; alpha dropped) as an RGB PNG.
/// Returns an empty string, or why it failed.
std::string writePngRgb(const std::string& path, const std::uint8_t* rgba, std::uint32_t width,
                        std::uint32_t height, std::uint32_t pitch);
