// The threads libcosched starts in the program (the RM watcher, the efficiency sampler, the parked roots'
// keeper and its parked threads), started one way. Each asks for a small stack, but glibc carves every
// thread's static TLS (the thread_local data of the executable and of every library loaded at start-up) out
// of that stack and refuses with EINVAL when it does not fit. A program linking OpenBLAS (60 KiB of TLS), as
// Debian's GROMACS does through libgromacs, made every 64 KiB request fail, and libcosched ran natively
// under the RM ("cannot start the RM watcher thread"). So the size grows until the thread starts. (Libraries
// loaded later by dlopen, like numpy's OpenBLAS, get their TLS elsewhere.)
#pragma once

#include <cstddef>

namespace cosched::rt {

// Starts a detached thread running fn(arg), named `name` (at most 15 characters), with a stack of at least
// `stack` bytes: doubled while glibc says it is too small for the static TLS, up to 64 MiB (virtual: only
// the pages used are ever backed). False when it cannot be started.
bool start_tool_thread(void* (*fn)(void*), void* arg, std::size_t stack, const char* name) noexcept;

}  // namespace cosched::rt
