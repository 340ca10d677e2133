#pragma once
/* init_macros.c: the ZH_*_INIT macros built as warning-free C99, called from the C++ test. */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
/* struct_size as each ZH_*_INIT sets it: frame_info, share_info, reader_options, reader_stats,
 * publisher_options, frame_meta, publisher_stats, stream_options. */
void zh_test_init_macro_sizes(size_t sizes[8]);
#ifdef __cplusplus
}
#endif
