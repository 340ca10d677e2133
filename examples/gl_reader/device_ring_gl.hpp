// A device ring (CUDA VMM POSIX fds, SharedFrame::deviceMemory()) imported into OpenGL through
// GL_EXT_memory_object_fd: the ring's allocation becomes one GL memory object, imported once per
// publisher session, and each slot a buffer object over its part of it (glBufferStorageMemEXT at the
// slot's offset), made on first use and kept. Sampled like a host frame: a GL_R8UI texture buffer.
// Khronos does not promise that an fd CUDA exported imports into GL: when the driver refuses, why() says
// so and the caller copies (SharedFrame::copyToHost). Needs a current GL context; not thread-safe.
#pragma once

#include <EGL/egl.h>
#include <GL/gl.h>
#include <GL/glext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <zerohop/share.hpp>

class DeviceRingGl {
 public:
  /// Loads the extension's entry points; why() is non-empty when the context lacks them.
  DeviceRingGl() {
    GLint n = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &n);
    bool fdExt = false;
    for (GLint i = 0; i < n; ++i)
      fdExt |= std::strcmp(reinterpret_cast<const char*>(glGetStringi(GL_EXTENSIONS, static_cast<GLuint>(i))),
                           "GL_EXT_memory_object_fd") == 0;
    create_ =
        reinterpret_cast<PFNGLCREATEMEMORYOBJECTSEXTPROC>(eglGetProcAddress("glCreateMemoryObjectsEXT"));
    delete_ =
        reinterpret_cast<PFNGLDELETEMEMORYOBJECTSEXTPROC>(eglGetProcAddress("glDeleteMemoryObjectsEXT"));
    import_ = reinterpret_cast<PFNGLIMPORTMEMORYFDEXTPROC>(eglGetProcAddress("glImportMemoryFdEXT"));
    storage_ = reinterpret_cast<PFNGLBUFFERSTORAGEMEMEXTPROC>(eglGetProcAddress("glBufferStorageMemEXT"));
    if (!fdExt || !create_ || !delete_ || !import_ || !storage_)
      why_ = "the GL driver has no GL_EXT_memory_object_fd";
  }
  DeviceRingGl(const DeviceRingGl&) = delete;
  DeviceRingGl& operator=(const DeviceRingGl&) = delete;
  ~DeviceRingGl() { dropRing(); }

  /// Why frames are not imported ("" while they are).
  const std::string& why() const { return why_; }

  /// The texture buffer of `mem`'s slot (bytes from the slot's start, `slotBytes` of them), importing
  /// the ring on first use or when its publisher session changed; 0 with why() set when it cannot.
  GLuint slotTexture(const zerohop::DeviceRingMemory& mem, std::size_t slotBytes) {
    if (!why_.empty()) return 0;
    if (mem.slotStride == 0 || slotBytes > mem.slotStride)
      return refuse("the ring's slot stride is smaller than a frame");
    if (memory_ == 0 || mem.sessionId != sessionId_) {
      dropRing();
      if (!importRing(mem)) return 0;
    }
    const auto slot = static_cast<std::size_t>(mem.slotOffset / mem.slotStride);
    if (slot >= slots_.size()) slots_.resize(slot + 1);
    Slot& s = slots_[slot];
    if (s.texture != 0) return s.texture;
    while (glGetError() != GL_NO_ERROR) {
    }
    glGenBuffers(1, &s.buffer);
    glBindBuffer(GL_TEXTURE_BUFFER, s.buffer);
    storage_(GL_TEXTURE_BUFFER, static_cast<GLsizeiptr>(slotBytes), memory_, mem.slotOffset);
    glBindBuffer(GL_TEXTURE_BUFFER, 0);
    if (const GLenum err = glGetError(); err != GL_NO_ERROR) {
      glDeleteBuffers(1, &s.buffer);
      s.buffer = 0;
      return refuse("glBufferStorageMemEXT (a slot of the imported ring): GL error " + hex(err));
    }
    glGenTextures(1, &s.texture);
    glBindTexture(GL_TEXTURE_BUFFER, s.texture);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_R8UI, s.buffer);
    return s.texture;
  }

 private:
  struct Slot {
    GLuint buffer = 0, texture = 0;
  };

  bool importRing(const zerohop::DeviceRingMemory& mem) {
    const int fd = ::dup(mem.fd);  // GL owns what it imports; the reader's session keeps its own
    if (fd < 0) return refuse(std::string("dup(the ring's fd): ") + std::strerror(errno)) != 0;
    while (glGetError() != GL_NO_ERROR) {
    }
    create_(1, &memory_);
    import_(memory_, mem.allocationBytes, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
    if (const GLenum err = glGetError(); err != GL_NO_ERROR) {
      ::close(fd);  // ownership passes to GL only on success
      delete_(1, &memory_);
      memory_ = 0;
      return refuse("glImportMemoryFdEXT (the ring's CUDA VMM fd, opaque fd): GL error " + hex(err)) != 0;
    }
    sessionId_ = mem.sessionId;
    return true;
  }
  void dropRing() {  // call only when no draw reads the slots any more (after its fence)
    for (Slot& s : slots_) {
      if (s.texture) glDeleteTextures(1, &s.texture);
      if (s.buffer) glDeleteBuffers(1, &s.buffer);
    }
    slots_.clear();
    if (memory_) delete_(1, &memory_);
    memory_ = 0;
  }
  GLuint refuse(const std::string& why) {
    why_ = why;
    return 0;
  }
  static std::string hex(GLenum v) {
    char s[16];
    std::snprintf(s, sizeof s, "0x%x", v);
    return s;
  }

  PFNGLCREATEMEMORYOBJECTSEXTPROC create_ = nullptr;
  PFNGLDELETEMEMORYOBJECTSEXTPROC delete_ = nullptr;
  PFNGLIMPORTMEMORYFDEXTPROC import_ = nullptr;
  PFNGLBUFFERSTORAGEMEMEXTPROC storage_ = nullptr;
  GLuint memory_ = 0;
  std::uint64_t sessionId_ = 0;
  std::vector<Slot> slots_;
  std::string why_;
};
