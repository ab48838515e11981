#!/usr/bin/env bash
# html_pages.sh — gather the real HTML pages the HTML extractor is measured
# and compared on (bench/results/2026-12-02-html.md), and run the checks.
#
# usage: bench/html_pages.sh [--install] LIST      write LIST: one path a line
#        bench/html_pages.sh --tables BUILD         regenerate fp_html_tables.h
#   --install  first install Debian documentation packages (as root):
#              python3.11-doc, postgresql-doc-15, git-doc, python-django-doc,
#              sphinx-doc, bash-doc, debian-reference-en, developers-reference
# Pages: every regular *.html file under /usr/share/doc (symbolic links not
# followed, so a page is listed once), sorted.
set -euo pipefail
if [ "${1:-}" = --tables ]; then
    build=${2:?build dir}
    root=$(cd "$(dirname "$0")/.." && pwd)
    python3 -c 'import html.entities as e; print("\n".join(sorted(e.name2codepoint)) + "\napos")' |
        "$build/bench/html_compare" --tables > "$root/engine/text/fp_html_tables.h"
    exit 0
fi
if [ "${1:-}" = --install ]; then
    shift
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3.11-doc postgresql-doc-15 git-doc python-django-doc sphinx-doc bash-doc \
        debian-reference-en developers-reference >/dev/null
fi
out=${1:?usage: html_pages.sh [--install] LIST}
find /usr/share/doc -type f -name '*.html' | LC_ALL=C sort > "$out"
echo "$(wc -l < "$out") pages, $(xargs -d '\n' cat < "$out" | wc -c) bytes in $out"
