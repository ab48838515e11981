# test_progress.sh — the progress line of `add` and `batch` (as `import`
# has): on stderr when it is a terminal and stdout is not (through a pty
# made by script(1)), always with --progress, never in a pipe or a file.

"$ND" init db --fingerprint-only --k 3 --docs 1e4 >/dev/null
awk 'BEGIN { srand(5); for (i = 0; i < 600; i++)
    printf "%08x%08x\tp%d\n", int(rand() * 4294967296), int(rand() * 4294967296), i }' > in.fp

# not a terminal: no progress, the summary only
expect_exit 0 "$ND" add db --k 0 in.fp
check "add in a pipe: no progress line" -z "$(printf '%s' "$err" | tr -d '\n' | grep -F "$(printf '\r')")"
expect_err_match '^neardup: add: 600 new, 0 dup, 0 bad$'
expect_exit 0 "$ND" batch db in.fp
check "batch in a pipe: no progress line" -z "$(printf '%s' "$err" | tr -d '\n' | grep -F "$(printf '\r')")"

# --progress forces it (the first update shows at once, then twice a second)
"$ND" init db2 --fingerprint-only --k 3 --docs 1e4 >/dev/null
expect_exit 0 "$ND" add db2 --k 0 --progress in.fp
expect_err_match "$(printf '\r')add: 256 docs, [0-9]+ docs/s"
expect_err_match 'neardup: add: 600 new, 0 dup, 0 bad$'
expect_lines 600
expect_exit 0 "$ND" batch db2 --progress in.fp
expect_err_match "$(printf '\r')batch: checking 600 documents\.\.\."
expect_err_match 'neardup: batch: 0 new, 600 dup, 0 bad in'

# a terminal on stderr, stdout to a file: shown; stdout a terminal: not
if command -v script >/dev/null; then
    "$ND" init db3 --fingerprint-only --k 3 --docs 1e4 >/dev/null
    run script -qec "\"$ND\" add db3 --k 0 in.fp > add.out" /dev/null
    expect_out_match "$(printf '\r')add: 256 docs, "
    check "add on a terminal: the decisions in the file" "$(wc -l < add.out)" -eq 600
    run script -qec "\"$ND\" batch db3 in.fp > batch.out" /dev/null
    expect_out_match "$(printf '\r')batch: checking 600 documents"
    run script -qec "\"$ND\" add db3 --k 0 in.fp" /dev/null
    check "add with stdout on the terminal: no progress" -z "$(printf '%s' "$out" | grep -F 'docs/s')"
fi
