/* Forwarding to the OpenMP runtime behind libcosched_wrap's interposers (LD_PRELOAD'ed by cosched-run). */
#ifndef COSCHED_WRAP_FORWARD_H
#define COSCHED_WRAP_FORWARD_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next definition of `name` (the runtime's), looked up once; a race on that first lookup is benign
 * (same value). */
static inline void *next_symbol(void **cache, const char *name) {
  void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
      fprintf(stderr, "cosched: %s not found in the OpenMP runtime\n", name);
      abort();
    }
    __atomic_store_n(cache, f, __ATOMIC_RELEASE);
  }
  return f;
}

/* Calls the runtime's `name` with the arguments; as the last statement of a forwarder it compiles to a jump
 * (wrappers/CMakeLists.txt), so a fork's return address stays the program's. POSIX guarantees dlsym's object
 * pointer converts to a function pointer; memcpy says so without a cast that ISO C frowns upon. */
#define REAL(type, name)                                \
  static void *cache;                                   \
  void *sym_ = next_symbol(&cache, #name);              \
  type real_;                                           \
  memcpy(&real_, &sym_, sizeof real_)
#define FORWARD(type, name, ...) \
  REAL(type, name);              \
  real_(__VA_ARGS__)
#define FORWARD_VALUE(type, name, ...) \
  REAL(type, name);                    \
  return real_(__VA_ARGS__)

#define EXPORT __attribute__((visibility("default")))

#endif
