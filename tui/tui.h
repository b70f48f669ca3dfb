/* tui: the console. The only code that includes curses. It draws state
 * (src/live/state.h) and starts the engine's actions as jobs
 * (src/live/job.h); it never waits on the network. */
#ifndef DSV41_TUI_H
#define DSV41_TUI_H

#include "config.h"
#include "usage.h"

/* The console's options: its --help and the man page's CONSOLE section. */
extern const struct usage_doc console_doc;

/* Entry point: `dsv41-top` without a command. */
int tui_main(const struct config *c, int argc, char **argv, char **base_args, int nbase);

#endif
