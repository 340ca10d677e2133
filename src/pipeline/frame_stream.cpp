// FrameStream (zerohop/frame_stream.hpp): a Publisher in a private directory, read in this process
// by a Pipeline whose source is that share.
#include "zerohop/frame_stream.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "zerohop/error.hpp"

namespace zerohop {
namespace {

std::atomic<unsigned> streamsMade{0};

/// A 0700 directory of our own for the input ring's socket, removed with it.
class PrivateDirectory {
 public:
  PrivateDirectory() {
    const char* base = std::getenv("XDG_RUNTIME_DIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/zerohop-stream-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throwErrno("mkdtemp", errno, tmpl);
    path_ = tmpl;
  }
  ~PrivateDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  PrivateDirectory(const PrivateDirectory&) = delete;
  PrivateDirectory& operator=(const PrivateDirectory&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

SlotLayout inputLayout(const FrameStreamConfig& c) {
  if (isCompressed(c.format))
    throw Error(Errc::kInvalidArgument, "FrameStream takes raw frames; got " + std::string(formatName(c.format)));
  if (c.fps <= 0 || c.fps > 240) throw Error(Errc::kInvalidArgument, "FrameStream: fps must be in (0, 240]");
  if (c.memory == MemoryKind::kDevice)
    return SlotLayout::deviceImages(computeLayout(c.format, c.width, c.height, 256), c.slots, c.cudaDevice);
  if (c.memory != MemoryKind::kHost)
    throw Error(Errc::kInvalidArgument, "FrameStream: memory must be kHost or kDevice");
  return SlotLayout::images(computeLayout(c.format, c.width, c.height, 64), c.slots);
}

PipelineConfig pipelineConfig(const FrameStreamConfig& c, const std::string& dir, const std::string& input) {
  PipelineConfig p;
  std::ostringstream spec;
  spec << "share:" << input << "?dir=" << dir << "&fps=" << static_cast<int>(c.fps + 0.5);
  p.source = parseSourceSpec(spec.str());
  p.source.fps = c.fps;
  p.encoder = c.encoder;
  p.stream = c.stream;
  p.gpu = c.memory == MemoryKind::kDevice && c.gpu == "auto" ? std::to_string(c.cudaDevice) : c.gpu;
  p.shareName = c.shareName;
  p.whipUrl = c.whipUrl;
  p.whipToken = c.whipToken;
  p.janus = c.janus;
  return p;
}

}  // namespace

struct FrameStream::Impl {
  explicit Impl(const FrameStreamConfig& c)
      : input("input" + std::to_string(::getpid()) + "-" + std::to_string(streamsMade++), inputLayout(c),
              [&] {
                ShareOptions o;
                o.directory = dir.path();
                return o;
              }()),
        pipeline(pipelineConfig(c, dir.path(), input.name())) {
    for (const auto& sink : c.sinks) pipeline.addUnitSink(sink);
    pipeline.start();
  }
  PrivateDirectory dir;
  Publisher input;
  Pipeline pipeline;  // reads `input`: declared after it, so it stops first
};

FrameStream::FrameStream(FrameStreamConfig config) : impl_(std::make_unique<Impl>(config)) {}
FrameStream::~FrameStream() = default;
Publisher& FrameStream::input() { return impl_->input; }
std::string FrameStream::url() const { return impl_->pipeline.url(); }
PipelineStatus FrameStream::status() const { return impl_->pipeline.status(); }
std::string FrameStream::statsJson() const { return impl_->pipeline.statsJson(); }
std::string FrameStream::failure() const { return impl_->pipeline.failure(); }

}  // namespace zerohop
