/* account: see account.h. */
#include "account.h"

#include <pwd.h>
#include <stdio.h>

int account_lookup(uid_t uid, char *name, size_t nsz, char *home, size_t hsz)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) != 0 || !res)
        return -1;
    if (name && (size_t)snprintf(name, nsz, "%s", pw.pw_name ? pw.pw_name : "") >= nsz)
        return -1;
    if (home && (size_t)snprintf(home, hsz, "%s", pw.pw_dir ? pw.pw_dir : "") >= hsz)
        return -1;
    return 0;
}
