/* panes: one function per pane, drawing from state (lock held). */
#ifndef DSV41_TUI_PANES_H
#define DSV41_TUI_PANES_H

#include "ui.h"

void pane_header(struct ui *u);
void pane_nodes(struct ui *u);
void pane_server(struct ui *u);
void pane_fabric(struct ui *u);
void pane_jobs(struct ui *u);
void pane_log(struct ui *u, int i);
void pane_download(struct ui *u);

#endif
