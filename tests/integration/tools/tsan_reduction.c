/* tsan-reduction: a race-free OpenMP program built with ThreadSanitizer (test_ompt_client.py). Its only
 * synchronisation is OpenMP's (barriers, the reduction), which TSan cannot see inside an uninstrumented
 * libomp: without Archer telling it through OMPT, TSan reports races that are not there. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096

int main(int argc, char **argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 300;
  static long a[N];
  long sum = 0;
  for (int it = 0; it < iterations; ++it) {
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < N; ++i) {
      a[i] += i % 7;
      sum += a[i];
    }
  }
  printf("sum %ld\n", sum);
  return 0;
}
