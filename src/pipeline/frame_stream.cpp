// FrameStream (zerohop/frame_stream.hpp): a FrameInput read in this process by a Pipeline whose
// source is that input (PipelineConfig::openSource).
#include "zerohop/frame_stream.hpp"

#include "zerohop/error.hpp"

namespace zerohop {
namespace {

FrameInputConfig inputConfig(const FrameStreamConfig& c) {
  FrameInputConfig i;
  i.format = c.format;
  i.width = c.width;
  i.height = c.height;
  i.fps = c.fps;
  i.memory = c.memory;
  i.cudaDevice = c.cudaDevice;
  i.slots = c.slots;
  i.name = "your frames (FrameStream)";
  return i;
}

PipelineConfig pipelineConfig(const FrameStreamConfig& c, FrameInput& input) {
  PipelineConfig p;
  p.openSource = [&input](const SourceOptions& options) { return input.openSource(options); };
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
  explicit Impl(const FrameStreamConfig& c) : input(inputConfig(c)), pipeline(pipelineConfig(c, input)) {
    for (const auto& sink : c.sinks) pipeline.addUnitSink(sink);
    pipeline.start();
  }
  FrameInput input;
  Pipeline pipeline;  // reads `input`: declared after it, so it stops first
};

FrameStream::FrameStream(FrameStreamConfig config) : impl_(std::make_unique<Impl>(config)) {}
FrameStream::~FrameStream() = default;
FrameInput& FrameStream::input() { return impl_->input; }
std::string FrameStream::url() const { return impl_->pipeline.url(); }
PipelineStatus FrameStream::status() const { return impl_->pipeline.status(); }
std::string FrameStream::statsJson() const { return impl_->pipeline.statsJson(); }
std::optional<Error> FrameStream::failure() const { return impl_->pipeline.failure(); }

}  // namespace zerohop
