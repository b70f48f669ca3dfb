/* procid: a process named beyond its PID number. The kernel gives a number
 * to another process once its holder is gone (at once, and after every
 * reboot), so a PID kept in a file names a stranger sooner or later: the
 * memory guard's lock keeps, beside the number, when the process started
 * (/proc/PID/stat's starttime, clock ticks since boot) and in which boot
 * (/proc/sys/kernel/random/boot_id), and a signal goes only through a pidfd
 * opened on a process that matches both. */
#ifndef DSV41_PROCID_H
#define DSV41_PROCID_H

#include <stddef.h>

struct procid {
    long pid;
    unsigned long long start; /* 0: not known (a file written before these fields) */
    char boot[40];            /* "": not known */
};

/* This boot's ID (proc_root: "/proc", or a test's tree): 0; -1, out "",
 * when /proc cannot say. A file that must not outlive a restart keeps it. */
int procid_boot(const char *proc_root, char *out, size_t sz);
/* The identity process pid has now (proc_root: "/proc", or a test's tree).
 * 0; -1 when it is gone or /proc cannot say. */
int procid_of(long pid, const char *proc_root, struct procid *out);
/* Whether process pid lives: there and not a zombie (an exited process
 * nobody has reaped yet still answers kill(pid, 0)). */
int procid_alive(long pid, const char *proc_root);
/* " start=TICKS boot=UUID" (what the lock file carries after the PID). */
void procid_format(const struct procid *id, char *out, size_t sz);
/* The fields procid_format wrote, read from text; pid is given. Fields that
 * are absent stay 0 / "". */
void procid_parse(const char *text, long pid, struct procid *out);
/* A pidfd on exactly the process id names: -1, with why, when it is from
 * another boot, gone, or its number now belongs to a process that started at
 * another time. An id with no start known is taken on its number alone
 * (the caller must have other proof, such as a lock it holds). */
int procid_open(const struct procid *id, const char *proc_root, char *why, size_t whysz);

#endif
