/* textbox: an overlay of text lines over the screen (u->box, titled
 * u->box_title), closed by any key: what a key shows rather than does (P:
 * connecting Pi). Lines longer than the screen are cut, never wrapped, so a
 * command stays one line to copy. */
#ifndef DSV41_TUI_TEXTBOX_H
#define DSV41_TUI_TEXTBOX_H

#include "ui.h"

void textbox_draw(const struct ui *u);

#endif
