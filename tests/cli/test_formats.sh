# test_formats.sh — inputs as users hand them over (issues 45 and 47):
# the format inferred where no --format is given (docs/cli.md, "Input
# formats"), in every command that reads records; an input that is not
# of the format it is read as fails naming FILE:LINE and what it looks
# like, never as one silent document; an explicit --format reads as it
# always did; JSONL records with other member names (--id-field,
# --text-field, --html-field); .zst inputs (frames, stdin, truncation, a
# bomb beyond the line limit).

"$ND" init db --fingerprint-only --k 3 --docs 1e4 >/dev/null
stored() { # the number of documents in DB (default db)
    run "$ND" stats "${1:-db}" --json
    printf '%s\n' "$out" | sed -n 's/.*"documents":\([0-9]*\).*/\1/p'
}
T1='near duplicate detection finds pages that say the same thing in other words'
T2='a completely different text about the weather in the mountains this week'
printf '{"id":"a","text":"%s"}\n{"id":"b","text":"%s"}\n{"id":"c","text":"%s"}\n' "$T1" "$T1" "$T2" > corpus.jsonl
printf 'a\t%s\nb\t%s\nc\t%s\n' "$T1" "$T1" "$T2" > corpus.tsv
"$ND" fingerprint --format tsv corpus.tsv > corpus.fp
warc_rec() { # TYPE URI BODY
    printf 'WARC/1.0\r\nWARC-Type: %s\r\nWARC-Target-URI: %s\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n' \
        "$1" "$2" "${#3}" "$3"
}
{ warc_rec conversion http://a/ "$T1"; warc_rec conversion http://b/ "$T1"; warc_rec conversion http://c/ "$T2"; } > crawl.warc

# --- the issue's case: dedupe of a JSONL file is its records, not one document ---
expect_exit 0 "$ND" dedupe corpus.jsonl
expect_err_match 'dedupe: 3 documents \(2 distinct\)'
expect_out_eq "$(printf '1\tkeep\ta\t0\n1\tdrop\tb\t0')"
want=$out
# under any name, compressed, on stdin: the same
cp corpus.jsonl corpus.txt
gzip -c corpus.jsonl > corpus.jsonl.gz
zstd -q -c corpus.jsonl > corpus.data.zst
for in in corpus.txt corpus.jsonl.gz corpus.data.zst corpus.tsv corpus.fp crawl.warc; do
    expect_exit 0 "$ND" dedupe "$in"
    expect_err_match 'dedupe: 3 documents'
done
STDIN=corpus.data.zst expect_exit 0 "$ND" dedupe -
expect_out_eq "$want"
# an explicit --format files still reads the file whole
expect_exit 0 "$ND" dedupe --format files corpus.jsonl
expect_err_match 'dedupe: 1 document \(1 distinct\)'
# inferred fingerprints make a dedupe of fingerprints, as --format fp: the
# same pairs, and the same refusal of a k fingerprints alone cannot reach
awk 'BEGIN { srand(4); for (i = 0; i < 300; i++) { x = int(rand() * 65536)
    printf "%04x000000000000\tk%d\n%04x000000000001\tc%d\n", x, i, x, i } }' > near.fp
run "$ND" dedupe --format fp --out pairs near.fp
want=$out
check "fingerprint pairs found" "$(printf '%s\n' "$want" | wc -l)" -ge 300
expect_exit 0 "$ND" dedupe --out pairs near.fp
expect_out_eq "$want"
expect_exit 1 "$ND" dedupe --k 9 near.fp
expect_err_match 'k above 8 needs texts'
# plain text and directories: files, as before
mkdir docs && printf '%s\n' "$T1" > docs/one.txt && printf '%s\n' "$T1" > docs/two.txt
expect_exit 0 "$ND" dedupe docs
expect_err_match 'dedupe: 2 documents \(1 distinct\)'
expect_exit 0 "$ND" dedupe docs/one.txt docs/two.txt
expect_err_match 'dedupe: 2 documents'
# stdin of no record format: no silent document
STDIN=docs/one.txt expect_exit 1 "$ND" dedupe -
expect_err_match '^neardup: <stdin>: cannot tell the format .*: give --format$'

