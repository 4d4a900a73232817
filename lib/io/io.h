/* Buffered input that works on pipes, and output that is never left half-written.
 *
 * SlemIn reads a path or "-" (stdin) through one large buffer with read(2); it can
 * peek at the first bytes without seeking, so format sniffing works on pipes.
 * SlemOut writes a path through a temporary file beside it (".NAME.tmp.XXXXXX"), and
 * only slem_out_commit() makes it appear under its name: fflush, fsync, rename. "-"
 * writes to stdout. A path that exists and is not a regular file (/dev/null, a FIFO) is
 * written in place, since renaming over a device would replace it.
 */
#ifndef SLEM_IO_H
#define SLEM_IO_H

#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "error.h"

typedef struct SlemIn SlemIn;

/* Opens path for reading ("-" or NULL: stdin). *self is set to a new reader, freed by
 * slem_in_free(). A stdin whose open file description is non-blocking (O_NONBLOCK, set
 * by a parent on a pipe it shares) is given a blocking description of its own of the
 * same pipe first, where /proc allows. Errors: SLEM_EIO naming the path (missing,
 * unreadable, a directory; stdin closed when the tool started: slem_in_stdin_closed()). */
int slem_in_open(SlemIn **self, const char *path, SlemError *err);

/* Marks descriptor 0 as closed when the process started (<&-): the caller has put /dev/null
 * in its place, so that no file opened later takes its number and is read as stdin. From
 * then on every read of stdin is refused (slem_in_open("-"), slem_in_stdin_file()), where
 * it would read nothing and pass for an empty input. Cannot fail. */
void slem_in_mark_stdin_closed(void);

/* SLEM_OK, or SLEM_EIO with the message "<stdin>: closed when the tool started (<&-): ..."
 * when slem_in_mark_stdin_closed() was called: for the readers of stdin that do not go
 * through slem_in_open(). */
int slem_in_stdin_closed(SlemError *err);

/* What slem_in_open("-") does to a non-blocking stdin, for the readers of descriptor 0 or
 * of stdio's stdin that do not go through it. Cannot fail (left as it is where it cannot
 * be done). */
void slem_in_block_stdin(void);

/* stdin as a stdio stream for a reader that takes one: stdin itself once
 * slem_in_block_stdin() made its description blocking; where that cannot be done (a
 * non-blocking socket) a new read-only stream over descriptor 0 whose reads wait for data
 * (slem_io_wait_ready()) instead of failing with EAGAIN. fclose() it when it is not stdin
 * (descriptor 0 stays open). NULL: out of memory, or stdin closed when the tool started
 * (slem_in_stdin_closed(), errno EBADF). */
FILE *slem_in_stdin_file(void);

/* For a read or write of fd that failed: when errno is EAGAIN or EWOULDBLOCK (a
 * non-blocking descriptor that no one could make blocking, as a socket shared with the
 * parent), waits with poll(2) until fd is ready for events (POLLIN, POLLOUT), never
 * spinning, and returns 1: try again. 0 for any other errno (the caller reports it) or
 * when poll fails. */
int slem_io_wait_ready(int fd, int events);
/* An input that only names bytes held elsewhere (an array in the caller's memory, read by
 * lib/formats/fmt_mem.c through its own hooks): name for messages, size bytes (-1 unknown),
 * seekable (slem_in_seek() only moves its offset), never changed while read. Its bytes are
 * not read through it: slem_in_read() and the like fail (SLEM_EIO). Errors: SLEM_ENOMEM. */
int slem_in_new_detached(SlemIn **self, const char *name, int64_t size, SlemError *err);
void slem_in_free(SlemIn *self);

/* The name used in messages: the path, or "<stdin>". Owned by self. */
const char *slem_in_name(const SlemIn *self);

/* Size in bytes of a regular file, or -1 when unknown (pipe, terminal). */
int64_t slem_in_size(const SlemIn *self);

/* The CRC-32 (crc32.h) of the whole file path and its size, by pread from its start
 * ("<stdin>" or "-": descriptor 0, whose offset stays). The file is read once more, at
 * the page cache's speed: it names the content a run read, for the pieces of a run that
 * must prove they read the same. Errors: SLEM_EINVAL for what is not a regular file (a
 * pipe), the message ending with why (the caller's words); SLEM_EIO; SLEM_ENOMEM. */
