#include "camemu/emulated_controls.hpp"

#include <linux/videodev2.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "camemu/emulated_camera.hpp"

namespace zerohop::camemu {
namespace {

struct Control {
  std::uint32_t id;
  std::uint32_t type;
  const char* name;
  std::uint32_t flags;
};

// In id order, as QUERYCTRL | V4L2_CTRL_FLAG_NEXT_CTRL walks them.
constexpr std::array<Control, 2> kH264Controls{{
    {V4L2_CID_CODEC_CLASS, V4L2_CTRL_TYPE_CTRL_CLASS, "Codec Controls",
     V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_WRITE_ONLY},
    {V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME, V4L2_CTRL_TYPE_BUTTON, "Force Key Frame",
     V4L2_CTRL_FLAG_WRITE_ONLY | V4L2_CTRL_FLAG_EXECUTE_ON_WRITE},
}};

// The control `id` names (with NEXT_CTRL: the first one after it), or nullptr.
const Control* find(const EmulatedCamera& camera, std::uint32_t id) {
  if (!camera.offersKeyframeControl()) return nullptr;
  const std::uint32_t flags = id & (V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND);
  const std::uint32_t bare = id & ~flags;
  if (flags == 0) {
    for (const auto& c : kH264Controls)
      if (c.id == bare) return &c;
    return nullptr;
  }
  if (!(flags & V4L2_CTRL_FLAG_NEXT_CTRL)) return nullptr;  // compound only: we have none
  for (const auto& c : kH264Controls)
    if (c.id > bare) return &c;
  return nullptr;
}

// QUERYCTRL and QUERY_EXT_CTRL answer the same fields (the extended one adds the element layout).
template <typename Query>
int query(const EmulatedCamera& camera, Query& q) {
  const Control* c = find(camera, q.id);
  if (!c) return -EINVAL;
  std::memset(&q, 0, sizeof q);
  q.id = c->id;
  q.type = c->type;
  std::strncpy(reinterpret_cast<char*>(q.name), c->name, sizeof q.name - 1);
  q.flags = c->flags;  // buttons and classes: minimum = maximum = step = default = 0
  if constexpr (std::is_same_v<Query, v4l2_query_ext_ctrl>) {
    q.elem_size = sizeof(std::int32_t);
    q.elems = 1;
  }
  return 0;
}

// One control write (S_CTRL or one element of S_EXT_CTRLS), after validation.
void write(EmulatedCamera& camera, const Control& c) {
  if (c.id == V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME) {
    camera.requestKeyframe();
    camera.trace("S_CTRL force key frame");
  }
}

int extControls(EmulatedCamera& camera, unsigned long request, v4l2_ext_controls& cs) {
  std::memset(cs.reserved, 0, sizeof cs.reserved);
  if (cs.count == 0) return 0;
  const bool get = request == VIDIOC_G_EXT_CTRLS;
  const bool set = request == VIDIOC_S_EXT_CTRLS;
  const auto* list = cs.controls;
  if (!list) return -EFAULT;
  const bool classWhich = cs.which != V4L2_CTRL_WHICH_CUR_VAL && cs.which != V4L2_CTRL_WHICH_DEF_VAL &&
                          cs.which != V4L2_CTRL_WHICH_REQUEST_VAL;
  // Validation first (nothing is written unless every element is valid), as the V4L2 core does.
  for (std::uint32_t i = 0; i < cs.count; ++i) {
    const Control* c = find(camera, list[i].id);
    int err = 0;
    if (!c || (list[i].id & (V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND)) ||
        (classWhich && V4L2_CTRL_ID2WHICH(list[i].id) != cs.which)) {
      err = -EINVAL;
    } else if (get ? (c->flags & V4L2_CTRL_FLAG_WRITE_ONLY) : (c->flags & V4L2_CTRL_FLAG_READ_ONLY)) {
      err = -EACCES;
    }
    if (err) {
      // The V4L2 rule: a validation failure of G or S sets error_idx = count ("no hardware was touched").
      cs.error_idx = request == VIDIOC_TRY_EXT_CTRLS ? i : cs.count;
      return err;
    }
  }
  if (set) {
    for (std::uint32_t i = 0; i < cs.count; ++i) write(camera, *find(camera, list[i].id));
  }
  return 0;
}

}  // namespace

bool isControlIoctl(unsigned long request) noexcept {
  switch (request) {
    case VIDIOC_QUERYCTRL:
    case VIDIOC_QUERY_EXT_CTRL:
    case VIDIOC_QUERYMENU:
    case VIDIOC_G_CTRL:
    case VIDIOC_S_CTRL:
    case VIDIOC_G_EXT_CTRLS:
    case VIDIOC_S_EXT_CTRLS:
    case VIDIOC_TRY_EXT_CTRLS:
      return true;
    default:
      return false;
  }
}

int controlIoctl(EmulatedCamera& camera, unsigned long request, void* arg) {
  switch (request) {
    case VIDIOC_QUERYCTRL:
      return query(camera, *static_cast<v4l2_queryctrl*>(arg));
    case VIDIOC_QUERY_EXT_CTRL:
      return query(camera, *static_cast<v4l2_query_ext_ctrl*>(arg));
    case VIDIOC_QUERYMENU:
      return -EINVAL;  // no menu controls
    case VIDIOC_G_CTRL: {
      // Both controls are write-only (a button, a class): reading them is EACCES.
      return find(camera, static_cast<v4l2_control*>(arg)->id) ? -EACCES : -EINVAL;
    }
    case VIDIOC_S_CTRL: {
      const auto& v = *static_cast<v4l2_control*>(arg);
      if (v.id & (V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND)) return -EINVAL;
      const Control* c = find(camera, v.id);
      if (!c) return -EINVAL;
      if (c->flags & V4L2_CTRL_FLAG_READ_ONLY) return -EACCES;
      write(camera, *c);
      return 0;
    }
    case VIDIOC_G_EXT_CTRLS:
    case VIDIOC_S_EXT_CTRLS:
    case VIDIOC_TRY_EXT_CTRLS:
      return extControls(camera, request, *static_cast<v4l2_ext_controls*>(arg));
    default:
      return -ENOTTY;
  }
}

}  // namespace zerohop::camemu
