# Prints a text file as one C string constant named by -v name=NAME: a line
# of the file is a line of the string. Escapes each backslash and quote one
# character at a time (gsub's backslashes differ between mawk and gawk), and
# each "?" (no trigraph can form under -std=c17).
BEGIN { print "static const char " name "[] =" }
{
    out = ""
    n = length($0)
    for (i = 1; i <= n; i++) {
        c = substr($0, i, 1)
        if (c == "\\") out = out "\\\\"
        else if (c == "\"") out = out "\\\""
        else if (c == "?") out = out "\\?"
        else out = out c
    }
    print "    \"" out "\\n\""
}
END { print "    \"\";" }
