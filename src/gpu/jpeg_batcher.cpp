// JpegBatcher (jpeg_batcher.hpp): the cameras' frames queue as requests on the callers' stacks;
// one worker decodes what is queued in one batched call and wakes their callers.
#include "gpu/jpeg_batcher.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

struct Request {
  const Frame* jpeg = nullptr;
  Frame* dst = nullptr;
  bool done = false;
  std::exception_ptr error;
  std::condition_variable finished;  // its caller waits here: one wake-up per frame, not per batch
};

JpegBatcherOptions validated(JpegBatcherOptions o) {
  if (o.maxBatch == 0 || o.maxBatch > 1024) {
    throw Error(Errc::kInvalidArgument, "JpegBatcher: maxBatch must be 1..1024, got " + std::to_string(o.maxBatch));
  }
  if (o.decoders < 1 || o.decoders > 8) {
    throw Error(Errc::kInvalidArgument, "JpegBatcher: decoders must be 1..8, got " + std::to_string(o.decoders));
  }
  return o;
}

}  // namespace

struct JpegBatcher::Impl {
  explicit Impl(JpegBatcherOptions o) : options(validated(o)) {
    for (int i = 0; i < options.decoders; ++i) decoders.push_back(std::make_unique<GpuJpegDecoder>(o.device, o.backend));
    for (auto& d : decoders) workers.emplace_back([this, dec = d.get()] { run(*dec); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    arrived.notify_all();
    for (auto& w : workers) w.join();
    std::lock_guard lock(mutex);
    for (Request* r : queue) finishLocked(*r, std::make_exception_ptr(Error(Errc::kUnavailable, "JpegBatcher: stopped")));
    queue.clear();
  }

  void decode(const Frame& jpeg, Frame& dst) {
    Request r;
    r.jpeg = &jpeg;
    r.dst = &dst;
    std::unique_lock lock(mutex);
    if (stopping) throw Error(Errc::kUnavailable, "JpegBatcher: stopped");
    queue.push_back(&r);
    arrived.notify_one();
    r.finished.wait(lock, [&] { return r.done; });
    if (r.error) std::rethrow_exception(r.error);
  }

  void run(GpuJpegDecoder& decoder) {
    std::vector<Request*> batch;
    std::vector<const Frame*> in;
    std::vector<Frame*> out;
    for (;;) {
      {
        std::unique_lock lock(mutex);
        arrived.wait(lock, [&] { return stopping || !queue.empty(); });
        if (stopping) return;
        if (options.gather.count() > 0) {
          arrived.wait_for(lock, options.gather, [&] { return stopping || queue.size() >= options.maxBatch; });
          if (stopping) return;
        }
        const std::size_t n = std::min(queue.size(), options.maxBatch);
        batch.assign(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
        queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
      }
      in.clear();
      out.clear();
      for (Request* r : batch) {
        in.push_back(r->jpeg);
        out.push_back(r->dst);
      }
      std::vector<std::exception_ptr> errors(batch.size());
      bool retried = false;
      try {
        decoder.decodeBatch(in, out);
      } catch (const std::exception& e) {
        // One bad frame fails the whole call: decode each alone, so only its caller hears of it.
        retried = true;
        if (batch.size() == 1) {
          errors[0] = std::current_exception();
        } else {
          for (std::size_t k = 0; k < batch.size(); ++k) {
            try {
              decoder.decode(*in[k], *out[k]);
            } catch (const std::exception&) {
              errors[k] = std::current_exception();
            }
          }
        }
      }
      std::lock_guard lock(mutex);
      if (retried && batch.size() > 1) ++counts.retriedBatches;
      if (!retried) {
        ++counts.batches;
        counts.largestBatch = std::max(counts.largestBatch, batch.size());
      }
      for (std::size_t k = 0; k < batch.size(); ++k) finishLocked(*batch[k], errors[k]);
    }
  }

  void finishLocked(Request& r, std::exception_ptr error) {
    r.error = std::move(error);
    r.done = true;
    r.finished.notify_one();  // under the lock: the request (on its caller's stack) outlives this call
    if (r.error) {
      ++counts.failed;
    } else {
      ++counts.frames;
    }
  }

  const JpegBatcherOptions options;
  std::vector<std::unique_ptr<GpuJpegDecoder>> decoders;  // decoders[i]: worker i's alone
  mutable std::mutex mutex;
  std::condition_variable arrived;  // the worker waits for requests
  std::deque<Request*> queue;        // requests live on their callers' stacks until done
  bool stopping = false;
  JpegBatcherStats counts;
  std::vector<std::thread> workers;  // last: they start once everything above exists
};

JpegBatcher::JpegBatcher(JpegBatcherOptions options) : impl_(std::make_unique<Impl>(options)) {}
JpegBatcher::~JpegBatcher() = default;

void JpegBatcher::decode(const Frame& jpeg, Frame& dst) { impl_->decode(jpeg, dst); }

JpegBatcherStats JpegBatcher::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->counts;
}

std::string JpegBatcher::describe() const {
  return std::to_string(impl_->decoders.size()) + " x " + impl_->decoders.front()->describe() + ", batches of up to " +
         std::to_string(impl_->options.maxBatch) + " frames";
}
int JpegBatcher::device() const noexcept { return impl_->options.device; }

std::shared_ptr<JpegBatcher> JpegBatcher::forDevice(int device) {
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<JpegBatcher>> batchers;
  std::lock_guard lock(mutex);
  if (auto b = batchers[device].lock()) return b;
  JpegBatcherOptions o;
  o.device = device;
  auto b = std::make_shared<JpegBatcher>(o);
  batchers[device] = b;
  return b;
}

}  // namespace zerohop
