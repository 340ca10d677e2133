// Draws the frames of a share with OpenGL through EGL (no window: EGL_MESA_platform_surfaceless,
// or the default display), reading them in place where the driver can, else through one counted copy
// per frame (glBufferData), and writes the last frame it drew as a PNG. In place: a host ring's slot
// through GL_AMD_pinned_memory (a buffer object whose storage is the reader's mapping of the slot); a
// device ring's (CUDA VMM fds from another process) through GL_EXT_memory_object_fd (device_ring_gl.hpp:
// the ring's fd imported once, a buffer object per slot), after the frame's ready event
// (SharedFrame::waitReady); its copy goes through host memory (SharedFrame::copyToHost):
//   gl_reader SHARE_NAME OUT.png [--seconds S] [--copy] [--raw RAW]
// --copy forces the copy path; --raw writes the drawn frame's planes as the CPU read them (for tests).
// Each frame: the slot as a GL_R8UI texture buffer, one full-screen triangle whose fragment shader
// converts the frame's YUV (I420, NV12, YUYV, UYVY) into an RGBA8 texture this program owns, a fence
// sync the program waits on before it gives the slot back. The last two lines:
//   ring=host|device committed_to_sampled_us_p50=X p99=Y wake_us_p50=W draw_us_p50=D
//   frames=N copied_bytes=M import_us_p50=X
// (committed_to_sampled: the publisher's commit to the draw's fence; wake: commit -> next() returned;
// draw: the draw's first call -> its fence; import_us: host time to make the
// frame's buffer object: the import (with the ready wait on a device ring), or the copy).
// GL_EXT_memory_object_fd takes file descriptors that Vulkan or CUDA exported (device rings), not a
// host pointer, so host rings do not use it: docs/textures.md. --raw and the timecode need a host ring.
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>
#include <zerohop/clock.hpp>
#include <zerohop/error.hpp>
#include <zerohop/share.hpp>
#include <zerohop/timecode.hpp>

#include "device_ring_gl.hpp"
#include "png_writer.hpp"

#ifndef GL_EXTERNAL_VIRTUAL_MEMORY_BUFFER_AMD
#define GL_EXTERNAL_VIRTUAL_MEMORY_BUFFER_AMD 0x9160
#endif

using namespace std::chrono_literals;

namespace {

constexpr std::size_t kRingPage = 4096;  // docs/share-protocol.md: host slots are page aligned

[[noreturn]] void fail(zerohop::Errc code, const std::string& what) {
  throw zerohop::Error(code, what);
}

const char* kVertex = R"(#version 330 core
void main() {  // one triangle that covers the viewport
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
})";

// Same conversion as examples/vulkan_reader/yuv_to_rgba.comp, reading bytes of a GL_R8UI texture buffer.
const char* kFragment = R"(#version 330 core
uniform usamplerBuffer frameBytes;
uniform uint width, height, format, offset0, offset1, offset2, pitch0, pitch1, bt709, fullRange;
out vec4 color;
float byteAt(uint offset) { return float(texelFetch(frameBytes, int(offset)).r); }
void main() {
  uvec2 xy = uvec2(gl_FragCoord.xy);
  uint cx = xy.x / 2u, cy = xy.y / 2u;
  float y, u, v;
  if (format == 0u) {
    y = byteAt(offset0 + xy.y * pitch0 + xy.x);
    u = byteAt(offset1 + cy * pitch1 + cx);
    v = byteAt(offset2 + cy * pitch1 + cx);
  } else if (format == 1u) {
    y = byteAt(offset0 + xy.y * pitch0 + xy.x);
    u = byteAt(offset1 + cy * pitch1 + 2u * cx);
    v = byteAt(offset1 + cy * pitch1 + 2u * cx + 1u);
  } else {
    uint row = offset0 + xy.y * pitch0 + cx * 4u;
    y = byteAt(row + (format == 2u ? (xy.x & 1u) * 2u : 1u + (xy.x & 1u) * 2u));
    u = byteAt(row + (format == 2u ? 1u : 0u));
    v = byteAt(row + (format == 2u ? 3u : 2u));
  }
  float c = fullRange != 0u ? y / 255.0 : (y - 16.0) / 219.0;
  float d = fullRange != 0u ? (u - 128.0) / 255.0 : (u - 128.0) / 224.0;
  float e = fullRange != 0u ? (v - 128.0) / 255.0 : (v - 128.0) / 224.0;
  float kr = bt709 != 0u ? 0.2126 : 0.299;
  float kb = bt709 != 0u ? 0.0722 : 0.114;
  float r = c + 2.0 * (1.0 - kr) * e;
  float b = c + 2.0 * (1.0 - kb) * d;
  float g = (c - kr * r - kb * b) / (1.0 - kr - kb);
  color = vec4(clamp(vec3(r, g, b), 0.0, 1.0), 1.0);
})";

