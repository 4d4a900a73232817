/* Linked into the programs that train exemplar SVMs, never into libslem.a: see
 * esvm_rand.h. */
#include "esvm_rand.h"

#include <stdint.h>
#include <stdlib.h>

static _Thread_local uint64_t rand_state = 0x5eed5eedULL; /* esvm.c's ESVM_SEED */

/* splitmix64, shifted to the 31 bits of glibc's RAND_MAX */
int slem_esvm_rand(void) {
  uint64_t z = (rand_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (int)(z >> 33);
}

void slem_esvm_rand_seed(unsigned seed) { rand_state = seed; }

/* the C library's names, for LIBLINEAR: the same functions at the same addresses, which
 * is how esvm.c recognises that the dynamic linker bound LIBLINEAR's rand() here */
int rand(void) __attribute__((alias("slem_esvm_rand")));
void srand(unsigned seed) __attribute__((alias("slem_esvm_rand_seed")));
