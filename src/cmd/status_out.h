/* status_out: `dsv41-top status`'s output of a collected report
 * (src/deploy/status.h): text for people, JSON for scripts. */
#ifndef DSV41_STATUS_OUT_H
#define DSV41_STATUS_OUT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "status.h"

void status_print_text(FILE *f, const struct status_report *r);
cJSON *status_to_json(const struct status_report *r);

#endif
