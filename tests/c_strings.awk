# Every string literal of C files as one line, FILE:LINE:TEXT, adjacent
# literals joined the way the compiler joins them ("run dsv41-top " "doctor"
# is one message), comments and character constants skipped. Escapes become
# the character they stand for; \n and \t a blank, so a literal stays one line.
# Used by check_docs.sh to read what the program says; plain awk (mawk too).
function emit() {
    if (open_lit) print lit_file ":" lit_line ":" lit
    open_lit = 0; lit = ""
}
FNR == 1 { emit(); state = "code" }
{
    line = $0; n = length(line); i = 1
    while (i <= n) {
        c = substr(line, i, 1); c2 = substr(line, i, 2)
        if (state == "block") {
            if (c2 == "*/") { state = "code"; i += 2 } else i++
            continue
        }
        if (state == "str") {
            if (c == "\\") {
                e = substr(line, i + 1, 1)
                if (e == "") { i++; continue }      # a literal continued on the next line
                lit = lit ((e == "n" || e == "t") ? " " : e); i += 2
            } else if (c == "\"") {
                state = "code"; i++                 # may go on: "..." "..."
            } else { lit = lit c; i++ }
            continue
        }
        if (state == "chr") {
            if (c == "\\") i += 2
            else { if (c == "'") state = "code"; i++ }
            continue
        }
        # code
        if (c2 == "//") break
        if (c2 == "/*") { state = "block"; i += 2; continue }
        if (c == " " || c == "\t") { i++; continue }
        if (c == "\"") {
            if (!open_lit) { open_lit = 1; lit = ""; lit_file = FILENAME; lit_line = FNR }
            state = "str"; i++; continue
        }
        emit()
        if (c == "'") state = "chr"
        i++
    }
    if (state == "chr") state = "code"
}
END { emit() }