int slem_io_file_crc(const char *path, const char *why, uint32_t *crc, uint64_t *size,
                     SlemError *err);

/* SLEM_OK when path, which a run reads more than once from its start (once per stage),
 * can be read so: a regular file, or a path that does not exist (its open says so later);
 * else SLEM_EINVAL naming it: a pipe, a FIFO (opened again, it would wait for a writer
 * for ever) or a device. "-" is the caller's to refuse, in its own words. */
int slem_in_rereadable(const char *path, SlemError *err);

/* For a regular file: SLEM_EFORMAT "changed while being read" when its size or its
 * modification time is no longer what it was when it was opened (another process wrote
 * it meanwhile); SLEM_OK otherwise, and always for a pipe. */
int slem_in_unchanged(const SlemIn *self, SlemError *err);

/* Bytes consumed so far by slem_in_read/slem_in_skip. */
uint64_t slem_in_offset(const SlemIn *self);

/* Makes up to n bytes available at *p without consuming them; *avail < n only at end
 * of file. n must be at most 64 KiB. Errors: SLEM_EIO. */
int slem_in_peek(SlemIn *self, size_t n, const unsigned char **p, size_t *avail,
                 SlemError *err);

/* Reads up to n bytes into dst; *got < n only at end of file. Errors: SLEM_EIO. */
int slem_in_read(SlemIn *self, void *dst, size_t n, size_t *got, SlemError *err);

/* Reads up to n records of head + body bytes, each record's head into heads + i * head and
 * its body into bodies + i * body (readv(2): no copy through a buffer); *got (bytes, heads
 * included) < n * (head + body) only at end of file, and may end inside a record.
 * head and body are at least 1. Errors: SLEM_EIO. */
int slem_in_read_records(SlemIn *self, void *heads, size_t head, void *bodies, size_t body,
                         size_t n, size_t *got, SlemError *err);

/* Reading one block in pieces on several threads (lib/formats/vecfmt.c): the place in the
 * file of the next unread byte, when the input is a regular file with nothing buffered and
 * not at its end; else -1 (read it with slem_in_read()). */
int64_t slem_in_direct_pos(const SlemIn *self);

/* Reads up to n bytes at place pos of the file (from slem_in_direct_pos()) into bodies
 * (head 0), or n bytes of records of head + body bytes split as slem_in_read_records()
 * splits them (heads and bodies are those of the piece's first record, starting at pos).
 * pread(2): the input does not move, and several threads may read pieces at once.
 * *got < n only at end of file. Errors: SLEM_EIO. */
int slem_in_pread(const SlemIn *self, uint64_t pos, void *heads, size_t head, void *bodies,
                  size_t body, size_t n, size_t *got, SlemError *err);

/* After pieces read with slem_in_pread(): the n bytes from slem_in_direct_pos() on are
 * consumed, and the file ended inside or right after them when at_end. Errors: SLEM_EIO
 * (the seek). */
int slem_in_consume(SlemIn *self, size_t n, int at_end, SlemError *err);

/* Reads one line (without its '\n', a trailing '\r' removed, and a UTF-8 byte-order mark
 * removed from the start of the first) into a buffer owned by self, valid until the next
 * call. *line is NULL at end of file. Errors: SLEM_EIO,
 * SLEM_EFORMAT for a line over 64 MiB (memory stays bounded on a file with no newline),
 * SLEM_EFORMAT "FILE: line N: a NUL byte (column C): not a text line" for a line holding
 * a NUL byte (every line reader of slem goes through here: vectors as text, ids, labels,
 * qrels, junk lists, rankings, calibrations, lists of files). */
int slem_in_getline(SlemIn *self, char **line, size_t *len, SlemError *err);

/* 1 when the last line slem_in_getline() returned had no newline: the file ends inside
 * it (a file cut short, or written by hand without the last newline). */
int slem_in_unterminated(const SlemIn *self);

/* Goes back to byte offset off of a regular file. Errors: SLEM_EIO (not seekable). */
int slem_in_seek(SlemIn *self, uint64_t off, SlemError *err);

/* 1 when slem_in_seek() can work (a regular file). */
int slem_in_seekable(const SlemIn *self);

/* The last bytes of what self reads, up to n of them, into dst (*got of them, the first at
 * byte *at of the input): sought in a regular file of a known size, read through to the
 * end otherwise, as a stream (a pipe; a file whose size says 0 but that holds bytes, as
 * slem_in_open() reads one), in memory of n bytes. The input is consumed. Errors: SLEM_EIO,
 * SLEM_ENOMEM. */
