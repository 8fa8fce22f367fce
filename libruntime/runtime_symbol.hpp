// A function of the OpenMP runtime's own library, looked up on its handle (past LD_PRELOAD'ed interposers),
// or nullptr when the handle or the symbol is missing. Used at initialisation only.
#pragma once

#include <dlfcn.h>

#include <cstring>

namespace cosched::rt {

template <typename Fn>
Fn runtime_symbol(void* handle, const char* name) {
  void* p = handle != nullptr ? dlsym(handle, name) : nullptr;
  Fn f = nullptr;
  std::memcpy(&f, &p, sizeof f);  // object pointer to function pointer, as POSIX dlsym allows
  return f;
}

}  // namespace cosched::rt
