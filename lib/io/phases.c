#define _POSIX_C_SOURCE 200809L
#include "phases.h"

#include <time.h>

double slem_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void slem_phases_lap(double *acc, double *t) {
  double now = slem_now();
  *acc += now - *t;
  *t = now;
}
