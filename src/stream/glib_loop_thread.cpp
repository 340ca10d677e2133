#include "stream/glib_loop_thread.hpp"

#include <glib.h>

#include <functional>
#include <future>
#include <memory>

#include "stream/glib_handoff.hpp"

namespace zerohop::stream {
namespace {

using Task = GlibHandoff<std::function<void()>>;  // ordered for TSan, see glib_handoff.hpp

gboolean runOnce(gpointer data) {
  static_cast<Task*>(data)->get()();
  return G_SOURCE_REMOVE;
}
gboolean runRepeat(gpointer data) {
  static_cast<Task*>(data)->get()();
  return G_SOURCE_CONTINUE;
}
void deleteTask(gpointer data) {
  delete static_cast<Task*>(data);
}

void attach(GMainContext* context, GSource* source, GSourceFunc fn, std::function<void()> task) {
  g_source_set_callback(source, fn, new Task(std::move(task)), deleteTask);
  g_source_attach(source, context);
  g_source_unref(source);
}

}  // namespace

GlibLoopThread::GlibLoopThread() : context_(g_main_context_new()), loop_(g_main_loop_new(context_, FALSE)) {
  auto running = std::make_shared<std::promise<void>>();
  auto started = running->get_future();
  thread_ = std::thread([this, running] {
    g_main_context_push_thread_default(context_);
    GSource* idle = g_idle_source_new();
    attach(context_, idle, runOnce, [running] { running->set_value(); });
    g_main_loop_run(loop_);
    g_main_context_pop_thread_default(context_);
  });
  started.wait();
}

GlibLoopThread::~GlibLoopThread() {
  g_main_loop_quit(loop_);
  if (thread_.joinable()) thread_.join();
  g_main_loop_unref(loop_);
  g_main_context_unref(context_);  // destroys the sources still attached, and their tasks
}

void GlibLoopThread::post(std::function<void()> task) {
  attach(context_, g_idle_source_new(), runOnce, std::move(task));
}

void GlibLoopThread::every(unsigned intervalMs, std::function<void()> task) {
  attach(context_, g_timeout_source_new(intervalMs), runRepeat, std::move(task));
}

}  // namespace zerohop::stream