std::uint32_t shaderFormat(zerohop::PixelFormat f) {
  switch (f) {
    case zerohop::PixelFormat::kI420:
      return 0;
    case zerohop::PixelFormat::kNV12:
      return 1;
    case zerohop::PixelFormat::kYUYV:
      return 2;
    case zerohop::PixelFormat::kUYVY:
      return 3;
    default:
      fail(zerohop::Errc::kUnsupported,
           "gl_reader draws I420, NV12, YUYV and UYVY frames, not " + std::string(zerohop::formatName(f)));
  }
}

// The bytes the frame's planes span from data[0] (the last plane's last row included).
std::size_t imageSpan(const zerohop::Frame& f) {
  const zerohop::ImageLayout l = zerohop::computeLayout(f.format, f.width, f.height);
  std::size_t end = 0;
  for (std::uint32_t p = 0; p < f.planeCount; ++p)
    end = std::max(
        end, static_cast<std::size_t>(f.data[p] - f.data[0]) + std::size_t{f.pitch[p]} * l.planes[p].rows);
  return end;
}

std::vector<std::uint8_t> planeBytes(const zerohop::Frame& f) {
  const zerohop::ImageLayout l = zerohop::computeLayout(f.format, f.width, f.height);
  std::vector<std::uint8_t> out;
  for (std::uint32_t p = 0; p < l.planeCount; ++p)
    for (std::uint32_t y = 0; y < l.planes[p].rows; ++y) {
      const std::uint8_t* row = f.data[p] + std::size_t{y} * f.pitch[p];
      out.insert(out.end(), row, row + l.planes[p].widthBytes);
    }
  return out;
}

bool hasExtension(const char* name) {
  GLint n = 0;
  glGetIntegerv(GL_NUM_EXTENSIONS, &n);
  for (GLint i = 0; i < n; ++i)
    if (std::strcmp(reinterpret_cast<const char*>(glGetStringi(GL_EXTENSIONS, static_cast<GLuint>(i))),
                    name) == 0)
      return true;
  return false;
}

// EGL display + a headless OpenGL 3.3 core context, torn down in reverse.
struct GlContext {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  GlContext() {
    auto getPlatformDisplay =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (getPlatformDisplay)
      display = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (display == EGL_NO_DISPLAY) display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    EGLint major = 0, minor = 0;
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, &major, &minor))
      fail(zerohop::Errc::kUnavailable,
           "eglInitialize: no EGL display (Debian: libegl-mesa0 for Mesa's llvmpipe)");
    if (!eglBindAPI(EGL_OPENGL_API)) fail(zerohop::Errc::kUnsupported, "eglBindAPI(EGL_OPENGL_API) failed");
    const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                            3,
                            EGL_CONTEXT_MINOR_VERSION,
                            3,
                            EGL_CONTEXT_OPENGL_PROFILE_MASK,
                            EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                            EGL_NONE};
    context =
        eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);  // EGL_KHR_no_config_context
    if (context == EGL_NO_CONTEXT || !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
      const EGLint err = eglGetError();
      eglTerminate(display);
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%x", err);
      fail(zerohop::Errc::kUnsupported,
           std::string("eglCreateContext/eglMakeCurrent (OpenGL 3.3 core, no surface): EGL error ") + hex);
    }
  }
  GlContext(const GlContext&) = delete;
  GlContext& operator=(const GlContext&) = delete;
  ~GlContext() {
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(display, context);
    eglTerminate(display);
  }
};

GLuint compile(GLenum kind, const char* source) {
  const GLuint s = glCreateShader(kind);
  glShaderSource(s, 1, &source, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    fail(zerohop::Errc::kInternal, std::string("glCompileShader: ") + log);
  }
  return s;
}

