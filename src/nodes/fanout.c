/* fanout: see fanout.h. */
#include "fanout.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct job {
    int i, rc;
    fanout_fn fn;
    void *ctx;
    FILE *out;
    char *text;
    size_t len;
    pthread_t th;
    bool threaded;
};

static void *job_main(void *arg)
{
    struct job *j = arg;
    j->rc = j->fn(j->i, j->out, j->ctx);
    return NULL;
}

int fanout_run(int n, fanout_fn fn, void *ctx, FILE *out)
{
    if (n <= 0)
        return 0;
    struct job *jobs = calloc((size_t)n, sizeof *jobs);
    if (!jobs) { /* one after the other, as before */
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += fn(i, out, ctx) != 0;
        return bad;
    }
    for (int i = 0; i < n; i++) {
        struct job *j = &jobs[i];
        *j = (struct job){.i = i, .fn = fn, .ctx = ctx};
        j->out = open_memstream(&j->text, &j->len);
        if (j->out)
            j->threaded = pthread_create(&j->th, NULL, job_main, j) == 0;
        if (!j->threaded && j->out) {
            fclose(j->out);
            free(j->text);
            j->out = NULL;
            j->text = NULL;
        }
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        struct job *j = &jobs[i];
        if (j->threaded) {
            pthread_join(j->th, NULL);
            fclose(j->out); /* text and len are final now */
            if (j->text && j->len)
                fwrite(j->text, 1, j->len, out);
            free(j->text);
        } else {
            j->rc = fn(i, out, ctx); /* no thread or stream: here, in its turn */
        }
        bad += j->rc != 0;
    }
    fflush(out);
    free(jobs);
    return bad;
}
