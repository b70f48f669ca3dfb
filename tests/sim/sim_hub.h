/* The simulator's Hugging Face hub: repository revisions on disk
 * (ROOT/revs/COMMIT/..., ROOT/refs/main holding the commit `main` names),
 * listed the way the hub's API lists them, and served through the API, the
 * resolve redirect and a CDN of its own (or an nginx on the same tree). */
#ifndef DSV41_SIM_HUB_H
#define DSV41_SIM_HUB_H

#include <stdbool.h>
#include <stdint.h>

struct hub_entry {
    char *path;       /* relative to the revision */
    bool dir;
    int64_t size;
    bool lfs;         /* *.safetensors* and the exl3 banks, as the repo's .gitattributes */
    char sha256[65];  /* lfs.oid */
    char oid[41];     /* git sha1: of the blob, or of the LFS pointer file */
    int pointer_size; /* LFS pointer file's length */
};

struct hub_rev {
    char commit[41];
    char dir[1024];
    struct hub_entry *e;
    int n;
};

struct hub_repo {
    struct hub_rev *rev;
    int nrev;
    char main_commit[41];
};

/* Loads and hashes every revision under root; -1 with a message printed. */
int hub_repo_load(const char *root, struct hub_repo *r);
/* A revision by commit or by "main"; NULL when unknown. */
const struct hub_rev *hub_repo_find(const struct hub_repo *r, const char *rev);
const struct hub_entry *hub_rev_file(const struct hub_rev *v, const char *path);

/* `dsv41-sim hub ...`: serves until SIGTERM. */
int hub_main(int argc, char **argv);
/* `dsv41-sim receiver`: an alert webhook recording what it gets (sim_receiver.c). */
int receiver_main(int argc, char **argv);

#endif