# --- add, import, batch, shard import: fingerprints, JSONL, TSV, WARC ---
for in in corpus.jsonl corpus.txt corpus.tsv corpus.fp corpus.jsonl.gz corpus.data.zst; do
    expect_exit 0 "$ND" add db "$in"
    expect_out_eq "$(printf 'new\ta\ndup\tb\ta\t0\nnew\tc')"
    "$ND" delete db a c >/dev/null
    STDIN=$in expect_exit 0 "$ND" batch db -
    expect_out_eq "$(printf 'new\ta\ndup\tb\ta\t0\nnew\tc')"
    "$ND" init "imp-$in" --fingerprint-only >/dev/null
    expect_exit 0 "$ND" import "imp-$in" "$in"
    expect_err_match 'import: 3 documents'
done
expect_exit 0 "$ND" import imp-corpus.tsv crawl.warc docs
expect_err_match 'import: 5 documents'
expect_exit 0 "$ND" batch db crawl.warc
expect_out_eq "$(printf 'new\thttp://a/\ndup\thttp://b/\thttp://a/\t0\nnew\thttp://c/')"
"$ND" shard init sh --shards 2 --k 3 --docs 1e4 >/dev/null
expect_exit 0 "$ND" shard import sh corpus.jsonl corpus.data.zst crawl.warc
expect_out_match '^imported 9 documents into sh'
# add reads no WARC: what it looks like, not a silent misread
expect_exit 1 "$ND" add db crawl.warc
expect_err_match "^neardup: crawl.warc:1: fingerprint 'WARC/1.0': .*; this looks like WARC, which this command does not read$"

# --- fingerprint: records, by name or content; stdin too ---
run "$ND" fingerprint --format tsv corpus.tsv
want=$out
expect_exit 0 "$ND" fingerprint corpus.jsonl
expect_out_eq "$want"
STDIN=corpus.jsonl.gz expect_exit 0 "$ND" fingerprint
expect_out_eq "$want"
STDIN=corpus.data.zst expect_exit 0 "$ND" fingerprint -
expect_out_eq "$want"
# plain text on stdin: one document named "-", as before (decompressed)
run "$ND" fingerprint docs/one.txt
fp1=$(printf '%s' "$out" | cut -f1)
STDIN=docs/one.txt expect_exit 0 "$ND" fingerprint
expect_out_eq "$(printf '%s\t-' "$fp1")"
zstd -q -c docs/one.txt > one.zst
STDIN=one.zst expect_exit 0 "$ND" fingerprint
expect_out_eq "$(printf '%s\t-' "$fp1")"
# a licence whose first line starts with TABs is a document, not TSV
printf '\t\t\tThe "Artistic License"\n\n\tPreamble\n' > artistic
expect_exit 0 "$ND" fingerprint artistic
expect_lines 1
# an explicit --format files reads the JSONL file whole
expect_exit 0 "$ND" fingerprint --format files corpus.jsonl
expect_lines 1

# --- query -: fingerprint lines (fingerprint's own output too, gzip, zstd) ---
"$ND" add db corpus.fp >/dev/null
cut -f1 corpus.fp > q.txt
STDIN=q.txt expect_exit 0 "$ND" query db -
expect_lines 3
zstd -q -c corpus.fp > q.zst
STDIN=q.zst expect_exit 0 "$ND" query db -
expect_lines 3
STDIN=corpus.jsonl expect_exit 1 "$ND" query db -
expect_err_match "^neardup: <stdin>:1: fingerprint '\{\"id\":\"a\".*; this looks like JSONL, which this command does not read$"
"$ND" delete db a c >/dev/null

