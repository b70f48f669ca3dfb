/* draw: the whole screen from state, pane by pane (panes.h), clipped by
 * display columns (draw_util.h); it knows nothing of the keys. */
#ifndef DSV41_TUI_DRAW_H
#define DSV41_TUI_DRAW_H

#include "ui.h"

void draw_screen(struct ui *u);

#endif
