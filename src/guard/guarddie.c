/* What follows the guard's SIGKILLs (guard.c fire): the killed ranks'
 * threads hurried and their memory unmapped. Both run in the sampling
 * thread: no allocation. */
#include "fixstr.h"
#include "guard.h"
#include "mono.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* After the SIGKILLs, each killed rank's threads at the highest nice: a
 * SIGKILL takes effect only when each thread runs again, and the memory
 * comes back only once the last one has exited, which a busy core would
 * otherwise put off behind everything else that wants it. Android's lmkd
 * hurries its victims the same way. Measured on the 2-core test VM with a CPU
 * hog per core (a throwaway program: a 2 GiB process SIGKILLed, MemAvailable
 * watched): at nice 0, 3 of 15 took 8-21 s to hand the memory back; at -20,
 * none of 20 took over 110 ms. Where the ranks' cgroups have the cpu
 * controller, the nice counts within the rank's cgroup only. No allocation:
 * the task directory is read with getdents64 into a static buffer (one
 * caller: the sampling thread). The directory is checked to be the rank's
 * (its pidfd still names a process, so the number was not reused); a thread
 * number named in it and reused in the microseconds since would need pid_max
 * to wrap. The number of threads boosted; -1 when the rank had exited
 * before any could be (a fast exit: nothing to hurry). *refused counts the
 * threads that stayed as they were for another reason (EPERM: no
 * CAP_SYS_NICE) and a task directory that could not be read. */
int guard_boost_dying(struct guard *g, int i, int *refused)
{
    static char dents[16384];
    char path[600];
    snprintf(path, sizeof path, "%s/%ld/task", g->o.proc_root, (long)g->pids[i]);
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT || errno == ESRCH)
            return -1;
        ++*refused;
        return 0;
    }
    int n = 0, exited = 0, no = 0;
    if (syscall(SYS_pidfd_send_signal, g->pidfds[i], 0, NULL, 0) < 0)
        exited++;
    else {
        long got;
        while ((got = syscall(SYS_getdents64, dfd, dents, sizeof dents)) > 0)
            for (long at = 0; at < got;) {
                const struct dirent64 *d = (const struct dirent64 *)(dents + at);
                at += d->d_reclen;
                char *end;
                long tid = strtol(d->d_name, &end, 10);
                if (tid <= 0 || *end)
                    continue;
                if (setpriority(PRIO_PROCESS, (id_t)tid, -20) == 0)
                    n++;
                else if (errno == ESRCH)
                    exited++;
                else
                    no++;
            }
        /* reaped between the pidfd's answer and the read: gone, not refused */
        if (got < 0 && (errno == ENOENT || errno == ESRCH))
            exited++;
        else if (got < 0)
            no++;
    }
    close(dfd);
    *refused += no;
    return n == 0 && exited && !no ? -1 : n;
}

#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448 /* one number on every architecture (Linux 5.15) */
#endif

/* Then the killed ranks' memory unmapped by this thread, at its priority,
 * rather than by each rank as its threads get a core to exit on:
 * process_mrelease(2) (Linux 5.15, mm/oom_kill.c) does the OOM reaper's
 * work for a process with a SIGKILL pending - its anonymous and private
 * memory, the part a GB10 wedges for want of. lmkd does the same after its
 * kills. Measured with a 4 GiB process SIGKILLed, MemAvailable watched: on
 * the 2-core test VM beside a CPU hog, back in 94-132 ms with the reap,
 * 118-284 ms at nice -20 alone; idle on the device tool's 16-core host,
 * 66-120 ms against 99-208. Called after the FIRED line is written: the reap
 * takes as long as the unmapping (~25 ms a GiB on the VM). ESRCH: every
 * thread of the rank has let go of its memory already (its exit unmaps it).
 * Says what it did in *said. */
void guard_reap_dying(struct guard *g, const bool *sent, char *said, size_t saidsz)
{
    double t0 = mono_s();
    int reaped = 0, gone = 0, failed = 0, err = 0;
    for (int i = 0; i < g->npids; i++) {
        if (!sent[i])
            continue;
        if (syscall(SYS_process_mrelease, g->pidfds[i], 0) == 0)
            reaped++;
        else if (errno == ESRCH)
            gone++;
        else
            failed++, err = errno;
    }
    size_t at = 0;
    fixstr_appendf(said, saidsz, &at, "memory of %d killed rank(s) unmapped by the guard in %.1f ms",
                   reaped, (mono_s() - t0) * 1e3);
    if (gone)
        fixstr_appendf(said, saidsz, &at, " (%d had exited)", gone);
    if (failed)
        fixstr_appendf(said, saidsz, &at, "; %d not: %s", failed,
                       err == ENOSYS ? "this kernel has no process_mrelease (Linux < 5.15): each "
                                       "rank frees its memory as it exits"
                                     : strerror(err));
}
