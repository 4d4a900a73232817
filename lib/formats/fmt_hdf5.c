/* HDF5 (libhdf5, the serial build): a 2-D (n, d) dataset of any float or integer type,
 * named FILE.h5:DATASET (or .hdf5; the name after the last ':'), contiguous or chunked
 * and compressed alike: a block of rows is one hyperslab read, converted by the library
 * to float32 (float32 datasets) or double (every other type), so nothing but the block
 * is held. ann-benchmarks files (train, test, neighbors) are read as they come, and the
 * file's attribute 'distance' (angular, euclidean, ...) is kept for the tools that rank
 * (slem_vecreader_distance()).
 *
 * Read only, from a file only: the library opens the file by its name (a pipe cannot be
 * read that way). The serial library is not thread-safe: every call into it holds one
 * lock, so readers in different threads (a prefetch thread) stay correct. Its own error
 * printing is turned off: the messages are ours, naming the file and the dataset.
 *
 * The library is loaded when the first HDF5 file is opened (dlopen of SLEM_HDF5_SONAME,
 * which the Makefile takes from the library it builds against), not when a tool starts:
 * with its dependencies it is some thirty libraries, about 4 ms added to every start of
 * every tool. Each function is looked up once, its type taken from hdf5.h. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <hdf5.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "vecfmt.h"

static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

#ifndef SLEM_HDF5_SONAME
#define SLEM_HDF5_SONAME "libhdf5_serial.so.103"
#endif

/* The functions called, by their names in hdf5.h (some are macros naming a version:
 * H5Literate may be H5Literate2; STR expands them). */
#define H5_FUNCS(X)                                                                           \
  X(H5open) X(H5Eset_auto2) X(H5Fis_hdf5) X(H5Fopen) X(H5Fclose) X(H5Literate) X(H5Lexists)  \
  X(H5Dopen2) X(H5Dclose) X(H5Dget_create_plist) X(H5Dget_type) X(H5Dget_space) X(H5Dread)   \
  X(H5Pget_layout) X(H5Pget_chunk) X(H5Pcreate) X(H5Pset_chunk_cache) X(H5Pclose)            \
  X(H5Tget_size) X(H5Tget_class) X(H5Tclose) X(H5Sclose) X(H5Screate_simple)                 \
  X(H5Sget_simple_extent_ndims) X(H5Sget_simple_extent_dims) X(H5Sselect_hyperslab)         \
  X(H5Aexists) X(H5Aopen) X(H5Aget_type) X(H5Aget_space) X(H5Aread) X(H5Aclose)              \
  X(H5Sget_simple_extent_npoints) X(H5Tis_variable_str) X(H5Tcopy) X(H5Tset_size)            \
  X(H5Tget_cset) X(H5Tset_cset) X(H5free_memory)
#define STR2(x) #x
#define STR(x) STR2(x)
#define X(f) static __typeof__(f) *p_##f;
H5_FUNCS(X)
#undef X
/* the library's ids behind H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, H5P_DATASET_ACCESS and
 * H5T_C_S1 */
static hid_t *p_native_float, *p_native_double, *p_dataset_access, *p_c_s1;
/* H5F_ACC_RDONLY's value: the macro calls H5check_version() and H5open() by name */
#define ACC_RDONLY 0x0000u
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[300]; /* empty once loaded */

/* A variable of the library: the program's own copy when the program links the library
 * too (a test that writes HDF5 files: the library then uses that copy, a copy relocation),
 * else the library's. */
static hid_t *data_sym(void *h, const char *name) {
  hid_t *p = dlsym(RTLD_DEFAULT, name);
  return p ? p : dlsym(h, name);
}

