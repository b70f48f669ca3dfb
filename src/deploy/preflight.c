/* preflight: see preflight.h. */
#include "preflight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_image.h"
#include "rank_engine.h"
#include "runtime.h"
#include "text.h"

static const char *MODEL_FILES[] = {"config.json", "model.safetensors.index.json",
                                    "model-00005-of-00006.safetensors",
                                    "model-00006-of-00006.safetensors"};

/* The image asked of the node's engine API (one exchange over the session,
 * or the local socket): true when the engine said (p->image and its id
 * set), false when the CLI in the script must ask - no socket, or no
 * answer of the engine's. The CLI costs a process that takes ~0.2 s to
 * start (podman, measured in the test world), the API milliseconds. */
static bool image_by_engine(const struct config *c, struct node *n, struct preflight *p)
{
    const char *rt = config_str(c, CFG_RUNTIME);
    struct rank_engine e;
    if (!rank_engine_open(n, rt, &e))
        return false;
    struct engine_image img;
    struct buf err = BUF_INIT;
    int rc = engine_image_inspect_at(&e.at, config_str(c, CFG_IMG), runtime_ids_bare(rt), 10000,
                                     &img, &err);
    buf_free(&err);
    if (rc == 0) {
        p->image = 1;
        snprintf(p->image_id, sizeof p->image_id, "%.79s", img.id);
    } else if (rc == ENGINE_NOSUCH) {
        p->image = 0;
    }
    return rc == 0 || rc == ENGINE_NOSUCH;
}

/* Output lines: "missing F", "image yes|no", "image-id ID", "df KIB". The
 * script asks the image only when IMG is not empty (the engine did not say). */
int preflight_check(const struct config *c, struct node *n, const char *model_dir,
                    const char *state_dir, struct preflight *p, struct buf *err)
{
    memset(p, 0, sizeof *p);
    p->image = -1;
    p->free_kib = -1;
    bool asked = image_by_engine(c, n, p);
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd,
                 "D=$1 ST=$2 RT=$3 IMG=$4; shift 4\n"
                 "for f in \"$@\"; do [ -e \"$D/$f\" ] || printf 'missing %s\\n' \"$f\"; done\n"
                 "if [ -z \"$IMG\" ]; then :\n"
                 "elif id=$(" RUNTIME_SH_IMAGE_ID "); then echo 'image yes'; echo \"image-id $id\"\n"
                 "else echo 'image no'; fi\n"
                 "d=$ST; while [ ! -d \"$d\" ] && [ \"$d\" != / ]; do d=$(dirname -- \"$d\"); done\n"
                 "df -Pk -- \"$d\" 2>/dev/null | awk 'NR==2 {print \"df \" $4}'\n");
    shcmd_arg(&cmd, model_dir);
    shcmd_arg(&cmd, state_dir);
    shcmd_arg(&cmd, config_str(c, CFG_RUNTIME));
    shcmd_arg(&cmd, asked ? "" : config_str(c, CFG_IMG));
    for (size_t i = 0; i < sizeof MODEL_FILES / sizeof *MODEL_FILES; i++)
        shcmd_arg(&cmd, MODEL_FILES[i]);
    shcmd_argf(&cmd, "exl3/plan/%s", config_str(c, CFG_PLAN_NAME));
    struct ssh_result res;
    int rc = node_run(n, &cmd, 60000, &res, err);
    shcmd_free(&cmd);
    if (rc < 0)
        return -1;
    for (const char *s = buf_str(&res.out); *s;) {
        size_t l = strcspn(s, "\n");
        char line[600];
        text_clean(line, sizeof line, s, l);
        if (strncmp(line, "missing ", 8) == 0 && line[8])
            strv_add(&p->missing, line + 8);
        else if (strcmp(line, "image yes") == 0)
            p->image = 1;
        else if (strcmp(line, "image no") == 0)
            p->image = 0;
        else if (strncmp(line, "image-id ", 9) == 0)
            snprintf(p->image_id, sizeof p->image_id, "%.79s", line + 9);
        else if (strncmp(line, "df ", 3) == 0)
            p->free_kib = atof(line + 3);
        s += l + (s[l] == '\n');
    }
    ssh_result_free(&res);
    return 0;
}

void preflight_free(struct preflight *p)
{
    strv_free(&p->missing);
}