# --- a file that is not its format: FILE:LINE and what it looks like ---
expect_exit 1 "$ND" add db --format fp corpus.jsonl
expect_err_match "^neardup: corpus.jsonl:1: fingerprint '\{\"id\":\"a\",\"text\":\"near duplicate [a-z]*': not a hex digit; this looks like JSONL: use --format jsonl$"
expect_exit 1 "$ND" import db --format tsv corpus.jsonl
expect_err_match '^neardup: corpus.jsonl:1: text: missing TAB between key and text; this looks like JSONL: use --format jsonl$'
expect_exit 1 "$ND" dedupe --format jsonl corpus.tsv
expect_err_match '^neardup: corpus.tsv:1: invalid JSON at column 1: .*; this looks like TSV: use --format tsv$'
expect_exit 1 "$ND" batch db --format warc corpus.jsonl
expect_err_match '^neardup: corpus.jsonl:1: expected a WARC/1.x version line.*; this looks like JSONL: use --format jsonl$'
# no --format, plain text: the default format's message, and what it is
printf 'Some notes, one per line.\nAnother line.\n' > notes.txt
expect_exit 1 "$ND" add db notes.txt
expect_err_match "^neardup: notes.txt:1: fingerprint 'Some notes, one per line.': .*; this looks like plain text, not fp, jsonl or tsv records$"
expect_exit 1 "$ND" import db notes.txt
expect_err_match '; this looks like plain text: use --format files \(one document a file\)$'
check "nothing stored from misread inputs" "$(stored)" = 0
# a .jsonl of plain text: read as JSONL by its name, and fails so
cp notes.txt notes.jsonl
expect_exit 1 "$ND" dedupe notes.jsonl
expect_err_match '^neardup: notes.jsonl:1: invalid JSON at column [0-9]+: .*; this looks like plain text: use --format files'
# an inferred format failing later: how it was chosen
printf 'k1\tfirst text\nno tab on this line\n' > mixed.txt
expect_exit 1 "$ND" dedupe mixed.txt
expect_err_match '^neardup: mixed.txt:2: text: missing TAB between key and text; format tsv inferred from the first line: give --format to choose$'
# dump output is not TSV text: refused without --format dump
"$ND" add db corpus.fp >/dev/null
"$ND" dump db > dump.tsv
"$ND" init fromdump --fingerprint-only >/dev/null
expect_exit 1 "$ND" import fromdump dump.tsv
expect_err_match '^neardup: dump.tsv:1: this looks like `neardup dump` output \(KEY<TAB>HEX16<TAB>SCORE<TAB>TIME\): use --format dump$'
expect_exit 1 "$ND" dedupe dump.tsv
expect_err_match 'which this command does not read$'
expect_exit 0 "$ND" import fromdump --format dump dump.tsv
check "the dump imports with --format dump" "$(stored fromdump)" = 2
"$ND" delete db a b c >/dev/null 2>&1

# --- JSONL member names: --id-field, --text-field, --html-field ---
printf '{"url":"http://a/","content":"%s","html":"<p>%s</p>"}\n' "$T1" "$T1" > pages.jsonl
printf '{"url":"http://b/","content":"%s","html":"<p>%s</p>"}\n' "$T2" "$T2" >> pages.jsonl
printf '{"url":"http://a/","content":"%s"}\n{"url":"http://b/","content":"%s"}\n' "$T1" "$T2" > content.jsonl
run "$ND" fingerprint --format tsv corpus.tsv
fpa=$(printf '%s\n' "$out" | sed -n 1p | cut -f1) fpc=$(printf '%s\n' "$out" | sed -n 3p | cut -f1)
expect_exit 0 "$ND" fingerprint --id-field url --text-field content content.jsonl
expect_out_eq "$(printf '%s\thttp://a/\n%s\thttp://b/' "$fpa" "$fpc")"
# the member "html" is the page's HTML (today a flag: "expected true or false")
expect_exit 1 "$ND" fingerprint --id-field url --text-field content --format jsonl pages.jsonl --html-field x
expect_err_match 'give --text-field or --html-field, not both'
run "$ND" fingerprint --id-field url --text-field content pages.jsonl
check "html as a flag is refused without --html-field" "$code" = 1
expect_err_match 'pages.jsonl:1: field "html": expected true or false'
printf '<p>%s</p>' "$T1" > page.html
run "$ND" fingerprint page.html
want=$(printf '%s' "$out" | cut -f1)
expect_exit 0 "$ND" fingerprint --id-field url --html-field html pages.jsonl
expect_out_match "^$want	http://a/\$"
# in every command that reads records
for cmd in "add db" "batch db" "import db" "dedupe --out keep" "shard import sh"; do
    # shellcheck disable=SC2086
    expect_exit 0 "$ND" $cmd --id-field url --html-field html pages.jsonl
