// libompwork.so: OpenMP work in a shared library built with gcc (libgomp), for programs that are not
// OpenMP themselves but get OpenMP through a library, as packaged codes do (GROMACS: libgromacs.so).
// cosched-run must find libgomp through this library (tests/integration/test_launcher.py).
#include <omp.h>

// The team a parallel region gets right now.
int ompwork_team(void) {
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  return team;
}

// sum over i = 1..n of (i mod 7) * i: exact integer arithmetic, the same for any team size.
long long ompwork_sum(long long n) {
  long long sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (long long i = 1; i <= n; ++i) sum += (i % 7) * i;
  return sum;
}
