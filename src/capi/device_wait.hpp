#pragma once
// GPU ordering for C API readers: the caller's stream waits for a device frame's producer event.
// Built with CUDA (device_wait_cuda.cpp) or as a stand-in that says device frames need a CUDA build.
namespace zerohop::capi {
/// cudaStreamWaitEvent(stream, event) on `device` (NULL stream = the legacy default stream).
/// Throws Error(kDevice) with the CUDA error name, kUnsupported in a build without CUDA.
void streamWaitEvent(void* stream, void* event, int device);
}  // namespace zerohop::capi
