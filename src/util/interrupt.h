/* interrupt: the process's one handler for SIGINT, SIGTERM and SIGHUP,
 * installed once by main(). Until a command says it handles interrupts
 * (interrupt_catch) a signal ends the process as it would by default: a
 * `status` stopped with Ctrl-C stops. A command that catches them checks
 * interrupt_pending() between its steps and hands interrupt_token() to
 * the waits that take a cancel token; what an interrupt undoes is the
 * command's to define. A second Ctrl-C after the first ends the process by
 * default, for an operator who will not wait for the clean-up; a repeated
 * SIGTERM or SIGHUP changes nothing.
 *
 * SIGUSR1 and SIGUSR2 go to a hook (the console's and watch's guard:
 * `guard --resolve`, `guard --stop`), which must be async-signal-safe. */
#ifndef DSV41_INTERRUPT_H
#define DSV41_INTERRUPT_H

#include <stdatomic.h>
#include <stdbool.h>

void interrupt_install(void);
/* From now on a signal sets the flag instead of ending the process. */
void interrupt_catch(void);
/* The signal that came (SIGINT, SIGTERM, SIGHUP), 0 when none. */
int interrupt_pending(void);
/* For a clean-up whose own steps stop on an interrupt (accept's rollback),
 * whatever began it: returns the pending signal (0 when none) and clears it
 * (flag, token and fd), so those steps run; from then on SIGTERM and SIGHUP
 * are ignored and a Ctrl-C ends the process, as a second one would. */
int interrupt_take(void);
/* Nonzero once a signal came; for the modules' cancel tokens. Commands
 * may also set it to stop their own workers. */
atomic_int *interrupt_token(void);
/* "SIGINT (Ctrl-C)", "SIGTERM", ... for messages. */
/* An fd that becomes readable when the first caught signal comes (and stays
 * so), for waits that poll fds (the engine's socket); -1 before
 * interrupt_install or when it has none. A command that sets the token
 * itself does not make it readable. */
int interrupt_fd(void);
/* True once a cancel fd (interrupt_fd, a stop pipe's read end) has been
 * made readable; false for -1. Never waits. */
bool cancel_fd_set(int fd);
const char *interrupt_name(int sig);
void interrupt_on_usr(void (*fn)(int sig));

#endif