done
"$ND" delete db http://a/ http://b/ >/dev/null 2>&1
# a missing or mistyped member: FILE:LINE and the member
for i in 1 2 3 4 5 6; do printf '{"url":"u%d","content":"text %d"}\n' "$i" "$i"; done > c7.jsonl
printf '{"url":"u7","text":"no content member"}\n{"url":8,"content":["x"]}\n' >> c7.jsonl
expect_exit 1 "$ND" add db --id-field url --text-field content c7.jsonl
expect_err_match '^neardup: c7.jsonl:7: field "content": missing$'
"$ND" delete db u1 u2 u3 u4 u5 u6 >/dev/null # added before the bad line
expect_exit 0 "$ND" dedupe --id-field url --text-field content --skip-bad --out keep c7.jsonl
expect_err_match '^neardup: c7.jsonl:7: field "content": missing$'
expect_err_match '^neardup: c7.jsonl:8: field "content": expected a string$'
expect_err_match 'dedupe: 6 documents .* 2 bad'
printf '{"id":"x","content":"t"}\n' > noid.jsonl
expect_exit 1 "$ND" fingerprint --id-field url --text-field content noid.jsonl
expect_err_match '^neardup: noid.jsonl:1: field "url": missing$'
# usage: the options are for JSONL, name distinct members, are not empty
expect_exit 1 "$ND" import db --format tsv --text-field content corpus.tsv
expect_err_match 'import: --id-field, --text-field and --html-field are for JSONL input'
expect_exit 1 "$ND" dedupe --id-field text corpus.jsonl
expect_err_match 'dedupe: the key and the text cannot be one member'
expect_exit 1 "$ND" add db --text-field '' corpus.jsonl
expect_err_match "add: --text-field needs a member name; see 'neardup add --help'"
# the defaults are "id" and "text": the same records with or without them
run "$ND" fingerprint --format jsonl corpus.jsonl
want=$out
expect_exit 0 "$ND" fingerprint --format jsonl --id-field id --text-field text corpus.jsonl
expect_out_eq "$want"

# --- zstd: frames, stdin, truncation, corruption, every command ---
printf '00000000000000ff\tz1\n' | zstd -q > m.zst
printf 'ff00000000000000\tz2\n' | zstd -q >> m.zst   # two frames
run "$ND" add db --format fp m.zst
expect_out_eq "$(printf 'new\tz1\nnew\tz2')"
"$ND" delete db z1 z2 >/dev/null
STDIN=m.zst expect_exit 0 "$ND" import db --format fp -
expect_err_match 'import: 2 documents'
"$ND" delete db z1 z2 >/dev/null
head -c 15 m.zst > cut.zst
for cmd in "fingerprint --format tsv" "add db" "import db" "batch db --format fp" "dedupe" \
           "shard import sh --format fp"; do
    # shellcheck disable=SC2086
    expect_exit 1 "$ND" $cmd cut.zst
    expect_err_match '^neardup: cut.zst:[0-9]+: corrupt or truncated zstd data: unexpected end of file$'
done
STDIN=cut.zst expect_exit 1 "$ND" query db -
expect_err_match '^neardup: <stdin>:[0-9]+: corrupt or truncated zstd data'
check "nothing stored from a truncated stream" "$(stored)" = 0
# bytes after the last frame that start no other: corrupt, as to zstd -d
{ cat m.zst; printf 'not zstd'; } > tail.zst
expect_exit 1 "$ND" add db --format fp tail.zst
expect_err_match '^neardup: tail.zst:[0-9]+: corrupt or truncated zstd data: '
"$ND" delete db z1 z2 >/dev/null 2>&1
# a skippable frame before the data
{ printf '\x50\x2a\x4d\x18\x04\x00\x00\x00skip'; cat m.zst; } > skip.zst
expect_exit 0 "$ND" fingerprint --format tsv skip.zst
expect_lines 2
# a frame asking for a window above 128 MiB: refused, named
printf 'k\ttext\n' | zstd -q --long=30 -c > wide.zst
expect_exit 1 "$ND" fingerprint --format tsv wide.zst
expect_err_match '^neardup: wide.zst:1: zstd frame needs a window above the 128 MiB limit'
# a bomb: a few KB that expand beyond the 64 MiB line limit: an error
# naming the file (memory is bounded: test_memlimit.sh checks it)
head -c 100000000 /dev/zero | tr '\0' 'a' | zstd -q -1 > bomb.zst
check "the bomb is small" "$(stat -c %s bomb.zst)" -lt 100000
expect_exit 1 "$ND" fingerprint --format tsv bomb.zst
expect_err_match '^neardup: bomb.zst:1: line longer than the 64 MiB limit$'
expect_exit 1 "$ND" add db bomb.zst
expect_err_match '^neardup: bomb.zst:1: line longer than the 64 MiB limit$'
STDIN=bomb.zst expect_exit 1 "$ND" dedupe --format jsonl -
expect_err_match '^neardup: <stdin>:1: line longer than the 64 MiB limit$'
# as one document (fingerprint's stdin of no record format): the document limit
STDIN=bomb.zst expect_exit 1 "$ND" fingerprint
expect_err_match '^neardup: <stdin>: larger than the 64 MiB document limit$'
rm -f bomb.zst
