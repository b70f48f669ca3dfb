/* help: the '?' overlay of the key table (keys.h), drawn over the screen;
 * Space turns its pages. */
#ifndef DSV41_TUI_HELP_H
#define DSV41_TUI_HELP_H

#include "keys.h"
#include "ui.h"

/* Pages the overlay needs for n keys at the current size. */
int help_pages(const struct ui *u, int n);
/* The overlay's page u->help of the n keys k. */
void help_draw(const struct ui *u, const struct key_entry *k, int n);

#endif
