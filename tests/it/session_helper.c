/* Holds one cluster (and so one ssh session to the worker) across commands
 * read from stdin, so a test can cut the session under it: each "status" line
 * prints the status JSON on one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cluster.h"
#include "status.h"

int main(void)
{
    struct config c;
    struct buf err = BUF_INIT;
    if (config_load(&c, NULL, NULL, 0, &err) < 0 || ssh_global_init() < 0 ||
        api_global_init() < 0) {
        fprintf(stderr, "%s\n", buf_str(&err));
        return 2;
    }
    struct cluster cl;
    if (cluster_open(&c, &cl, &err) < 0) {
        fprintf(stderr, "%s\n", buf_str(&err));
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char line[64];
    struct status_report *r = malloc(sizeof *r);
    while (r && fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "status", 6) != 0)
            continue;
        status_collect(&c, &cl, r);
        cJSON *j = status_to_json(r);
        char *s = cJSON_PrintUnformatted(j);
        printf("%s\n", s ? s : "{}");
        free(s);
        cJSON_Delete(j);
    }
    free(r);
    cluster_close(&cl);
    config_free(&c);
    buf_free(&err);
    return 0;
}
