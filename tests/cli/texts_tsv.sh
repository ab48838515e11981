# texts_tsv.sh — sourced by the repair tests: texts_tsv OUT writes small
# real texts as TSV (KEY<TAB>TEXT), up to 300 of the licences and packages'
# copyright files, else the suite's own texts (tests/data/texts), each
# folded onto one line and cut at 8000 bytes.
texts_tsv() {
    local texts=() f
    for f in /usr/share/common-licenses/* /usr/share/doc/*/copyright; do
        [ -f "$f" ] && [ -r "$f" ] && texts+=("$f")
        [ "${#texts[@]}" -ge 300 ] && break
    done
    if [ "${#texts[@]}" -lt 50 ]; then
        texts=()
        for f in "$(dirname "$src")"/../data/texts/*; do texts+=("$f"); done
    fi
    for f in "${texts[@]}"; do
        printf '%s\t%s\n' "$f" "$(tr '\t\n\r' '   ' < "$f" | head -c 8000)"
    done > "$1"
}
