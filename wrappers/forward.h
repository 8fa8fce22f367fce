/* Forwarding to the OpenMP runtime behind libcosched_wrap's interposers (LD_PRELOAD'ed by cosched-run). */
#ifndef COSCHED_WRAP_FORWARD_H
#define COSCHED_WRAP_FORWARD_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct runtime_lookup {
  const char *name;
  void *found;
};

/* dl_iterate_phdr callback: `name` in a loaded OpenMP runtime (libgomp*, libomp.so*, libiomp5*). */
static inline int find_in_runtime(struct dl_phdr_info *info, size_t size, void *data) {
  struct runtime_lookup *l = (struct runtime_lookup *)data;
  const char *base = strrchr(info->dlpi_name, '/');
  base = base != NULL ? base + 1 : info->dlpi_name;
  (void)size;
  if (strncmp(base, "libgomp", 7) != 0 && strncmp(base, "libomp.so", 9) != 0 && strncmp(base, "libiomp5", 8) != 0) {
    return 0;
  }
  void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL) return 0;
  l->found = dlsym(h, l->name);
  dlclose(h); /* RTLD_NOLOAD took a reference: give it back, the runtime stays loaded */
  return l->found != NULL;
}

/* The next definition of `name` (the runtime's), looked up once; a race on that first lookup is benign
 * (same value). A runtime loaded with dlopen (a plugin, a Python extension that needs libgomp) is not in
 * the global scope RTLD_NEXT searches: then it is looked up in the loaded runtime itself. */
static inline void *next_symbol(void **cache, const char *name) {
  void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
      struct runtime_lookup l = {name, NULL};
      dl_iterate_phdr(find_in_runtime, &l);
      f = l.found;
    }
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
