#!/bin/sh
# Man pages from the commands' --help texts: trainsim(1) from `trainsim --help`
# and trainsim-CMD(1) from `trainsim CMD --help`, for every row of the command table.
# usage: gen_man.sh BIN/trainsim OUTDIR   (writes OUTDIR/trainsim.1, OUTDIR/trainsim-CMD.1)
set -eu
bin=$1 out=$2
mkdir -p "$out"

# help text on stdin -> roff on stdout. A "usage:" block is the SYNOPSIS, a
# line "word:" opens a section (options:, commands:), "exit status:" is EXIT
# STATUS; "  TAG  text" and "WORD  text" lines are tagged paragraphs.
to_roff() { # $1 page name, $2 one-line summary
  awk -v page="$1" -v summary="$2" '
    function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); sub(/^[.'\'']/, "\\\\&&", s); return s }
    function flush() { if (body != "") print esc(body); body = "" }
    function more(line) { body = body (body != "" ? " " : "") line }
    BEGIN { up = toupper(page)
            print ".\\\" generated from `" page " --help` by sim/cli/gen_man.sh: do not edit"
            print ".TH \"" up "\" 1 \"\" \"trainsim\" \"User Commands\""
            print ".ad l"; print ".nh"
            print ".SH NAME"; print esc(page) " \\- " esc(summary); sect = "" }
    /^usage:/ { sect = "usage"; print ".SH SYNOPSIS"; print ".nf"; sub(/^usage: */, ""); print esc($0); next }
    sect == "usage" && /^ / { sub(/^ +/, /^ +trainsim / ? "" : "    "); print esc($0); next }
    sect == "usage" { print ".fi"; sect = "desc"; print ".SH DESCRIPTION" }
    /^exit status:/ { flush(); sect = "exit"; print ".SH \"EXIT STATUS\""; sub(/^exit status: */, ""); body = $0; next }
    /^[a-z][a-z ]*:$/ { flush(); sect = "list"; h = toupper(substr($0, 1, length($0) - 1)); print ".SH " h; next }
    /^$/ { flush(); if (sect != "") print ".PP"; next }
    /^  -/ && !/[^ ]   *[^ ]/ {
        # an option row with one space before its text: the tag is its option words and metavariables
        n = split($0, w, " "); tag = ""
        for (i = 1; i <= n && (w[i] ~ /^-/ || w[i] ~ /^[A-Z][A-Z0-9_:=.]*,?$/); i++) tag = tag (tag != "" ? " " : "") w[i]
        txt = ""; for (; i <= n; i++) txt = txt (txt != "" ? " " : "") w[i]
        flush(); print ".TP"; print "\\fB" esc(tag) "\\fR"; body = txt; next }
    /^  ?[^ ].*[^ ]   *[^ ]/ || /^[a-z][a-z-]*   *[^ ]/ {
        # a tagged row: the tag, then two or more spaces, then its text
        if (match($0, /[^ ]   *[^ ]/) == 0) { more($0); next }
        tag = substr($0, 1, RSTART); txt = substr($0, RSTART + 1); sub(/^ +/, "", tag); sub(/^ +/, "", txt)
        flush(); print ".TP"; print "\\fB" esc(tag) "\\fR"; body = txt; next }
    { line = $0; sub(/^ +/, "", line); more(line) }
    END { flush(); if (page != "trainsim") { print ".SH \"SEE ALSO\""; print "\\fBtrainsim\\fR(1)" } }'
}

"$bin" --help | to_roff trainsim "simulate GPU clusters running parallel training" > "$out/trainsim.1"
"$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { n = $1; $1 = ""; sub(/^ +/, ""); print n "\t" $0 } on && /^$/ { on = 0 }' |
while IFS="$(printf '\t')" read -r cmd summary; do
  [ "$cmd" = help ] && continue
  "$bin" "$cmd" --help | to_roff "trainsim-$cmd" "$summary" > "$out/trainsim-$cmd.1"
done
