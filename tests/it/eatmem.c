/* Takes real memory for the guard tests: MiB allocated and touched in 64 MiB
 * steps, held for SECONDS, then released. Refuses to go below a MemAvailable
 * of MIN_MIB (the machine must stay safe). With TARGET_MIB it stops as soon
 * as MemAvailable is at or below it (MIB then only caps it): a machine whose
 * other processes free memory meanwhile still ends up under a floor.
 * usage: eatmem MIB SECONDS MIN_MIB [TARGET_MIB] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long avail_mib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib / 1024;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5)
        return 2;
    long mib = atol(argv[1]), secs = atol(argv[2]), min = atol(argv[3]);
    long target = argc == 5 ? atol(argv[4]) : -1;
    char *blocks[4096];
    int n = 0;
    for (long done = 0; done < mib && n < 4096 && !(target >= 0 && avail_mib() <= target);
         done += 64) {
        if (avail_mib() - 64 < min) {
            fprintf(stderr, "eatmem: stopping at %ld MiB: MemAvailable would go below %ld MiB\n",
                    done, min);
            break;
        }
        /* in transparent huge pages where the kernel has them (THP "madvise",
         * Debian's default): on the test VM a 4 KiB fault costs ~10 us of
         * system time, 12 GiB took 44 CPU-s that way and 10 CPU-s in 2 MiB
         * pages; MemAvailable counts the memory the same */
        void *p = NULL;
        if (posix_memalign(&p, 2u << 20, 64u << 20) != 0)
            break;
        blocks[n] = p;
        (void)madvise(p, 64u << 20, MADV_HUGEPAGE);
        memset(blocks[n++], 1, 64u << 20);
    }
    printf("eatmem: holding %d MiB, MemAvailable %ld MiB\n", n * 64, avail_mib());
    fflush(stdout);
    sleep((unsigned)secs);
    for (int i = 0; i < n; i++)
        free(blocks[i]);
    return 0;
}
