# test_readme.sh — the examples of README.md and docs/*.md are what a
# user sees.
#
# $DOCS lists the pages, relative to $SRC_ROOT, in the order their
# examples run (tests/meson.build sets it: README.md first, then the
# docs pages in the order of the README's "Where to read on"); their
# examples form one stream. Every ```sh block of those pages whose first
# line is a `$ ` prompt is run, page after page and block after block, in
# one shell in this empty directory, with `neardup` on PATH (LC_ALL=C).
# The lines below a `$ COMMAND` line are its output: a line that starts
# with "neardup:" is compared with its stderr, every other one with its
# stdout; a duration ("0.02 s") and a rate ("425 docs/s") match any. A
# block right after the line `<!-- readme-test: skip ... -->` is not run.
# For the C API page, `cc` builds against the build tree (pkg-config
# finds its neardup-uninstalled.pc, in the build root) and example.c is
# tests/readme_example.c.
# Also checked: one page of $DOCS has a ```c block, that block is
# tests/readme_example.c (after that file's opening comment), and the
# page's heading "The C API in N lines" counts it; every page of docs/
# with a `$ ` example is in $DOCS (else its examples would not run).
# Needs $DOCS, $BUILD_ROOT, $SRC_ROOT; $SANITIZE (b_sanitize) if any.

read -r -a pages <<< "$DOCS"
check "DOCS lists pages" "${#pages[@]}" -ge 2
paths=()
for page in "${pages[@]}"; do
    check "$page exists" -f "$SRC_ROOT/$page"
    paths+=("$SRC_ROOT/$page")
done
# A ```sh block whose first line is a `$ ` prompt: FILE's examples.
has_examples() { awk '/^```sh$/ { getline; if (substr($0, 1, 2) == "$ ") { f = 1; exit } } END { exit !f }' "$1"; }
for f in "$SRC_ROOT"/docs/*.md; do
    page=docs/${f##*/}
    case " $DOCS " in *" $page "*) continue ;; esac
    if has_examples "$f"; then _fail "$page has examples but is not in DOCS"; else _pass; fi
done

# ---- the C block and its heading
cpages=()
for page in "${pages[@]}"; do
    grep -qx '```c' "$SRC_ROOT/$page" && cpages+=("$page")
done
check "one page has the C block: ${cpages[*]}" "${#cpages[@]}" = 1
cpage=$SRC_ROOT/${cpages[0]:-}
awk '/^```c$/ { f = 1; next } /^```$/ { f = 0 } f' "$cpage" > readme_block.c
awk 'NR == 1 && /^\/\*/ { c = 1 } c { if (/\*\//) c = 0; next } { print }' \
    "$SRC_ROOT/tests/readme_example.c" > example.c
check "${cpages[0]}'s C block is tests/readme_example.c" "$(cmp readme_block.c example.c 2>&1; echo $?)" = 0
lines=$(wc -l < readme_block.c)
check "the heading of ${cpages[0]} counts the C block's $lines lines" \
    -n "$(grep -xE "#+ The C API in $lines lines" "$cpage")"

# ---- the shell examples: one record per line, KIND<TAB>TEXT
# (B a block starts, C a command, O a line of output)
# (C and O records also name the page and line: KIND<TAB>PAGE:LINE<TAB>TEXT)
awk -v root="$SRC_ROOT/" '
    FNR == 1 { skip = 0; inblock = 0; page = substr(FILENAME, length(root) + 1) }
    /^<!-- readme-test: skip/ { skip = 1; next }
    /^```sh$/ { inblock = 1; first = 1; run = !skip; skip = 0; next }
    /^```/ { inblock = 0; next }
    !inblock { next }
    first { first = 0; if (substr($0, 1, 2) != "$ ") run = 0; else print "B\t" page ":" FNR }
    !run { next }
    substr($0, 1, 2) == "$ " { print "C\t" page ":" FNR "\t" substr($0, 3); next }
    { print "O\t" page ":" FNR "\t" $0 }
' "${paths[@]}" > examples.tsv
check "the pages have examples" "$(grep -c '^C' examples.tsv)" -ge 30
check "${pages[0]} has examples, run first" "$(cut -f2 examples.tsv | grep -c "^${pages[0]}:")" -ge 1

# A script that runs each command, its stdout and stderr to files.
mkdir work bin
cp example.c work/
nd_dir=$(dirname "$ND")
san=${SANITIZE:-none}
# cc builds with the tree's sanitizers, if any (the library needs them)
if [ "$san" != none ]; then
    printf '#!/bin/sh\nexec /usr/bin/cc -fsanitize=%s "$@"\n' "$san" > bin/cc
    chmod +x bin/cc
fi
n=0
{
    echo 'cd work'
    while IFS=$'\t' read -r kind where text; do
        [ "$kind" = C ] || continue
        n=$((n + 1))
        printf '{ %s\n} > ../out.%d 2> ../err.%d\n' "$text" "$n" "$n"
    done < examples.tsv
} > run_examples.sh
n=0
while IFS=$'\t' read -r kind where text; do
    case $kind in
    C) n=$((n + 1)); : > "want_out.$n"; : > "want_err.$n"; printf '%s: $ %s\n' "$where" "$text" > "cmd.$n" ;;
    O) case $text in
       neardup:*) printf '%s\n' "$text" >> "want_err.$n" ;;
       *) printf '%s\n' "$text" >> "want_out.$n" ;;
       esac ;;
    esac
done < examples.tsv
PATH="$PWD/bin:$nd_dir:$PATH" LC_ALL=C TZ=UTC \
    PKG_CONFIG_PATH="$BUILD_ROOT" LD_LIBRARY_PATH="$BUILD_ROOT" \
    bash run_examples.sh > run.log 2>&1
check "the examples ran to the end: $(cat run.log)" -z "$(cat run.log)"

# Durations and rates vary from run to run.
norm() { sed -E 's/[0-9]+\.[0-9]+ s([^a-z]|$)/N s\1/g; s/[0-9]+ docs\/s/N docs\/s/g' "$1"; }
for ((i = 1; i <= n; i++)); do
    if [ "$(norm "out.$i")" != "$(norm "want_out.$i")" ]; then
        _fail "$(cat "cmd.$i")"$'\n'"$(diff "want_out.$i" "out.$i" | sed 's/^/    /')"
    else
        _pass
    fi
    if [ "$(norm "err.$i")" != "$(norm "want_err.$i")" ]; then
        _fail "(stderr) $(cat "cmd.$i")"$'\n'"$(diff "want_err.$i" "err.$i" | sed 's/^/    /')"
    else
        _pass
    fi
done
