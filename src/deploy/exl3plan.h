/* exl3plan: the EXL3 allocation plan. Its "qdir" lists the expert bank
 * directories joined by ':'; inside the container they live under
 * /model/exl3, so each entry is rewritten to /model/exl3/<last element>. */
#ifndef DSV41_EXL3PLAN_H
#define DSV41_EXL3PLAN_H

#include "buf.h"

/* Rewrites the plan text; -1 with a reason naming `name` when it is not a
 * JSON object with a non-empty string qdir. */
int exl3plan_rewrite(const char *text, const char *name, struct buf *out, struct buf *why);

#endif
