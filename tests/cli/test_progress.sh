# test_progress.sh — the one progress line of the long commands
# (cli/cli_progress.c): on stderr when it is a terminal (for add, batch and
# dedupe: and stdout is not; through a pty made by script(1)), always with
# --progress or NEARDUP_PROGRESS=1 (all: every update, not two a second),
# never in a pipe or a file otherwise (or with NEARDUP_PROGRESS=0), and one
# format for every command:
#   VERB[: PHASE]: COUNT[ of TOTAL] UNIT[ (P%)][, MB[ of MB] MB (P%)][, RATE UNIT/s][, ETA T]

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
expect_err_match "$(printf '\r')add: 256 docs, [0-9.]+ of [0-9.]+ MB \([0-9]+%\), [0-9]+ docs/s, ETA [0-9]+s"
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

# The format, forced in a pipe (NEARDUP_PROGRESS=all: each update drawn,
# so that a short phase shows more than its start). CR is each line's start.
CR=$(printf '\r')
NUM='[0-9]+'
RATE='[0-9.]+'
ETA='ETA ([0-9]+s|[0-9]+m[0-9]{2}s|[0-9]+h[0-9]{2}m)'
lines() { printf '%s' "$err" | tr '\r' '\n' | sed 's/ *$//' | grep -v '^$'; }
has_line() { # REGEX: some progress line matches it whole
    if lines | grep -Eqx -- "$1"; then _pass; else _fail "no progress line /$1/ in: $(lines | tr '\n' '|')"; fi
}
awk 'BEGIN { srand(7); for (i = 0; i < 9000; i++)
    printf "%08x%08x\tq%d\n", int(rand() * 4294967296), int(rand() * 4294967296), i }' > many.fp
"$ND" init db4 --fingerprint-only --k 3 --docs 1e5 >/dev/null
# not forced: nothing in a pipe, whatever the command
expect_exit 0 "$ND" import db4 --time 1000 many.fp
check "import in a pipe: no progress line" -z "$(printf '%s' "$err" | grep -F "$CR")"
NEARDUP_PROGRESS=1 expect_exit 0 "$ND" import db4 --time 1000 many.fp
has_line "import: 4096 docs, $RATE of $RATE MB \($NUM%\), $NUM docs/s, $ETA"
has_line "import: 9000 docs read; writing the store\.\.\."
expect_err_match 'neardup: import: 9000 documents in'
# forced off beats --progress
NEARDUP_PROGRESS=0 expect_exit 0 "$ND" add db4 --progress --k 0 in.fp
check "NEARDUP_PROGRESS=0: no progress line" -z "$(printf '%s' "$err" | grep -F "$CR")"
# add and batch: the same line, from stdin without a size (no share, no ETA)
STDIN=in.fp NEARDUP_PROGRESS=1 expect_exit 0 "$ND" add db4 --k 0 -
has_line "add: 256 docs, $RATE MB, $NUM docs/s"
NEARDUP_PROGRESS=1 expect_exit 0 "$ND" batch db4 many.fp
has_line "batch: reading: 4096 docs, $RATE of $RATE MB \($NUM%\), $NUM docs/s, $ETA"
has_line "batch: checking 9000 documents\.\.\."
# dedupe: reading, then each phase of the joins, each with its count,
# total, rate and ETA (texts: the band passes too), and --db's load
awk 'BEGIN { srand(9); for (i = 0; i < 5000; i++) { printf "d%d\t", i;
    for (w = 0; w < 12; w++) printf "w%d ", int(rand() * 3000); print "" } }' > texts.tsv
NEARDUP_PROGRESS=all expect_exit 0 "$ND" dedupe --format tsv --db dd.nd texts.tsv
has_line "dedupe: reading: 4096 docs, $RATE of $RATE MB \($NUM%\), $NUM docs/s, $ETA"
has_line "dedupe: grouping: 0 of 5000 docs \(0%\)"
has_line "dedupe: self-join: 0 of $NUM fingerprints \(0%\)"
has_line "dedupe: self-join: $NUM of $NUM fingerprints \($NUM%\), $RATE fingerprints/s, $ETA"
has_line "dedupe: banding: $NUM of $NUM sketches \($NUM%\), $RATE sketches/s, $ETA"
has_line "dedupe: clustering: 0 of $NUM groups \(0%\)"
has_line "dedupe: loading: 0 of 5000 docs \(0%\)"
has_line "dedupe: writing 5000 documents into 'dd.nd'\.\.\."
expect_err_match 'neardup: dedupe: 5000 documents'
check "dedupe: the line cleared before the summary" -n "$(lines | grep -x 'neardup: dedupe: 5000 documents.*')"
# a dedupe not forced, in a pipe: silent as before
expect_exit 0 "$ND" dedupe --format tsv texts.tsv
check "dedupe in a pipe: no progress line" -z "$(printf '%s' "$err" | grep -F "$CR")"
# shard split (the source's documents as the total) and shard import
NEARDUP_PROGRESS=all expect_exit 0 "$ND" shard split db4 st --shards 3
has_line "shard split: reading: 4096 of 9600 docs \(43%\), $NUM docs/s, $ETA"
has_line "shard split: writing: 2 of 3 shards \(67%\), $RATE shards/s, $ETA"
expect_out_match '^split db4 into st: 9600 documents over 3 shards'
NEARDUP_PROGRESS=1 expect_exit 0 "$ND" shard import st many.fp
has_line "shard import: reading: 4096 docs, $RATE of $RATE MB \($NUM%\), $NUM docs/s, $ETA"
has_line "shard import: writing: 0 of 3 shards \(0%\)"
# a diagnostic clears the line first: it starts a line of its own
head -5000 texts.tsv > t2.tsv
printf 'nokey\n' >> t2.tsv
"$ND" init db5 --fingerprint-only --k 3 --docs 1e4 >/dev/null
NEARDUP_PROGRESS=1 expect_exit 1 "$ND" import db5 --format tsv t2.tsv
has_line "import: 4096 docs, $RATE of $RATE MB \\($NUM%\\), $NUM docs/s, $ETA"
has_line "neardup: t2.tsv:5001: text: missing TAB between key and text"
