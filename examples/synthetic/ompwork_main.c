// omp-via-lib ITERATIONS N: calls libompwork.so (gcc, libgomp) ITERATIONS times; the executable itself is
// not built with -fopenmp, so only its library's DT_NEEDED names libgomp. Prints "iter I team T sum S".
// Built with OMPWORK_DLOPEN (omp-dlopen), it loads the library with dlopen instead: nothing in its
// dependencies shows OpenMP (a Python extension, a plugin).
#include <stdio.h>
#include <stdlib.h>

#ifdef OMPWORK_DLOPEN
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>
#else
int ompwork_team(void);
long long ompwork_sum(long long n);
#endif

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  const long long n = argc > 2 ? atoll(argv[2]) : 10000000LL;
#ifdef OMPWORK_DLOPEN
  // The library lies next to the executable.
  char path[4096];
  ssize_t len = readlink("/proc/self/exe", path, sizeof path - 32);
  if (len <= 0) return 1;
  path[len] = '\0';
  strcpy(strrchr(path, '/') + 1, "libompwork.so");
  void* lib = dlopen(path, RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "omp-dlopen: %s\n", dlerror());
    return 1;
  }
  int (*ompwork_team)(void) = (int (*)(void))dlsym(lib, "ompwork_team");
  long long (*ompwork_sum)(long long) = (long long (*)(long long))dlsym(lib, "ompwork_sum");
  if (ompwork_team == NULL || ompwork_sum == NULL) return 1;
#endif
  for (int i = 0; i < iterations; ++i) {
    const int team = ompwork_team();
    printf("iter %d team %d sum %lld\n", i, team, ompwork_sum(n));
    fflush(stdout);
  }
  return 0;
}
