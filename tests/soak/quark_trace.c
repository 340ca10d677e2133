// LD_PRELOAD helper for the soak's memory investigations (docs/reliability.md, Soak): logs every
// string that becomes a new GQuark or interned string, one "function<TAB>string" line each, to
// $QUARK_LOG (default /tmp/quark_trace.log). GLib never frees quarks, so names that carry a
// per-session value (an SSRC, a counter) grow a long-running server forever.
// Sees calls made through the PLT (GStreamer, GObject, zerohop), not GLib's calls to itself.
//   gcc -shared -fPIC -O1 -o /tmp/quark_trace.so tests/soak/quark_trace.c $(pkg-config --cflags --libs glib-2.0) -ldl
//   LD_PRELOAD=/tmp/quark_trace.so zerohop serve ...
//   sed -E 's/[0-9]+/N/g' /tmp/quark_trace.log | sort | uniq -c | sort -rn | head
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static FILE* out;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static void noteIfNew(const char* function, const char* s) {
  if (!s || g_quark_try_string(s)) return;
  pthread_mutex_lock(&mutex);
  if (!out) {
    const char* path = getenv("QUARK_LOG");
    out = fopen(path ? path : "/tmp/quark_trace.log", "w");
    if (out) setvbuf(out, NULL, _IOLBF, 0);
  }
  if (out) fprintf(out, "%s\t%s\n", function, s);
  pthread_mutex_unlock(&mutex);
}

#define WRAP(ret, name)                                                    \
  ret name(const gchar* s) {                                               \
    static ret (*real)(const gchar*);                                      \
    if (!real) real = (ret(*)(const gchar*))dlsym(RTLD_NEXT, #name);       \
    noteIfNew(#name, s);                                                   \
    return real(s);                                                        \
  }
WRAP(GQuark, g_quark_from_string)
WRAP(GQuark, g_quark_from_static_string)
WRAP(const gchar*, g_intern_string)
WRAP(const gchar*, g_intern_static_string)
