#pragma once
/* abi_v0_1_client.c: a program built against the 0.1.0 header, called from the C++ test. */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Publishes one frame on `name` in `directory` and reads it back with 0.1-sized structs. 0 when
 * every call worked and nothing was written past those structs; else 1 and why. */
int zh_abi_v0_1_round_trip(const char* directory, const char* name, char* why, size_t whySize);
#ifdef __cplusplus
}
#endif
