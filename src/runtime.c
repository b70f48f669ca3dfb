#include "runtime.h"

#include <string.h>

#include "probe.h"

int runtime_check(const char *rt, struct buf *err)
{
    if (strcmp(rt, "docker") == 0 || strcmp(rt, "podman") == 0)
        return 0;
    buf_printf(err, "RUNTIME=%s: expected docker or podman", rt);
    return -1;
}

/* "$RT" or the quoted name: the sampling script keeps the runtime in $RT. */
static void verb(struct buf *out, const char *rt, const char *args)
{
    if (rt[0] == '$')
        buf_printf(out, "\"%s\"", rt);
    else
        buf_shell_quote(out, rt);
    buf_printf(out, " %s", args);
}

int runtime_cmd_inspect(struct buf *out, const char *rt, const char *names_var)
{
    verb(out, rt, "container inspect -f '" PROBE_INSPECT_FORMAT "' ");
    return buf_printf(out, "$%s", names_var);
}

int runtime_cmd_image_present(struct buf *out, const char *rt, const char *image)
{
    verb(out, rt, "image inspect ");
    buf_shell_quote(out, image);
    return buf_puts(out, " >/dev/null 2>&1");
}

int runtime_cmd_logs(struct buf *out, const char *rt, const char *name, bool follow, int tail)
{
    verb(out, rt, "logs");
    if (follow)
        buf_puts(out, " -f");
    if (tail >= 0)
        buf_printf(out, " --tail %d", tail);
    buf_puts(out, " ");
    return buf_shell_quote(out, name);
}

int runtime_cmd_kill(struct buf *out, const char *rt, const char *name)
{
    verb(out, rt, "kill ");
    return buf_shell_quote(out, name);
}

int runtime_cmd_rm(struct buf *out, const char *rt, const char *name)
{
    verb(out, rt, "rm -f ");
    return buf_shell_quote(out, name);
}
