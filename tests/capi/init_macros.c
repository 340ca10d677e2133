/* Today's ZH_*_INIT macros, built as C99 with -Wall -Wextra -Werror -pedantic: a program of a user
 * who turns on -Wextra must build without warnings (-Wmissing-field-initializers included). */
#include "init_macros.h"

#include "zerohop/zerohop.h"

void zh_test_init_macro_sizes(size_t sizes[8]) {
  const zh_frame_info a = ZH_FRAME_INFO_INIT;
  const zh_share_info b = ZH_SHARE_INFO_INIT;
  const zh_reader_options c = ZH_READER_OPTIONS_INIT;
  const zh_reader_stats d = ZH_READER_STATS_INIT;
  const zh_publisher_options e = ZH_PUBLISHER_OPTIONS_INIT;
  const zh_frame_meta f = ZH_FRAME_META_INIT;
  const zh_publisher_stats g = ZH_PUBLISHER_STATS_INIT;
  const zh_stream_options h = ZH_STREAM_OPTIONS_INIT;
  sizes[0] = a.struct_size;
  sizes[1] = b.struct_size;
  sizes[2] = c.struct_size;
  sizes[3] = d.struct_size;
  sizes[4] = e.struct_size;
  sizes[5] = f.struct_size;
  sizes[6] = g.struct_size;
  sizes[7] = h.struct_size;
}
