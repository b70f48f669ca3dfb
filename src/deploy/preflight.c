/* preflight: see preflight.h. */
#include "preflight.h"

#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "text.h"

static const char *MODEL_FILES[] = {"config.json", "model.safetensors.index.json",
                                    "model-00005-of-00006.safetensors",
                                    "model-00006-of-00006.safetensors"};

/* Output lines: "missing F", "image yes|no", "image-id ID", "df KIB". */
int preflight_check(const struct config *c, struct node *n, const char *model_dir,
                    const char *state_dir, struct preflight *p, struct buf *err)
{
    memset(p, 0, sizeof *p);
    p->image = -1;
    p->free_kib = -1;
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd,
                 "D=$1 ST=$2 RT=$3 IMG=$4; shift 4\n"
                 "for f in \"$@\"; do [ -e \"$D/$f\" ] || printf 'missing %s\\n' \"$f\"; done\n"
                 "if id=$(" RUNTIME_SH_IMAGE_ID "); then echo 'image yes'; echo \"image-id $id\"\n"
                 "else echo 'image no'; fi\n"
                 "d=$ST; while [ ! -d \"$d\" ] && [ \"$d\" != / ]; do d=$(dirname -- \"$d\"); done\n"
                 "df -Pk -- \"$d\" 2>/dev/null | awk 'NR==2 {print \"df \" $4}'\n");
    shcmd_arg(&cmd, model_dir);
    shcmd_arg(&cmd, state_dir);
    shcmd_arg(&cmd, config_str(c, CFG_RUNTIME));
    shcmd_arg(&cmd, config_str(c, CFG_IMG));
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
