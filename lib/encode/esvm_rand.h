/* rand() and srand() with one generator per thread, for LIBLINEAR's training.
 *
 * LIBLINEAR (2.3; its API has no seed nor generator argument) shuffles its coordinates
 * with the C library's rand(), one generator for the whole process, which threads training
 * at the same time would draw from in an order that varies from run to run. esvm_rand.c
 * defines rand() and srand() as the functions below, so that a program that links it
 * interposes them on the C library's, and LIBLINEAR's calls bind to them: every thread
 * draws from its own splitmix64 sequence (31 bits, glibc's RAND_MAX), which esvm.c
 * restarts from one seed before each problem.
 *
 * esvm_rand.c is therefore not part of libslem.a (the library defines no symbol of the C
 * library): the Makefile links build/lib/encode/esvm_rand.o into slem-esvm and check_esvm only.
 * A program that trains without it is still deterministic: esvm.c notices (see
 * slem_esvm_parallel_rand()) and trains one problem at a time under the C library's
 * srand(seed), with other descriptors than the per-thread generator gives.
 */
#ifndef SLEM_ESVM_RAND_H
#define SLEM_ESVM_RAND_H

/* The next value, in [0, 2^31), of this thread's generator (rand() is an alias).
 * Cannot fail. */
int slem_esvm_rand(void);

/* Restarts this thread's generator at seed (srand() is an alias); a thread that never
 * called it starts at the seed of esvm.c. Cannot fail. */
void slem_esvm_rand_seed(unsigned seed);

#endif
