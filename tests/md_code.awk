# The code of Markdown files as FILE:LINE:TEXT lines: every line of a fenced
# block (a "# ..." comment cut off) and every `inline span` (one may run over
# the lines of its paragraph). Used by check_docs.sh to read the commands the
# pages tell an operator to type; plain awk (mawk too).
FNR == 1 { fence = 0; span = "" }
/^[ \t]*```/ { fence = !fence; span = ""; next }
fence {
    line = $0
    sub(/(^|[ \t])#.*/, "", line)
    if (line ~ /[^ \t]/) print FILENAME ":" FNR ":" line
    next
}
/^[ \t]*$/ { span = ""; next }
{
    rest = $0
    if (span != "") {                       # a span left open on the line before
        p = index(rest, "`")
        if (p == 0) { span = span " " rest; next }
        print span_where ":" span " " substr(rest, 1, p - 1)
        span = ""; rest = substr(rest, p + 1)
    }
    while ((p = index(rest, "`")) > 0) {
        rest = substr(rest, p + 1)
        q = index(rest, "`")
        if (q == 0) { span = rest; span_where = FILENAME ":" FNR; break }
        print FILENAME ":" FNR ":" substr(rest, 1, q - 1)
        rest = substr(rest, q + 1)
    }
}
