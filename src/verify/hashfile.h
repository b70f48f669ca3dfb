/* hashfile: a whole file's sha256, its bytes brought to the hash by read()
 * or by mapping the file, whichever costs this machine less CPU per byte.
 *
 * read() copies every byte from the page cache once more before it is
 * hashed; a mapping does not, but each page is a fault and, under nested
 * paging (a VM), a costly one. On the device tool's real 16-core host a
 * mapping hashed at 0.91-0.96 of `openssl speed` and read() at 0.78-0.86;
 * in this project's 2-core VM it is the reverse (0.55 against 0.90). So the
 * process measures: the first windows it hashes alternate between the two,
 * each timed in the thread's CPU time (what other processes do does not
 * count), and once both have hashed enough the cheaper is used from then on
 * by every thread. DSV41_VERIFY_IO=read|map fixes the way (tests, benches).
 *
 * A file cut short while it is mapped raises SIGBUS on the missing pages;
 * the mapped path catches it and hashes the file again by read(), so the
 * answer is what read() gives (a shorter file: a mismatch), never a crash. */
#ifndef DSV41_HASHFILE_H
#define DSV41_HASHFILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum hashfile_way { HASHFILE_AUTO = -1, HASHFILE_READ = 0, HASHFILE_MAP = 1 };

/* The sha256 of an open regular file from its start to its end; adds to
 * *done as it goes. 0, or an errno (ECANCELED when *cancel was set). */
int hashfile_sha256(int fd, unsigned char out[32], _Atomic int64_t *done,
                    const atomic_int *cancel);

/* The same, where the file was seen to be size bytes long (-1: not a
 * regular file, read to its end): what hashfile_sha256 does after its
 * fstat. A file cut short since then is read again; tests give a size
 * larger than the file to make that happen. */
int hashfile_sha256_seen(int fd, int64_t size, unsigned char out[32], _Atomic int64_t *done,
                         const atomic_int *cancel);

/* The way this process uses from now on (HASHFILE_AUTO: measure again). */
void hashfile_set_way(enum hashfile_way w);

/* How files were hashed, for a summary line: "read()", "mmap", or "read()
 * (measuring)"; with the CPU cost per GB of each way where measured. */
void hashfile_describe(char *out, size_t sz);

#endif