static void load(void) {
  void *h = dlopen(SLEM_HDF5_SONAME, RTLD_NOW | RTLD_LOCAL);
  const char *missing = NULL;
  if (!h) {
    const char *why = dlerror();
    snprintf(load_error, sizeof load_error, "%s", why ? why : SLEM_HDF5_SONAME " not found");
    return;
  }
#define X(f) \
  if (!missing && !(*(void **)&p_##f = dlsym(h, STR(f)))) missing = STR(f);
  H5_FUNCS(X)
#undef X
  if (!missing && !(p_native_float = data_sym(h, "H5T_NATIVE_FLOAT_g")))
    missing = "H5T_NATIVE_FLOAT_g";
  if (!missing && !(p_native_double = data_sym(h, "H5T_NATIVE_DOUBLE_g")))
    missing = "H5T_NATIVE_DOUBLE_g";
  if (!missing && !(p_dataset_access = data_sym(h, "H5P_CLS_DATASET_ACCESS_ID_g")))
    missing = "H5P_CLS_DATASET_ACCESS_ID_g";
  if (!missing && !(p_c_s1 = data_sym(h, "H5T_C_S1_g"))) missing = "H5T_C_S1_g";
  if (missing) {
    snprintf(load_error, sizeof load_error, "%s lacks %s", SLEM_HDF5_SONAME, missing);
    return;
  }
  if (p_H5open() < 0) { /* sets the ids above */
    snprintf(load_error, sizeof load_error, "%s: H5open failed", SLEM_HDF5_SONAME);
    return;
  }
  load_error[0] = 0;
}

typedef struct H5State {
  hid_t file, dset, space, mtype; /* mtype: a native type owned by the library, not closed */
} H5State;
#define HS(r) ((H5State *)(r)->priv)

static const unsigned char h5_magic[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

static int sniff_hdf5(const unsigned char *p, size_t n) {
  return n >= 8 && memcmp(p, h5_magic, 8) == 0 ? 100 : 0;
}

static void close_hdf5(SlemVecReader *r) {
  if (r->priv) {
    pthread_mutex_lock(&h5_lock);
    if (HS(r)->space >= 0) p_H5Sclose(HS(r)->space);
    if (HS(r)->dset >= 0) p_H5Dclose(HS(r)->dset);
    if (HS(r)->file >= 0) p_H5Fclose(HS(r)->file);
    pthread_mutex_unlock(&h5_lock);
  }
  free(r->priv);
  r->priv = NULL;
}

/* The names of the datasets at the root, for the message of a missing one. */
static herr_t list_one(hid_t g, const char *name, const H5L_info_t *info, void *data) {
  char *buf = data;
  size_t len = strlen(buf);
  (void)g;
  (void)info;
  if (len + strlen(name) + 3 < 200) snprintf(buf + len, 200 - len, "%s%s", len ? ", " : "", name);
  return 0;
}

/* Opens dataset ds with a chunk cache that holds a whole chunk (up to 256 MiB): the blocks
 * of rows are smaller than a large chunk, and with the library's default cache (1 MiB) each
 * of them would decompress the whole chunk again (50 times for a chunk of 200 000 rows).
 * Called with the lock held. */
static hid_t open_cached(hid_t file, const char *ds) {
  hid_t dset = p_H5Dopen2(file, ds, H5P_DEFAULT), dcpl, type, dapl;
  hsize_t chunk[H5S_MAX_RANK];
  int rank;
  if (dset < 0) return dset;
  dcpl = p_H5Dget_create_plist(dset);
  type = p_H5Dget_type(dset);
  if (dcpl >= 0 && type >= 0 && p_H5Pget_layout(dcpl) == H5D_CHUNKED &&
      (rank = p_H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk)) > 0) {
    double bytes = (double)p_H5Tget_size(type);
    for (int i = 0; i < rank; i++) bytes *= (double)chunk[i];
    if (bytes > (1 << 20) && (dapl = p_H5Pcreate(*p_dataset_access)) >= 0) {
      size_t nbytes = bytes > (double)(256u << 20) ? 256u << 20 : (size_t)bytes * 2;
      if (p_H5Pset_chunk_cache(dapl, 521, nbytes, 1.0) >= 0) {
        /* closed first: a dataset opened twice is one object, with the first cache */
        p_H5Dclose(dset);
        if ((dset = p_H5Dopen2(file, ds, dapl)) < 0) dset = p_H5Dopen2(file, ds, H5P_DEFAULT);
      }
      p_H5Pclose(dapl);
    }
  }
  if (type >= 0) p_H5Tclose(type);
  if (dcpl >= 0) p_H5Pclose(dcpl);
  return dset;
}

/* The file's attribute 'distance' (ann-benchmarks writes "angular", "euclidean", ... there,
 * a string of variable or fixed length) into r->distance, truncated to its size; "" when
 * the file has none. An attribute that is not one string is kept as "(not a string)", so
 * that a tool that follows it refuses it by that name. Called with the lock held. */
static int read_distance(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  hid_t attr = -1, type = -1, space = -1, mem = -1;
  int st = SLEM_OK;
  r->distance[0] = 0;
  if (p_H5Aexists(HS(r)->file, "distance") <= 0) return SLEM_OK;
  if ((attr = p_H5Aopen(HS(r)->file, "distance", H5P_DEFAULT)) < 0 ||
      (type = p_H5Aget_type(attr)) < 0 || (space = p_H5Aget_space(attr)) < 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: its attribute 'distance' is unreadable", name);
    goto done;
  }
  if (p_H5Tget_class(type) != H5T_STRING || p_H5Sget_simple_extent_npoints(space) != 1 ||
      (mem = p_H5Tcopy(*p_c_s1)) < 0 || p_H5Tset_cset(mem, p_H5Tget_cset(type)) < 0) {
    snprintf(r->distance, sizeof r->distance, "(not a string)");
    goto done;
  }
  if (p_H5Tis_variable_str(type) > 0) {
    char *v = NULL;
    if (p_H5Tset_size(mem, H5T_VARIABLE) < 0 || p_H5Aread(attr, mem, &v) < 0) {
      st = slem_error(err, SLEM_EFORMAT, "%s: its attribute 'distance' is unreadable", name);
      goto done;
    }
    snprintf(r->distance, sizeof r->distance, "%s", v ? v : "");
    if (v) p_H5free_memory(v);
  } else {
    size_t size = p_H5Tget_size(type) + 1; /* C's string ends in a NUL that the file's
                                            * (null-padded, of exactly its length) may lack */
    char *v = calloc(1, size);
    if (!v) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      goto done;
    }
    if (p_H5Tset_size(mem, size) < 0 || p_H5Aread(attr, mem, v) < 0) {
      free(v);
      st = slem_error(err, SLEM_EFORMAT, "%s: its attribute 'distance' is unreadable", name);
      goto done;
    }
    snprintf(r->distance, sizeof r->distance, "%s", v);
    free(v);
  }
done:
  if (mem >= 0) p_H5Tclose(mem);
  if (space >= 0) p_H5Sclose(space);
  if (type >= 0) p_H5Tclose(type);
  if (attr >= 0) p_H5Aclose(attr);
  return st;
}

/* Called with the lock held. */
static int open_locked(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in), *ds = r->member;
  hid_t type = -1;
  hsize_t dims[H5S_MAX_RANK];
  int ndim, st = SLEM_OK;
  size_t size;
  H5T_class_t cls;

  p_H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the library prints nothing: our messages */
  if (!slem_in_seekable(r->in))
    return slem_error(err, SLEM_EFORMAT, "%s: an HDF5 file on a pipe: HDF5 is read from a "
                      "file; give FILE:DATASET", name);
  if (p_H5Fis_hdf5(name) <= 0)
    return slem_error(err, SLEM_EFORMAT, "%s: not an HDF5 file", name);
  if ((HS(r)->file = p_H5Fopen(name, ACC_RDONLY, H5P_DEFAULT)) < 0)
    return slem_error(err, SLEM_EFORMAT, "%s: cannot open as HDF5", name);
  if ((st = read_distance(r, err)) != SLEM_OK) return st;
  if (!ds || !*ds) {
    char list[200] = "";
    p_H5Literate(HS(r)->file, H5_INDEX_NAME, H5_ITER_INC, NULL, list_one, list);
    return slem_error(err, SLEM_EFORMAT, "%s: an HDF5 file: give FILE:DATASET (it holds: %s)",
                      name, list[0] ? list : "nothing");
  }
  if (p_H5Lexists(HS(r)->file, ds, H5P_DEFAULT) <= 0 ||
      (HS(r)->dset = open_cached(HS(r)->file, ds)) < 0) {
    char list[200] = "";
    p_H5Literate(HS(r)->file, H5_INDEX_NAME, H5_ITER_INC, NULL, list_one, list);
    return slem_error(err, SLEM_EFORMAT, "%s: no dataset '%s' (it holds: %s)", name, ds,
                      list[0] ? list : "nothing");
  }
  if ((HS(r)->space = p_H5Dget_space(HS(r)->dset)) < 0 ||
      (ndim = p_H5Sget_simple_extent_ndims(HS(r)->space)) < 0)
    return slem_error(err, SLEM_EFORMAT, "%s: dataset '%s': unreadable shape", name, ds);
  if (ndim != 2)
    return slem_error(err, SLEM_EFORMAT, "%s: dataset '%s' has rank %d; a 2-D (n, d) one is "
                      "read", name, ds, ndim);
  p_H5Sget_simple_extent_dims(HS(r)->space, dims, NULL);
  if ((type = p_H5Dget_type(HS(r)->dset)) < 0)
    return slem_error(err, SLEM_EFORMAT, "%s: dataset '%s': unreadable type", name, ds);
  cls = p_H5Tget_class(type);
  size = p_H5Tget_size(type);
  if (cls == H5T_FLOAT && size == 4) {
    r->dtype = SLEM_DT_F4, r->esize = 4, HS(r)->mtype = *p_native_float;
  } else if (cls == H5T_FLOAT || cls == H5T_INTEGER) {
    r->dtype = SLEM_DT_F8, r->esize = 8, HS(r)->mtype = *p_native_double;
    r->integral = cls == H5T_INTEGER; /* read as doubles, stored as integers */
  } else {
    st = slem_error(err, SLEM_EFORMAT, "%s: dataset '%s': type class %d is not a number "
                    "(float or integer datasets are read)", name, ds, (int)cls);
    goto done;
  }
  r->d = dims[1];
  r->count = (int64_t)dims[0];
  if (dims[1] == 0 || dims[1] > SLEM_DIM_MAX) {
    st = slem_error(err, SLEM_EFORMAT, "%s: dataset '%s': dimension %" PRIu64 " is out of "
                    "range (1..%u)", name, ds, (uint64_t)dims[1], SLEM_DIM_MAX);
    goto done;
  }
  r->rec = r->d * r->esize;
  r->prefix = 0;
  r->scattered = 1; /* no seek by offset: the read hook */
  r->count_from = "the dataset's shape";
  if (r->count == 0) st = slem_vfmt_empty(r, "the dataset has 0 rows", err);
done:
  p_H5Tclose(type);
  return st;
}