// One frame as a GL buffer object + texture buffer over it; in place (pinned) or copied.
// Deleting them waits for nothing: delete only after the fence of the draw that read them.
struct FrameTexture {
  GLuint buffer = 0;
  GLuint texture = 0;
  ~FrameTexture() {
    if (texture) glDeleteTextures(1, &texture);
    if (buffer) glDeleteBuffers(1, &buffer);
  }
};

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> positional;
  double seconds = 3.0;
  bool forceCopy = false;
  std::string rawPath;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--copy")
      forceCopy = true;
    else if (a == "--raw" && i + 1 < argc)
      rawPath = argv[++i];
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else
      positional.push_back(a);
  }
  if (positional.size() != 2 || seconds <= 0) {
    std::fprintf(stderr, "usage: %s SHARE_NAME OUT.png [--seconds S] [--copy] [--raw RAW]\n", argv[0]);
    return 2;
  }
  zerohop::SubscribeOptions so;
  so.waitForPublisher = 5s;
  zerohop::Subscriber sub(positional[0], so);
  GlContext gl;
  std::fprintf(stderr, "opengl: %s, %s\n", reinterpret_cast<const char*>(glGetString(GL_RENDERER)),
               reinterpret_cast<const char*>(glGetString(GL_VERSION)));

  std::string refusal;  // why frames are copied; said once
  if (forceCopy) refusal = "--copy asked for the copy path";
  const bool pinnedMemory = hasExtension("GL_AMD_pinned_memory");  // host rings in place
  bool refusalSaid = false;
  auto sayRefusal = [&] {
    if (refusalSaid) return;
    refusalSaid = true;
    std::fprintf(stderr,
                 "gl_reader: frames are copied, not imported in place (%s); each frame costs one copy, "
                 "counted in copied_bytes\n",
                 refusal.c_str());
  };

  const GLuint program = glCreateProgram();
  const GLuint vs = compile(GL_VERTEX_SHADER, kVertex), fs = compile(GL_FRAGMENT_SHADER, kFragment);
  glAttachShader(program, vs);
  glAttachShader(program, fs);
  glLinkProgram(program);
  GLint linked = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &linked);
  if (!linked) fail(zerohop::Errc::kInternal, "glLinkProgram failed");
  glUseProgram(program);
  auto uniform = [&](const char* name, std::uint32_t v) {
    glUniform1ui(glGetUniformLocation(program, name), v);
  };
  glUniform1i(glGetUniformLocation(program, "frameBytes"), 0);
  GLuint vao = 0, target = 0, fbo = 0;
  glGenVertexArrays(1, &vao);
  glBindVertexArray(vao);

  std::optional<DeviceRingGl> deviceGl;  // made at the first device frame
  std::vector<std::uint8_t> hostCopy;    // a device frame's bytes on the copy path, reused frame to frame
  std::uint32_t width = 0, height = 0;
  bool onDevice = false;
  std::vector<double> importUs, sampledUs, wakeUs, drawUs;  // + commit -> next() returned; draw -> fence
  std::uint64_t frames = 0, copiedBytes = 0, overrun = 0;
  std::optional<zerohop::Timecode> drawnTimecode;
  std::uint64_t drawnSeq = 0;
  bool drawnIntact = false;
  zerohop::ColorDesc drawnColor{};
  std::vector<std::uint8_t> drawnRaw;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  const auto hardStop = deadline + 5s;  // past the deadline only to end on an intact frame
  while (std::chrono::steady_clock::now() < deadline ||
         (!drawnIntact && std::chrono::steady_clock::now() < hardStop)) {
    auto shared = sub.next(2s);
    if (!shared) {
      if (importUs.empty() || std::chrono::steady_clock::now() >= deadline) {
        std::fprintf(stderr, "no frame from '%s' within 2 s\n", positional[0].c_str());
        return 1;
      }
      std::fprintf(stderr, "no frame from '%s' for 2 s (the publisher stalled?): reading on\n",
                   positional[0].c_str());
      continue;
    }
    const zerohop::Frame& f = shared->frame();
    const std::int64_t committedNs = shared->publishNs();
    wakeUs.push_back((zerohop::monotonicNs() - committedNs) / 1e3);
    onDevice = f.memory == zerohop::MemoryKind::kDevice;
    if (onDevice && !rawPath.empty()) fail(zerohop::Errc::kInvalidArgument, "--raw needs a host ring");
    std::optional<zerohop::Timecode> tc;
    std::vector<std::uint8_t> raw;
    if (!onDevice) {
      tc = zerohop::readTimecode(f);
      if (!rawPath.empty()) raw = planeBytes(f);
    }
    if (target == 0) {  // the RGBA8 texture frames are drawn into
      width = f.width;
      height = f.height;
      glGenTextures(1, &target);
      glBindTexture(GL_TEXTURE_2D, target);
      glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, static_cast<GLsizei>(width), static_cast<GLsizei>(height));
      glGenFramebuffers(1, &fbo);
      glBindFramebuffer(GL_FRAMEBUFFER, fbo);
      glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, target, 0);
      if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
        fail(zerohop::Errc::kUnsupported, "the RGBA8 framebuffer is incomplete");
      glViewport(0, 0, static_cast<GLsizei>(width), static_cast<GLsizei>(height));
    }
    const std::size_t span = imageSpan(f);
    std::optional<FrameTexture> tex(std::in_place);
    const std::int64_t t0 = zerohop::monotonicNs();
    GLuint slotTexture = 0;                  // a device ring's slot, imported and kept by deviceGl
    const std::uint8_t* copyFrom = nullptr;  // the frame's bytes in host memory, when it is copied
    if (onDevice) {
      if (!deviceGl) deviceGl.emplace();
      const std::optional<zerohop::DeviceRingMemory> mem = shared->deviceMemory();
      if (refusal.empty() && !mem)
        refusal = "the ring has no memory fd to import (legacy CUDA IPC, or the publisher's own process)";
      if (refusal.empty()) {
        slotTexture = deviceGl->slotTexture(*mem, std::max(span, f.capacity));
        if (slotTexture == 0) refusal = deviceGl->why();
      }
      if (slotTexture != 0) {
        shared->waitReady();  // the producer's write completed: the draw may read the slot at once
      } else {
        hostCopy.resize(span);
        shared->copyToHost(hostCopy.data(), span);  // after the ready event; device to host
        copyFrom = hostCopy.data();
      }
    } else {
      glGenBuffers(1, &tex->buffer);
      if (refusal.empty() && !pinnedMemory) refusal = "the GL driver has no GL_AMD_pinned_memory";
      bool imported = false;
      if (refusal.empty()) {
        const auto base = reinterpret_cast<std::uintptr_t>(f.data[0]);
        const std::size_t size =
            (std::max(span, f.capacity) + kRingPage - 1) / kRingPage * kRingPage;  // inside the slot
        if (base % kRingPage != 0) {
          refusal = "the slot is not page aligned";
        } else {
          while (glGetError() != GL_NO_ERROR) {
          }
          glBindBuffer(GL_EXTERNAL_VIRTUAL_MEMORY_BUFFER_AMD, tex->buffer);
          glBufferData(GL_EXTERNAL_VIRTUAL_MEMORY_BUFFER_AMD, static_cast<GLsizeiptr>(size), f.data[0],
                       GL_STREAM_DRAW);
          const GLenum err = glGetError();
          glBindBuffer(GL_EXTERNAL_VIRTUAL_MEMORY_BUFFER_AMD, 0);
          if (err == GL_NO_ERROR) {
            imported = true;
          } else {
            char hex[16];
            std::snprintf(hex, sizeof hex, "0x%x", err);
            refusal =
                std::string("glBufferData(GL_EXTERNAL_VIRTUAL_MEMORY_BUFFER_AMD) over the slot: GL error ") +
                hex;
            glDeleteBuffers(1, &tex->buffer);  // a buffer object that failed to pin is not reused
            tex->buffer = 0;
          }
        }
      }
      if (!imported) copyFrom = f.data[0];
    }
    if (copyFrom != nullptr) {
      sayRefusal();
      if (tex->buffer == 0) glGenBuffers(1, &tex->buffer);
      glBindBuffer(GL_TEXTURE_BUFFER, tex->buffer);
      glBufferData(GL_TEXTURE_BUFFER, static_cast<GLsizeiptr>(span), copyFrom,
                   GL_STREAM_DRAW);  // the one copy
      copiedBytes += span;
    }
    if (slotTexture != 0) {
      glBindTexture(GL_TEXTURE_BUFFER, slotTexture);
    } else {
      glGenTextures(1, &tex->texture);
      glBindTexture(GL_TEXTURE_BUFFER, tex->texture);
      glTexBuffer(GL_TEXTURE_BUFFER, GL_R8UI, tex->buffer);
    }
    importUs.push_back((zerohop::monotonicNs() - t0) / 1e3);
    if (f.width != width || f.height != height)
      fail(zerohop::Errc::kUnsupported, "the share's frame size changed");

    const std::int64_t drawStart = zerohop::monotonicNs();
    glActiveTexture(GL_TEXTURE0);
    uniform("width", f.width);
    uniform("height", f.height);
    uniform("format", shaderFormat(f.format));
    uniform("offset0", 0);
    uniform("offset1", f.planeCount > 1 ? static_cast<std::uint32_t>(f.data[1] - f.data[0]) : 0);
    uniform("offset2", f.planeCount > 2 ? static_cast<std::uint32_t>(f.data[2] - f.data[0]) : 0);
    uniform("pitch0", f.pitch[0]);
    uniform("pitch1", f.planeCount > 1 ? f.pitch[1] : 0);
    uniform("bt709", f.color.matrix == zerohop::ColorMatrix::kBt709 ? 1u : 0u);
    uniform("fullRange", f.color.range == zerohop::ColorRange::kFull ? 1u : 0u);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    const GLenum waited = glClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 10'000'000'000ull);
    glDeleteSync(fence);
    if (waited != GL_ALREADY_SIGNALED && waited != GL_CONDITION_SATISFIED)
      fail(zerohop::Errc::kTimeout, "glClientWaitSync: the draw did not finish within 10 s");
    const std::int64_t drawn = zerohop::monotonicNs();
    drawUs.push_back((drawn - drawStart) / 1e3);
    sampledUs.push_back((drawn - committedNs) / 1e3);
    if (const GLenum err = glGetError(); err != GL_NO_ERROR) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%x", err);
      fail(zerohop::Errc::kDevice, std::string("OpenGL error after the draw: ") + hex);
    }
    ++frames;
    drawnIntact = shared->valid();  // the GPU is done with the slot: was it overwritten meanwhile?
    if (!drawnIntact) ++overrun;
    drawnTimecode = tc;
    drawnSeq = f.sequence;
    drawnColor = f.color;
    drawnRaw = std::move(raw);
    // tex (buffer object over the slot, texture) is deleted here, before the lease below is given back
    tex.reset();
    shared->release();
  }

  std::vector<std::uint8_t> pixels(std::size_t{width} * height * 4);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, static_cast<GLsizei>(width), static_cast<GLsizei>(height), GL_RGBA, GL_UNSIGNED_BYTE,
               pixels.data());
  // GL's row 0 is gl_FragCoord.y = 0.5, which the shader drew from the frame's row 0: no flip.
  if (const std::string err = writePngRgb(positional[1], pixels.data(), width, height, width * 4);
      !err.empty())
    fail(zerohop::Errc::kIo, err);
  if (!rawPath.empty()) {
    std::FILE* out = std::fopen(rawPath.c_str(), "wb");
    const bool ok = out && std::fwrite(drawnRaw.data(), 1, drawnRaw.size(), out) == drawnRaw.size();
    if (!out || std::fclose(out) != 0 || !ok)
      fail(zerohop::Errc::kIo, "write " + rawPath + ": " + std::strerror(errno));
  }
  glDeleteFramebuffers(1, &fbo);
  glDeleteTextures(1, &target);
  glDeleteVertexArrays(1, &vao);
  glDeleteProgram(program);
  glDeleteShader(vs);
  glDeleteShader(fs);

  deviceGl.reset();  // its slots' buffer objects and the imported ring, before the context goes
  std::sort(importUs.begin(), importUs.end());
  std::sort(sampledUs.begin(), sampledUs.end());
  std::sort(wakeUs.begin(), wakeUs.end());
  std::sort(drawUs.begin(), drawUs.end());
  std::printf("path=%s%s%s\n", copiedBytes ? "copy" : "import",
              refusal.empty() ? "" : " reason=", refusal.c_str());
  std::printf("ring=%s committed_to_sampled_us_p50=%.1f p99=%.1f wake_us_p50=%.1f draw_us_p50=%.1f\n",
              onDevice ? "device" : "host", sampledUs[sampledUs.size() / 2],
              sampledUs[std::min(sampledUs.size() - 1, sampledUs.size() * 99 / 100)],
              wakeUs[wakeUs.size() / 2], drawUs[drawUs.size() / 2]);
  std::printf(
      "drawn seq=%llu intact=%d timecode_seq=%ld timecode_ms=%lld overrun=%llu size=%ux%u format=%s "
      "matrix=%s range=%s\n",
      static_cast<unsigned long long>(drawnSeq), drawnIntact ? 1 : 0,
      drawnTimecode ? static_cast<long>(drawnTimecode->sequence) : -1L,
      drawnTimecode ? static_cast<long long>(drawnTimecode->wallClockMs) : -1LL,
      static_cast<unsigned long long>(overrun), width, height,
      std::string(zerohop::formatName(sub.info().layout.format)).c_str(),
      drawnColor.matrix == zerohop::ColorMatrix::kBt709 ? "bt709" : "bt601",
      drawnColor.range == zerohop::ColorRange::kFull ? "full" : "limited");
  std::printf("frames=%llu copied_bytes=%llu import_us_p50=%.1f\n", static_cast<unsigned long long>(frames),
              static_cast<unsigned long long>(copiedBytes), importUs[importUs.size() / 2]);
  return drawnIntact ? 0 : 3;
} catch (const zerohop::Error& e) {
  std::fprintf(stderr, "%s: %s\n", zerohop::errcName(e.code()), e.what());
  return 1;
}
