/* The BLAS that this process binds to, its threads, and the library's chunked parallel
 * loop on top of them; GSL's error handler. One module for what depends on which CBLAS
 * (OpenBLAS, found by weak symbols, so that a build against another CBLAS still links).
 */
#ifndef SLEM_BLAS_H
#define SLEM_BLAS_H

#include <stddef.h>

/* The shared object that cblas_dgemm resolves to in this process (for example
 * ".../libopenblasp-r0.3.21.so"), or "unknown". GSL's own BLAS calls resolve to the same
 * one, so this tells whether the fast BLAS is bound or the reference gslcblas. */
const char *slem_blas_library(void);

/* Turns GSL's default error handler (which prints and aborts) off, once per process, so
 * that every GSL call returns its status to slem instead. Called before the library's
 * first GSL call; cannot fail. */
void slem_blas_gsl_init(void);

/* Sets the number of BLAS threads (OpenBLAS); n <= 0 leaves the default. While a pool runs
 * (slem_blas_pool_begin()), only the count that slem_blas_threads() tells and the pool
 * restores at its end: the BLAS stays on one thread for the pool's threads. */
void slem_blas_set_threads(int n);

/* The kernel set OpenBLAS chose for this CPU ("Haswell", "SkylakeX", "Prescott", ...), as
 * openblas_get_corename() reports it, or "unknown" with another BLAS. */
const char *slem_blas_corename(void);

/* One matrix product that every BLAS thread takes part in, so that OpenBLAS allocates the
 * buffers of all its threads now: under an address-space limit, before the tool's own
 * allocations can leave no room for them (OpenBLAS retries for ever when it finds none). */
void slem_blas_warm(void);

/* Stops OpenBLAS's pool of threads and starts it again after OpenBLAS has read the
 * environment once more, so that a variable set since the library was loaded (the caller's
 * setenv of OPENBLAS_THREAD_TIMEOUT) takes effect. Call it before any other thread runs and
 * before any BLAS work. Returns 1 when done, 0 when the BLAS is not OpenBLAS's pthread build
 * (nothing changed). */
int slem_blas_restart_pool(void);

/* The threads the BLAS runs with now (OpenBLAS's count; 1 for another CBLAS). */
int slem_blas_threads(void);

/* A unit of work: rows [lo, hi) on the worker numbered worker (0 <= worker <
 * slem_blas_par_workers()), which may index scratch space of its own. */
typedef void (*SlemParUnitFn)(void *ctx, size_t worker, size_t lo, size_t hi);

/* The workers slem_blas_par_units() may run at most: the BLAS's thread count (at most 64),
 * or 1 under an address-space limit (below). Callers size per-worker scratch by it. Cannot
 * fail. */
size_t slem_blas_par_workers(void);

/* Rows [0, n) cut into units of `unit` rows from row 0 (the caller fixes unit from the data,
 * never from the thread count), fn(ctx, worker, lo, hi) called once per unit. Up to
 * slem_blas_par_workers() threads, the caller's included, take the units from one shared
 * counter in increasing order (a thread that is done takes the next: more units than
 * threads balance the load), each calling the BLAS single-threaded meanwhile. A unit's
 * numbers then depend on the unit alone, not on the thread count nor on which worker ran it
 * (OpenBLAS's own threads cut a product where its thread count says, and the micro-kernels
 * at the cuts round differently), and no BLAS thread spins beside the workers. fn must touch
 * only its rows' outputs and its worker's scratch. Every unit is run once before the call
 * returns; it cannot fail: units that a thread which did not start would have taken run on
 * the caller's. Under an address-space limit (ulimit -v) every unit runs on the caller's
 * thread: OpenBLAS gives each new thread that calls it a buffer of its own (128 MiB on x86),
 * and when that cannot be mapped it retries for ever; the units, and so the results, are the
 * same. */
void slem_blas_par_units(size_t n, size_t unit, SlemParUnitFn fn, void *ctx);

/* A pool of slem_blas_par_workers() threads that outlives the calls, for callers that run
 * several jobs of units at once (slem-encode's blocks, encstream.c). While it runs (from
 * slem_blas_pool_begin() returning 1 to slem_blas_pool_end()), slem_blas_par_units() from
 * any thread queues its units behind those already queued and waits for them: the caller
 * takes none, so the pool's threads are the only ones computing, and a job's last units
 * overlap the next job's first instead of leaving threads idle at the end of each call.
 * The units and their numbers are those of a call without the pool; a unit that calls
 * slem_blas_par_units() itself runs those units in place. The BLAS runs single-threaded
 * meanwhile, and slem_blas_threads() still tells the count from before. Returns 0 (no pool,
 * the calls run as without it) for one worker or when the threads cannot all start. Call
 * both from one thread, with no unit running. */
int slem_blas_pool_begin(void);
void slem_blas_pool_end(void);

/* slem_blas_par_units() for a fn that needs no scratch of its own: rows [0, n) cut into
 * chunks of `chunk` rows from row 0, fn(ctx, lo, hi) called once per chunk, under the same
 * rules (the chunks' numbers depend on the chunk alone). Cannot fail. */
void slem_blas_par_chunks(size_t n, size_t chunk, void (*fn)(void *ctx, size_t lo, size_t hi),
                     void *ctx);

/* The core slem_blas_better_core() judges: slem_blas_corename(), or the value of the
 * environment variable SLEM_TEST_BLAS_CORE when set (for tests of that choice on a CPU
 * that OpenBLAS recognises). */
const char *slem_blas_detected_core(void);

/* When OpenBLAS runs kernels without AVX2 and FMA (a generic core such as "Prescott",
 * which it falls back to on CPUs it does not recognise) while this CPU has them, the
 * OPENBLAS_CORETYPE value that selects the kernels it can run ("SkylakeX" with AVX-512,
 * else "Haswell"); NULL when the chosen core is already a vector one or the CPU lacks
 * the instructions. OpenBLAS reads OPENBLAS_CORETYPE when it is loaded, so acting on the
 * answer takes a new process image (cmd/cli.c re-executes the tool once). */
const char *slem_blas_better_core(void);

#endif
