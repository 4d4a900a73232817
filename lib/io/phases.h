/* Where a pipeline's wall time went, for --stats: seconds per phase, measured with
 * clock_gettime(CLOCK_MONOTONIC) on the thread that does the work. The library only fills
 * these numbers; the tools print them (cli.h). A phase a pipeline does not have stays 0.
 */
#ifndef SLEM_PHASES_H
#define SLEM_PHASES_H

#include <stddef.h>

typedef struct SlemPhases {
  double wall;        /* the whole call */
  double read;        /* reading and parsing, on the prefetch thread */
  double convert;     /* widening or copying the rows read (float32 into double leaves) */
  double compute;     /* the arithmetic: GEMM blocks, leaves' scatters, scoring */
  double merge;       /* combining results in their fixed order (the statistics tree) */
  double factor;      /* factorising (A^-1 by Cholesky, eigendecomposition) */
  double write;       /* writing the output, on the writer thread when there is one */
  double wait_read;   /* the compute thread waiting for the next block to be read */
  double wait_write;  /* the compute thread waiting for the writer to take a block */
  int threads;        /* BLAS threads the call ran with */
  size_t block;       /* rows per block (encode), per leaf (negstats), per tile (match) */
  size_t units;       /* independent work units per batch (leaves at once, chunks per block) */
} SlemPhases;

/* Seconds on the monotonic clock, from an arbitrary origin. Cannot fail. */
double slem_now(void);

/* Adds the seconds since *t to *acc and sets *t to now: the phases of a sequence of steps,
 * one lap each. Cannot fail. */
void slem_phases_lap(double *acc, double *t);

#endif
