#include "runtime.h"

#include <stdio.h>
#include <string.h>

int runtime_check(const char *rt, struct buf *err)
{
    if (strcmp(rt, "docker") == 0 || strcmp(rt, "podman") == 0)
        return 0;
    buf_printf(err, "RUNTIME=%s: expected docker or podman", rt);
    return -1;
}

bool runtime_ids_bare(const char *rt)
{
    return strcmp(rt, "podman") == 0;
}

void runtime_rank_names(struct strv *names, int n)
{
    for (int i = 0; i < n; i++)
        strv_addf(names, "dsv41-r%d", i);
}

void runtime_cmd_inspect(struct shcmd *c, const char *rt, const struct strv *names)
{
    shcmd_exec(c, rt, "container", "inspect", "-f", INSPECT_FORMAT, "--", (char *)NULL);
    shcmd_args(c, names);
}

void runtime_cmd_image_present(struct shcmd *c, const char *rt, const char *image)
{
    shcmd_script(c, "exec \"$@\" >/dev/null 2>&1");
    shcmd_arg(c, rt);
    shcmd_arg(c, "image");
    shcmd_arg(c, "inspect");
    shcmd_arg(c, "--");
    shcmd_arg(c, image);
}

void runtime_cmd_logs(struct shcmd *c, const char *rt, const char *name, bool follow, int tail)
{
    shcmd_script(c, "exec \"$@\" 2>&1");
    shcmd_arg(c, rt);
    shcmd_arg(c, "logs");
    if (follow)
        shcmd_arg(c, "-f");
    if (tail >= 0) {
        shcmd_arg(c, "--tail");
        shcmd_argf(c, "%d", tail);
    }
    shcmd_arg(c, "--");
    shcmd_arg(c, name);
}

void runtime_cmd_kill(struct shcmd *c, const char *rt, const char *name)
{
    shcmd_exec(c, rt, "kill", "--", name, (char *)NULL);
}

void runtime_cmd_rm(struct shcmd *c, const char *rt, const char *name)
{
    /* docker's rm -f kills at once; podman's stops first, with the stop
     * timeout (10 s) - a rank that drains would finish its requests */
    if (strcmp(rt, "podman") == 0)
        shcmd_exec(c, rt, "rm", "-f", "-t", "0", "--", name, (char *)NULL);
    else
        shcmd_exec(c, rt, "rm", "-f", "--", name, (char *)NULL);
}

void runtime_cmd_stop(struct shcmd *c, const char *rt, const char *name, int timeout_s)
{
    /* -t, not --time or --timeout: the spelling both runtimes have had */
    shcmd_exec(c, rt, "stop", "-t", (char *)NULL);
    shcmd_argf(c, "%d", timeout_s);
    shcmd_arg(c, "--");
    shcmd_arg(c, name);
}

int runtime_log_args(struct strv *v, const char *rt, const char *max_size, const char *max_files)
{
    if (!max_size || !*max_size)
        return 0;
    bool podman = strcmp(rt, "podman") == 0;
    int rc = strv_add(v, "--log-driver");
    rc |= strv_add(v, podman ? "k8s-file" : "json-file");
    rc |= strv_add(v, "--log-opt");
    rc |= strv_addf(v, "max-size=%s", max_size);
    if (!podman && max_files && *max_files) {
        rc |= strv_add(v, "--log-opt");
        rc |= strv_addf(v, "max-file=%s", max_files);
    }
    return rc;
}
