/* tsan-race: one real data race (every thread of one region increments the same int unsynchronised),
 * built with ThreadSanitizer: Archer must not hide it (test_ompt_client.py). */
#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 0;
#pragma omp parallel num_threads(2)
  x++;
  printf("x %d\n", x);
  return 0;
}
