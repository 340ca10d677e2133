#pragma once
// The emulated camera's V4L2 controls. A camera launched as H.264 (with keyframe control on) offers
// what a UVC 1.5 camera's encoding unit maps to: the codec control class and
// V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME, a button whose write makes the next frame an IDR. Any other
// camera offers no control, and every query ends with EINVAL as the V4L2 spec says it must.
// Answers follow the V4L2 core's control framework (write-only and class controls read as EACCES,
// G/S_EXT_CTRLS validation failures report error_idx = count, TRY the failing index). No control
// events: VIDIOC_SUBSCRIBE_EVENT stays ENOTTY (v4l2-compliance counts that as one failure for an H.264 camera).
// Thread-safety: reentrant; the only state is the camera's (thread-safe) keyframe request.

namespace zerohop::camemu {

class EmulatedCamera;

/// True for QUERYCTRL, QUERY_EXT_CTRL, QUERYMENU, G/S_CTRL and G/S/TRY_EXT_CTRLS.
bool isControlIoctl(unsigned long request) noexcept;
/// Handles one control ioctl for `camera`; returns 0 or -errno.
int controlIoctl(EmulatedCamera& camera, unsigned long request, void* arg);

}  // namespace zerohop::camemu
