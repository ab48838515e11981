#!/usr/bin/env bash
# dedupe_quality.sh — precision and recall of `neardup dedupe --out pairs`
# on real text found on this machine (bench/README.md, "Dedupe quality").
#
# usage: bench/dedupe_quality.sh BUILD_DIR [WORK_DIR] [-- SETTING...]
#   BUILD_DIR  a meson build dir holding cli/neardup and bench/dedupe_quality
#   WORK_DIR   scratch space (default /tmp/nd-dedupe-quality); the corpus is
#              built there once (delete it to rebuild)
#   SETTING    dedupe options for one run, words joined by commas, e.g.
#              "--k,3,--min-resemblance,0"; "default" runs with no option.
#              Default list: default, containment on (C 0.9 and 0.8),
#              plain simhash k=3, 6 and 8.
#
# The corpus is one flat directory of files named CATEGORY__NAME:
#   lic__*        /usr/share/common-licenses/* (regular files, not links)
#   copyright__*  /usr/share/doc/*/copyright (regular files, not links)
#   man__*        every gzipped man page under /usr/share/man (all sections
#                 and languages), decompressed roff source, except .so
#                 redirects and the gcloud pages
#   gcloud__*     the gcloud man pages (many thousands, templated)
# Empty files are left out (bench/quality_corpus.py builds it: the same
# documents as its "docs" corpus). Ground truth and scoring:
# bench/dedupe_quality.c.
set -euo pipefail
B=${1:?usage: dedupe_quality.sh BUILD_DIR [WORK_DIR] [-- SETTING...]}
W=${2:-/tmp/nd-dedupe-quality}
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
ND=$B/cli/neardup
DQ=$B/bench/dedupe_quality
C=$W/corpus
mkdir -p "$W"

[ -d "$C" ] || python3 "$(dirname "$0")/quality_corpus.py" files "$C"
echo "corpus: $C: $(ls "$C" | wc -l) files, $(du -sh "$C" | cut -f1)"
for c in lic copyright man gcloud; do printf '  %s: %s\n' "$c" "$(ls "$C" | grep -c "^${c}__")"; done

settings=("$@")
[ ${#settings[@]} -eq 0 ] && settings=(default "--min-containment,0.9" "--min-containment,0.8"
    "--k,3,--min-resemblance,0" "--k,6,--min-resemblance,0" "--k,8,--min-resemblance,0")
pairs=()
for s in "${settings[@]}"; do
    opts=()
    [ "$s" != default ] && IFS=, read -r -a opts <<< "$s"
    f=$W/pairs.$(printf '%s' "$s" | tr -c 'A-Za-z0-9.\n' '_').tsv
    /usr/bin/time -f "%e s wall, %M KB max RSS" -o "$W/time" \
        "$ND" dedupe --out pairs ${opts[@]+"${opts[@]}"} "$C" > "$f" 2> "$W/err"
    echo "dedupe $s: $(tail -1 "$W/err" | sed 's/^neardup: dedupe: //'); $(cat "$W/time")"
    pairs+=("$f")
done
"$DQ" "$C" "${pairs[@]}"
