#!/bin/sh
# make install into a scratch prefix and use it as a user would: trainsim run
# from another folder (configs found under share/trainsim), the man pages, the
# bash completion, the embedding example built with pkg-config; then make
# uninstall leaves nothing; DESTDIR stages the same tree. Run by make check
# (CC, and EXAMPLE_FLAGS: the sanitizer options the library was built with).
set -eu
cd "$(dirname "$0")/.."
top=$PWD
tmp=$(mktemp -d /tmp/trainsim-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/inst
fail() { echo "install test: $*" >&2; exit 1; }
unset TRAINSIM_CONFIGS

make --no-print-directory -s install PREFIX="$prefix" >/dev/null

# the installed binary, from a folder without configs/, prints what the checkout's prints
args="run --platform dgx-h100-superpod --nodes 2 --model megatron-gpt-1.7b --layout tp=8,pp=2,gbs=16 --seq 2048"
mkdir "$tmp/elsewhere"
(cd "$tmp/elsewhere" && "$prefix/bin/trainsim" $args) | grep -v '^fidelity' > "$tmp/installed.out" ||
  fail "$prefix/bin/trainsim $args failed"
bin/trainsim $args | grep -v '^fidelity' > "$tmp/checkout.out"
cmp -s "$tmp/installed.out" "$tmp/checkout.out" || fail "installed trainsim run differs from bin/trainsim's"
grep -q '^iteration ' "$tmp/installed.out" || fail "no iteration line"

# man pages: one per command, valid roff; man -M finds trainsim-run where man exists
for c in $(bin/trainsim --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
  [ "$c" = help ] || [ -f "$prefix/share/man/man1/trainsim-$c.1" ] || fail "no man page trainsim-$c.1"
done
page=$prefix/share/man/man1/trainsim-run.1
grep -q '^\.TH "TRAINSIM-RUN" 1' "$page" && grep -q '^\.SH OPTIONS' "$page" || fail "$page is not a man page"
if command -v groff >/dev/null; then
  [ -z "$(groff -man -ww -z "$page" 2>&1)" ] || fail "groff warns on $page: $(groff -man -ww -z "$page" 2>&1)"
fi
if command -v man >/dev/null; then
  MANWIDTH=100 man -M "$prefix/share/man" trainsim-run 2>/dev/null | grep -q -- '--layout L' ||
    fail "man -M $prefix/share/man trainsim-run does not show --layout"
else
  echo "install test: man not installed: checked the page's roff only"
fi

# bash completion: commands, a command's options, shipped cluster names
comp=$prefix/share/bash-completion/completions/trainsim
if command -v bash >/dev/null; then
  out=$(bash -c 'shopt -s extglob; . "$1"
    COMP_WORDS=(trainsim se); COMP_CWORD=1; _trainsim; echo "${COMPREPLY[*]}"
    COMP_WORDS=(trainsim run --lay); COMP_CWORD=2; _trainsim; echo "${COMPREPLY[*]}"
    COMP_WORDS=(trainsim search --cluster fron); COMP_CWORD=3; _trainsim; echo "${COMPREPLY[*]}"' _ "$comp")
  [ "$out" = "$(printf 'search\n--layout\nfrontier')" ] || fail "completion gave: $out"
fi

# the embedding example, built with pkg-config against the installed library
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --exists trainsim || fail "pkg-config finds no trainsim.pc"
mkdir -p "$tmp/app/bin"
${CC:-cc} ${EXAMPLE_FLAGS:-} -std=c11 -Wall -Werror "$top/docs/examples/embed.c" $(pkg-config --cflags --libs trainsim) -o "$tmp/app/bin/embed" ||
  fail "the example does not build with pkg-config --cflags --libs trainsim"
(cd "$tmp/elsewhere" && LD_LIBRARY_PATH="$prefix/lib" "$tmp/app/bin/embed") > "$tmp/embed.out" || fail "the example failed"
it=$(awk '/^iteration/ { print $2 }' "$tmp/installed.out")
grep -q "^iteration $it s" "$tmp/embed.out" || fail "the example's iteration is not the CLI's $it s"
bus=$(bin/trainsim coll --platform dgx-h100-superpod --nodes 2 --op all_reduce -b 64M -e 64M | awk '/^ *67108864/ { print $8 }')
grep -q "67108864 bytes .* busbw *$bus GB/s" "$tmp/embed.out" || fail "the example's 64 MiB busbw is not the CLI's $bus"
# libtrainsim.a linked in, its dependencies shared (Debian's igraph.pc names static
# libraries it does not ship, so `pkg-config --static` cannot link here)
${CC:-cc} ${EXAMPLE_FLAGS:-} -std=c11 "$top/docs/examples/embed.c" $(pkg-config --cflags trainsim) "$prefix/lib/libtrainsim.a" \
  $(pkg-config --libs simgrid jansson gsl libxml-2.0 igraph zlib) -lstdc++ -lm -o "$tmp/app/bin/embed-static" ||
  fail "the example does not link with libtrainsim.a"
# (no libtrainsim.so to find share/trainsim beside: $TRAINSIM_CONFIGS names it)
(cd "$tmp/elsewhere" && TRAINSIM_CONFIGS="$prefix/share/trainsim" "$tmp/app/bin/embed-static") | cmp -s - "$tmp/embed.out" ||
  fail "static and shared examples differ"

# uninstall removes exactly what install put: nothing is left under the prefix
make --no-print-directory -s uninstall PREFIX="$prefix" >/dev/null
[ -z "$(find "$prefix" -mindepth 1 2>/dev/null)" ] || fail "left after uninstall: $(find "$prefix" -mindepth 1 | head -5)"

# DESTDIR stages the tree; the prefix compiled into trainsim.pc is PREFIX's
make --no-print-directory -s install PREFIX=/opt/trainsim DESTDIR="$tmp/stage" >/dev/null
[ -x "$tmp/stage/opt/trainsim/bin/trainsim" ] && grep -q '^prefix=/opt/trainsim$' "$tmp/stage/opt/trainsim/lib/pkgconfig/trainsim.pc" ||
  fail "DESTDIR staging"
make --no-print-directory -s uninstall PREFIX=/opt/trainsim DESTDIR="$tmp/stage" >/dev/null
[ -d "$tmp/stage" ] && [ -z "$(find "$tmp/stage" -mindepth 1)" ] || fail "DESTDIR uninstall left files"
echo "install test: install, run from elsewhere, man, completion, pkg-config example, uninstall: ok"
