# Every "dsv41-top COMMAND [--option...]" a message or a page names must name
# a command that exists and options that command documents: a message that
# tells the operator to run a fix nobody can run is a bug.
#
# awk -f cmd_refs.awk TABLE TEXTS
#   TABLE: "cmd NAME" (a command), "flag NAME OPTION" (a documented option;
#          NAME main and console for the options before a command), "arg
#          OPTION" (a main option that takes the next word)
#   TEXTS: FILE:LINE:TEXT lines (c_strings.awk, md_code.awk)
# Prints "FILE:LINE: why" for each bad reference, then "checked N references";
# exits 1 when one is bad.
#
# A reference: the words after "dsv41-top " up to the end of the text, a "("
# or a shell operator, or the first word that ends in punctuation ("run
# dsv41-top doctor, then ..."). "dsv41-top CMD: --opt ..." is a command's own
# error message: every --option in the rest of it is that command's.
# Placeholders (COMMAND, %s, $X, <x>) are not checked; PROSE are the words
# that follow the program's name in a sentence ("dsv41-top did not start").
BEGIN {
    split("did goes asks keeps runs command label for puts is installed", w, " ")
    for (i in w) prose[w[i]] = 1
    split("or and then | || && ; > >> < 2> # &", w, " ")
    for (i in w) stop[w[i]] = 1
}
FILENAME == ARGV[1] {
    if ($1 == "cmd") cmds[$2] = 1
    else if ($1 == "flag") flags[$2 " " $3] = 1
    else if ($1 == "arg") takes_arg[$2] = 1
    next
}
{
    if (!match($0, /^[^:]*:[0-9]+:/)) next
    where = substr($0, 1, RLENGTH - 1); rest = substr($0, RLENGTH + 1)
    while ((p = index(rest, "dsv41-top")) > 0) {
        before = p > 1 ? substr(rest, p - 1, 1) : " "
        after = substr(rest, p + 9, 1)
        rest = substr(rest, p + 9)
        if (before ~ /[[A-Za-z0-9_.-]/ || after != " ") continue
        check(where, rest)
    }
}
# a word as an option: brackets and "..." of a synopsis, "=VALUE" and
# punctuation at the end taken off
function clean(s) {
    gsub(/[][|]/, "", s); sub(/\.\.\.$/, "", s); sub(/=.*/, "", s)
    sub(/[,;:.)'"`]+$/, "", s)
    return s
}
function ends_sentence(s) { return s ~ /[,;:.)'"`]$/ }
function bad(where, why) { print where ": " why; nbad++ }
function is_opt(s) { return s ~ /^--?[a-z]/ }
function check(where, s,    t, n, k, o, c, word, prefix) {
    nref++
    n = split(s, t, /[ \t]+/)
    k = 1; if (t[1] == "") k = 2
    # the options before a command: main's; one of the console's is the console
    while (k <= n && is_opt(clean(t[k]))) {
        o = clean(t[k])
        if (("console " o) in flags) return console(where, t, n, k)
        if (!(("main " o) in flags)) { bad(where, "dsv41-top " o ": dsv41-top documents no " o); return }
        if (ends_sentence(t[k])) return
        k += (o in takes_arg) ? 2 : 1
    }
    if (k > n || (t[k] in stop) || t[k] ~ /^[(<$%[]/) return
    word = t[k]; c = clean(word)
    if (c == "" || c ~ /^[A-Z%<$]/ || (c in prose)) return
    if (!(c in cmds)) { bad(where, "dsv41-top " c ": there is no command " c); return }
    prefix = word ~ /:$/
    if (ends_sentence(word) && !prefix) return
    for (k++; k <= n; k++) {
        if (t[k] ~ /^\(/ || (!prefix && (t[k] in stop))) return
        o = clean(t[k])
        if (is_opt(o) && (!prefix || o ~ /^--/) && o != "--help" && o != "-h" && !((c " " o) in flags))
            bad(where, "dsv41-top " c " " o ": '" c "' documents no " o " (dsv41-top " c " --help)")
        if (ends_sentence(t[k]) && !prefix) return
    }
}
function console(where, t, n, k,    o) {
    for (; k <= n; k++) {
        if (t[k] ~ /^\(/ || (t[k] in stop)) return
        o = clean(t[k])
        if (is_opt(o) && !(("console " o) in flags) && !(("main " o) in flags))
            bad(where, "dsv41-top " o ": the console documents no " o " (dsv41-top --help-console)")
        if (ends_sentence(t[k])) return
    }
}
END { print "checked " nref " references"; exit nbad > 0 }