static int open_hdf5(SlemVecReader *r, SlemError *err) {
  int st;
  pthread_once(&load_once, load);
  if (load_error[0] || !p_H5open)
    return slem_error(err, SLEM_EINVAL, "%s: an HDF5 file, but the HDF5 library cannot be "
                      "loaded (%s): install it (Debian: libhdf5-103-1)",
                      slem_in_name(r->in), load_error[0] ? load_error : "unknown");
  if (!(r->priv = calloc(1, sizeof(H5State)))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  HS(r)->file = HS(r)->dset = HS(r)->space = -1;
  pthread_mutex_lock(&h5_lock);
  st = open_locked(r, err);
  pthread_mutex_unlock(&h5_lock);
  return st;
}

/* A message of the shared decoder, "FILE: record ...", as "FILE:DATASET: record ...". */
static int name_dataset(const SlemVecReader *r, int st, SlemError *err) {
  const char *name = slem_in_name(r->in);
  size_t len = strlen(name);
  char rest[sizeof err->msg];
  if (!err || strncmp(err->msg, name, len) != 0 || strncmp(err->msg + len, ": ", 2) != 0) return st;
  snprintf(rest, sizeof rest, "%s", err->msg + len + 2);
  return slem_error(err, st, "%s:%s: %s", name, r->member, rest);
}

/* Rows [recs, recs + m) as one hyperslab, converted by the library, then checked. */
static int read_hdf5(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
                     SlemError *err) {
  const uint64_t n = (uint64_t)r->count;
  for (;;) {
    size_t m = max, o;
    hsize_t start[2], cnt[2];
    hid_t mem;
    herr_t h = -1;
    int st;
    if (n - r->recs < m) m = (size_t)(n - r->recs);
    if (m == 0) return SLEM_OK;
    if (m * r->rec > r->raw_cap) {
      free(r->raw);
      r->raw_cap = 0;
      if (!(r->raw = slem_mem_alloc_large(m * r->rec)))
        return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu records", m);
      r->raw_cap = m * r->rec;
    }
    start[0] = r->recs, start[1] = 0, cnt[0] = m, cnt[1] = r->d;
    pthread_mutex_lock(&h5_lock);
    if ((mem = p_H5Screate_simple(2, cnt, NULL)) >= 0 &&
        p_H5Sselect_hyperslab(HS(r)->space, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0)
      h = p_H5Dread(HS(r)->dset, HS(r)->mtype, mem, HS(r)->space, H5P_DEFAULT, r->raw);
    if (mem >= 0) p_H5Sclose(mem);
    pthread_mutex_unlock(&h5_lock);
    if (h < 0)
      return slem_error(err, SLEM_EIO, "%s: dataset '%s': reading records %" PRIu64 " to %" PRIu64
                        " failed (corrupt or truncated)", slem_in_name(r->in), r->member,
                        r->recs + 1, r->recs + m);
    st = slem_vfmt_decode(r, r->raw, m, xd, xf, &o, err);
    if (st) return name_dataset(r, st, err);
    r->recs += m;
    if (o == 0) continue;
    *got = o;
    r->done += o;
    return SLEM_OK;
  }
}

/* Reads by row number: going back is only forgetting the position. */
static int rewind_hdf5(SlemVecReader *r, SlemError *err) { return SLEM_OK; }

static int begin_hdf5(SlemVecWriter *w, SlemError *err) {
  return slem_error(err, SLEM_EINVAL, "%s: slem reads HDF5 but does not write it; write npy "
                    "(h5py can store it: f['name'] = numpy.load(...))", slem_out_name(w->out));
}

const SlemVecFormatDef slem_vfmt_hdf5 = {
    .id = SLEM_FMT_HDF5, .names = {"hdf5", "h5", NULL}, .members = 1, .sniff = sniff_hdf5,
    .open = open_hdf5, .read = read_hdf5, .rewind = rewind_hdf5, .begin = begin_hdf5,
    .close = close_hdf5};
