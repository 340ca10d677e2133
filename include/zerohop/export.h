#ifndef ZEROHOP_EXPORT_H
#define ZEROHOP_EXPORT_H
/* ZEROHOP_API marks what libzerohop exports; everything else in the library is hidden. C and C++. */
#if defined(__GNUC__) || defined(__clang__)
#define ZEROHOP_API __attribute__((visibility("default")))
#else
#define ZEROHOP_API
#endif
#endif /* ZEROHOP_EXPORT_H */