int slem_in_tail(SlemIn *self, void *dst, size_t n, size_t *got, uint64_t *at, SlemError *err);

typedef struct SlemOut SlemOut;

/* Opens path for writing ("-" or NULL: stdout, made blocking as slem_in_open() makes
 * stdin). Nothing appears under path before slem_out_commit(). A path that is a symbolic
 * link is followed: the temporary is made beside the file it leads to, which the rename
 * replaces (the link stays; a link leading to no file creates the file it names; another
 * user's link in a sticky world-writable directory such as /tmp is refused, EACCES, as
 * fs.protected_symlinks has open(2) refuse it); a link to the regular file open as stdout
 * (/dev/stdout under "> FILE") is stdout, written in place as "-" is; a device, a FIFO,
 * or a link whose text does not name its file (/proc/self/fd/N of a deleted file) is
 * written in place. The temporary file ".NAME.tmp.XXXXXX" is held under an exclusive
 * flock(2) while this process writes it; before creating its own, the writer removes the
 * ".NAME.tmp.XXXXXX" files of this user that no process holds (left by writers that were
 * killed), never one in use. Errors: SLEM_EIO naming the path (directory missing, no
 * permission). */
int slem_out_open(SlemOut **self, const char *path, SlemError *err);

/* Writes to name (cap bytes) the file that slem_out_open(path) would replace or create:
 * path's links followed as it follows them, then its directory's real path and its base
 * name, so that two names of one file, existing or not, give one name. Returns 0, or -1
 * when that cannot be told (a directory missing, a link refused, a name too long). */
int slem_out_resolve(const char *path, char *name, size_t cap);

/* The folder of path into dir(cap): what comes before its last '/' ("/" for a name just
 * under the root, "." for a name without '/'). 0, or -1 when it does not fit in cap. */
int slem_io_dirname(char *dir, size_t cap, const char *path);

/* The stdio stream to write to; errors on it are caught by slem_out_commit(). */
FILE *slem_out_file(SlemOut *self);

const char *slem_out_name(const SlemOut *self);

/* Writes the n pieces of iov after what the stream holds (flushed first), from the caller's
 * memory straight to writev(2), with partial writes and EINTR handled: records whose parts
 * lie apart reach the file without being assembled. iov is used up (changed). 0, or -1
 * with errno set, which slem_out_commit() then also reports. */
int slem_out_writev(SlemOut *self, struct iovec *iov, int n);

/* 1 when the stream can seek back (a temporary file), 0 for stdout or a device. */
int slem_out_seekable(const SlemOut *self);

/* Flushes, fsyncs and renames into place, then frees self (also on failure, after
 * removing the temporary file). For stdout it flushes and checks for errors. */
int slem_out_commit(SlemOut *self, SlemError *err);

/* Commits n outputs that belong together (NULL entries are skipped): all are flushed and
 * synced first, and only when every one succeeded are they renamed into place, so that a
 * write error (a full disk) leaves every target as it was; a signal caught during the
 * renames waits for the last (slem_out_signal()). Frees them all. Errors: those of
 * slem_out_commit(), the first one; SLEM_EIO, nothing renamed, when a signal handler is
 * already removing the temporaries. */
int slem_out_commit_all(SlemOut *const *outs, size_t n, SlemError *err);

/* Closes and removes the temporary file, then frees self. Accepts NULL. */
void slem_out_abort(SlemOut *self);

/* Removes every temporary file still open. Async-signal-safe. */
void slem_out_unlink_pending(void);

/* For the handler of a signal that ends the process (cmd/cli.c): removes the temporaries
 * of the outputs not committed (slem_out_unlink_pending()) and returns 1, the handler
 * then dying of the signal. Returns 0, removing nothing, while slem_out_commit_all() renames
 * a group of outputs: the signal is kept, and passed to the function set by
 * slem_out_on_deferred_signal() once the last rename is done, so that a signal never
 * leaves one output of a group new and another old. Async-signal-safe, any thread. */
int slem_out_signal(int sig);

/* The function slem_out_commit_all() calls with a signal that slem_out_signal() kept (it
 * should end the process by that signal). NULL (the default): the signal is dropped. */
void slem_out_on_deferred_signal(void (*fn)(int sig));

#endif
