/* verify_wire: see verify_wire.h. */
#include "verify_wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

static const enum verify_result RESULTS[] = {VERIFY_OK, VERIFY_MISMATCH, VERIFY_MISSING,
                                             VERIFY_UNREADABLE, VERIFY_CANCELLED};

void verify_wire_progress(struct buf *out, int64_t done, int64_t total)
{
    buf_printf(out, "progress %" PRId64 " %" PRId64 "\n", done, total);
}

void verify_wire_file(struct buf *out, const struct verify_entry *e)
{
    char hex[65] = "-";
    if (e->res == VERIFY_OK || e->res == VERIFY_MISMATCH)
        verify_hex(e->got, hex);
    buf_printf(out, "file %s %" PRId64 " %s ", verify_result_name(e->res), e->size, hex);
    if (e->not_regular)
        buf_puts(out, "notreg ");
    else
        buf_printf(out, "%d ", e->err);
    wire_path_put(out, e->path);
    buf_puts(out, "\n");
}

void verify_wire_end(struct buf *out, int bad, bool interrupted)
{
    buf_printf(out, "end %d %d\n", bad, interrupted ? 1 : 0);
}

static bool parse_file(const char *s, struct verify_wire *w)
{
    struct verify_entry *e = &w->e;
    memset(e, 0, sizeof *e);
    size_t n = strcspn(s, " ");
    bool known = false;
    for (size_t i = 0; i < sizeof RESULTS / sizeof RESULTS[0] && !known; i++)
        if (strlen(verify_result_name(RESULTS[i])) == n &&
            strncmp(s, verify_result_name(RESULTS[i]), n) == 0) {
            e->res = RESULTS[i];
            known = true;
        }
    if (!known || s[n] != ' ')
        return false;
    s += n + 1;
    if (!wire_num(&s, &e->size, false) || e->size < -1)
        return false;
    if (s[0] == '-' && s[1] == ' ')
        s += 2;
    else if (!wire_hex32(&s, e->got, false))
        return false;
    int64_t err = 0;
    if (strncmp(s, "notreg ", 7) == 0) {
        e->not_regular = true;
        s += 7;
    } else if (!wire_num(&s, &err, false) || err < 0 || err > 4095) {
        return false;
    }
    e->err = (int)err;
    if (!wire_path_get(s, w->path, sizeof w->path))
        return false;
    e->path = w->path;
    return true;
}

void verify_wire_parse(const char *line, struct verify_wire *w)
{
    w->kind = VW_TEXT;
    const char *s = line;
    if (strncmp(s, "progress ", 9) == 0) {
        s += 9;
        if (wire_num(&s, &w->done, false) && wire_num(&s, &w->total, true) && w->done >= 0 &&
            w->total >= 0)
            w->kind = VW_PROGRESS;
    } else if (strncmp(s, "file ", 5) == 0) {
        if (parse_file(s + 5, w))
            w->kind = VW_FILE;
    } else if (strncmp(s, "end ", 4) == 0) {
        int64_t bad, intr;
        s += 4;
        if (wire_num(&s, &bad, false) && wire_num(&s, &intr, true) && bad >= 0 &&
            bad <= VERIFY_MAX_FILES && (intr == 0 || intr == 1)) {
            w->bad = (int)bad;
            w->interrupted = intr == 1;
            w->kind = VW_END;
        }
    }
}

const struct usage_doc verifyd_doc = {
    "dsv41-verify", "--dir DIR --manifest FILE [--jobs N]", "the checkpoint checked on a worker",
    "The helper dsv41-top verify --node NAME (and verify --all) runs on a worker over ssh: "
    "hashes every file of the manifest in DIR on the worker's own cores and disk and reports "
    "in lines for the head (progress, file, end). dsv41-top puts it and the head's manifest "
    "into the worker's STATE_DIR/bin over sftp; it is static, so the worker needs nothing "
    "installed. Run by hand it prints the same lines.",
    (const struct usage_exit[]){{0, "every file matches"},
                                {1, "a file is missing, unreadable or differs, or the run was "
                                    "interrupted"},
                                {2, "a usage error, or the manifest could not be read"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--dir", "DIR", "the checkpoint directory (needed)"},
        {"--manifest", "FILE", "the sha256 manifest, sha256sum's format (needed)"},
        {"--jobs", "N", "files hashed at once (1 to 64, default 4)"},
        {NULL, NULL, NULL}}};
