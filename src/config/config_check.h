/* config_check: the allowed form of each kind of setting. config.c gives
 * every key a kind and checks each value where it is loaded, so a value that
 * reaches a command line, a mount, a URL or a header already has the shape
 * it must have (a name without '/', a port in range, a path without control
 * bytes, no leading '-' where it would be read as an option). */
#ifndef DSV41_CONFIG_CHECK_H
#define DSV41_CONFIG_CHECK_H

#include <stdbool.h>

enum config_kind {
    CK_ANY,         /* free text without control characters */
    CK_PATH,        /* an absolute path without control characters */
    CK_MOUNT_PATH,  /* CK_PATH that also goes into `-v SRC:DST` and --env-file: no : , " */
    CK_LOCAL_PATH,  /* a path on the head (may be relative) */
    CK_FILE_NAME,   /* one plain file name: letters, digits, . _ -; not . or .. */
    CK_INT,         /* a whole number in [min, max] */
    CK_NUM,         /* a finite number in (min, max] */
    CK_BOOL,        /* 0 or 1 */
    CK_RUNTIME,     /* docker or podman */
    CK_SSH_TARGET,  /* [user@]host[:port] or an ssh config alias */
    CK_SSH_TARGETS, /* CK_SSH_TARGET, comma-separated */
    CK_IPV4,        /* dotted IPv4 */
    CK_IFNAME,      /* a network interface name */
    CK_HCAS,        /* NCCL_IB_HCA's list: device names, commas, ^ = : */
    CK_IMAGE,       /* a container image reference */
    CK_URL,         /* http:// or https:// */
    CK_REVISION,    /* a git revision: branch, tag or commit */
    CK_WORDS,       /* words in shell quoting (strv_add_shell_words), no control characters */
    CK_COMMAND,     /* CK_WORDS whose first word is a program, not an option */
    CK_ENV_WORDS,   /* CK_WORDS each KEY=VALUE (not VLLM_API_KEY: the key has its own file) */
    CK_ULIMITS,     /* name=soft[:hard] words */
    CK_GPUS,        /* --gpus' value: all, device=0,1, ... */
    CK_WORD,        /* one word of letters, digits and _ */
    CK_SECRET,      /* printable ASCII without blanks: it goes into a header */
    CK_LOG_SIZE,    /* a size for --log-opt max-size: digits and k, m or g, at least 8k */
    CK_SOCKET,      /* none, an absolute path or unix:///path: an engine's API socket */
};

/* NULL when value has the kind's form (empty values pass only when
 * empty_ok), else the form expected, for "KEY=VALUE: expected FORM". */
const char *config_check_value(enum config_kind kind, double min, double max, bool empty_ok,
                               const char *value, char *form, int formsz);

#endif
