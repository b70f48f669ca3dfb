/* docsref: what an operator looks up besides the commands - the environment
 * variables the programs read and the files they write - as tables, so that
 * the man pages and the docs' tables are printed from one place.
 * tests/check_docs.sh holds them to the code: every getenv() of src/ and
 * tui/ is a setting or a variable here, and every STATE_DIR/... or
 * .dsv41-... a page or a message names is a file here. */
#ifndef DSV41_DOCSREF_H
#define DSV41_DOCSREF_H

/* Which program reads the variable or writes the file. */
enum docsref_prog { REF_TOP = 1, REF_GUARD = 2, REF_VERIFY = 4, REF_XFER = 8 };

struct docsref_env {
    const char *name;
    int progs; /* REF_* */
    const char *what;
};

struct docsref_file {
    const char *path; /* STATE_DIR/..., MODEL_DIR/...: the settings it lies under */
    int progs;
    const char *what; /* what it holds, and who writes it */
};

/* Each ends with {NULL}. */
extern const struct docsref_env DOCSREF_ENV[];
extern const struct docsref_file DOCSREF_FILES[];

#endif
