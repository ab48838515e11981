# test_import_batch.sh — `neardup import` and `neardup batch`: bulk load,
# batch decisions equal to `add` one by one, --add, formats, bad input.

for c in import batch; do
    expect_exit 0 "$ND" "$c" --help
    expect_out_match '^usage: neardup '"$c"
done

# Random fingerprints with planted near-duplicates (awk: deterministic).
gen() { # gen SEED N PREFIX -> HEX16<TAB>KEY lines
    awk -v seed="$1" -v n="$2" -v p="$3" 'BEGIN { srand(seed);
        for (i = 0; i < n; i++) {
            if (i > 10 && i % 5 == 0) { # a near-duplicate of an earlier line: flip 1..4 nibble bits
                split(fp[int(rand() * i)], h, ""); s = "";
                for (j = 1; j <= 16; j++) { c = h[j]; if (rand() < 0.08) c = sprintf("%x", (index("0123456789abcdef", c) - 1 + 1) % 16); s = s c }
                fp[i] = s
            } else fp[i] = sprintf("%04x%04x%04x%04x", rand()*65536, rand()*65536, rand()*65536, rand()*65536);
            printf "%s\t%s%d\n", fp[i], p, i } }'
}
gen 1 3000 s > stored.fp
gen 2 800 b > batch.fp
cat stored.fp | awk 'NR % 7 == 0' | sed 's/\ts/\tb-again-s/' >> batch.fp  # exact copies under new keys

# import: counts, verify, the summary
expect_exit 0 "$ND" init db --fingerprint-only --k 3 --docs 1e5
expect_exit 0 "$ND" import db --format fp --chunk 1000 stored.fp
expect_err_match 'import: 3000 documents in .* 0 bad; the database holds 3000 documents'
expect_exit 0 "$ND" verify db
expect_exit 0 "$ND" import db --json --format fp stored.fp   # again: replaces, same set
expect_out_match '"imported":3000,.*"documents":3000'
expect_exit 0 "$ND" verify db

# queries see imported documents (exactness against brute force is in test_batch.c)
q=$(head -1 stored.fp | cut -f1)
expect_exit 0 "$ND" query db "$q" --k 0
expect_out_match "	s0	$q	0\$"

# batch == add one by one (same stored set: import everything into both)
expect_exit 0 "$ND" init one --fingerprint-only --k 3 --docs 1e5
expect_exit 0 "$ND" import one --format fp stored.fp
expect_exit 0 "$ND" init two --fingerprint-only --k 3 --docs 1e5
expect_exit 0 "$ND" import two --format fp stored.fp
expect_exit 0 "$ND" batch one --format fp batch.fp
batch_out=$out
expect_err_match 'batch: [0-9]+ new, [0-9]+ dup, 0 bad'
expect_exit 0 "$ND" add two --format fp batch.fp
check "batch output equals add output" "$batch_out" == "$out"
check "the batch found stored and batch duplicates" "$(printf '%s\n' "$batch_out" | grep -c '^dup.*	s[0-9]*	')" -gt 50
check "batch matches within the batch" "$(printf '%s\n' "$batch_out" | grep -c '^dup.*	b[0-9]*	')" -gt 5
# without --add nothing changed; with --add the stores agree
run "$ND" stats one --json
expect_out_match '"documents":3000,'
expect_exit 0 "$ND" batch one --add --format fp batch.fp
check "batch --add prints the same" "$batch_out" == "$out"
a=$("$ND" stats one --json | grep -o '"documents":[0-9]*,"fingerprints":[0-9]*')
b=$("$ND" stats two --json | grep -o '"documents":[0-9]*,"fingerprints":[0-9]*')
check "batch --add stores what add stores ($a / $b)" "$a" == "$b"
expect_exit 0 "$ND" verify one
# --mmap (the imported tables read through mappings) decides and answers
# as the default reads do
expect_exit 0 "$ND" init four --fingerprint-only --k 3 --docs 1e5
"$ND" import four --format fp stored.fp 2>/dev/null
expect_exit 0 "$ND" add four --mmap --format fp batch.fp
check "add --mmap prints what add prints" "$batch_out" == "$out"
cut -f1 batch.fp > bq.txt
STDIN=bq.txt expect_exit 0 "$ND" query four - --k 4
q_plain=$out
STDIN=bq.txt expect_exit 0 "$ND" query four - --k 4 --mmap
check "query --mmap prints what query prints" "$q_plain" == "$out"
check "the queries found matches" "$(printf '%s\n' "$out" | wc -l)" -gt 500
# a wider k than the plan's (per-document probes) still equals add
expect_exit 0 "$ND" batch two --k 5 --format fp batch.fp
w=$out
expect_exit 0 "$ND" init three --fingerprint-only --k 3 --docs 1e5
"$ND" import three --format fp stored.fp 2>/dev/null
"$ND" batch three --add --format fp batch.fp >/dev/null 2>&1
expect_exit 0 "$ND" add three --k 5 --format fp batch.fp
check "k=5 batch on two equals k=5 add on an equal store" "$w" == "$out"
# JSON lines
expect_exit 0 "$ND" batch one --json --format fp batch.fp
expect_out_match '^\{"status":"dup","key":"b[0-9]+","match":"[a-z0-9-]+","dist":[0-9]+\}$'

# formats: jsonl, tsv, files
printf '{"id":"j1","text":"the quick brown fox jumps over the lazy dog today"}\n{"id":"j2","text":"the quick brown fox jumps over the lazy dog today"}\n' > t.jsonl
expect_exit 0 "$ND" init txt --fingerprint-only
expect_exit 0 "$ND" batch txt --format jsonl t.jsonl
expect_out_eq "$(printf 'new\tj1\ndup\tj2\tj1\t0')"
expect_exit 0 "$ND" import txt --format jsonl t.jsonl
mkdir docs && printf 'alpha beta gamma delta epsilon zeta eta theta\n' > docs/a.txt && cp docs/a.txt docs/b.txt
expect_exit 0 "$ND" import txt --format files docs
run "$ND" get txt docs/a.txt docs/b.txt j1
expect_lines 3

# bad input: the load stops and imports nothing (two chunks were spilled);
# with --steps earlier chunks stay, the bad chunk does not
printf '0000000000000001\tg1\n0000000000000002\tg2\nnothex\tb\n0000000000000003\tg3\n' > bad.fp
expect_exit 0 "$ND" init bad --fingerprint-only
expect_exit 1 "$ND" import bad --chunk 1 --format fp bad.fp
expect_err_match '^neardup: bad.fp:3: fingerprint'
run "$ND" stats bad --json
expect_out_match '"documents":0,'
check "a failed load leaves no temporary files" -z "$(ls -d bad/nd-load-* 2>/dev/null)"
expect_exit 1 "$ND" import bad --steps --chunk 1 --format fp bad.fp
run "$ND" stats bad --json
expect_out_match '"documents":2,'
expect_exit 0 "$ND" init bad2 --fingerprint-only
expect_exit 0 "$ND" import bad2 --steps --chunk 500 --format fp stored.fp
expect_err_match 'import: 3000 documents in .* 0 bad; the database holds 3000 documents'
expect_exit 0 "$ND" verify bad2
expect_exit 0 "$ND" import bad --skip-bad --format fp bad.fp
expect_err_match '3 documents .* 1 bad'
expect_exit 1 "$ND" batch bad --add --format fp bad.fp
run "$ND" stats bad --json
expect_out_match '"documents":3,'
expect_exit 1 "$ND" import bad
expect_err_match 'expected a database path and at least one input'
expect_exit 1 "$ND" batch bad --k 17 bad.fp
expect_err_match 'k must be 0..16'
expect_exit 2 "$ND" import nodb --format fp bad.fp
expect_err_match 'no database at nodb'

# WARC: response records (HTTP headers skipped, HTML through the HTML path),
# conversion records (text), other types skipped; plain and gzip members.
warc_rec() { # TYPE URI BODY
    printf 'WARC/1.0\r\nWARC-Type: %s\r\nWARC-Target-URI: %s\r\nWARC-Record-ID: <urn:x:%s>\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n' \
        "$1" "$2" "$RANDOM" "$(printf '%s' "$3" | wc -c)" "$3"
}
page='<html><head><title>Crawl page</title><script>var x = 1;</script></head><body><p>near duplicate detection for web crawling with simhash fingerprints and permuted tables</p></body></html>'
http=$(printf 'HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n%s' "$page")
{ warc_rec warcinfo '' 'software: test'
  warc_rec request http://a.example/ 'GET / HTTP/1.1'
  warc_rec response http://a.example/ "$http"
  warc_rec conversion http://b.example/ 'near duplicate detection for web crawling with simhash fingerprints and permuted tables'
} > crawl.warc
warc_rec response http://c.example/ "$http" | gzip > part.warc.gz
cat crawl.warc | gzip > crawl.warc.gz
cat part.warc.gz >> crawl.warc.gz   # concatenated gzip members
expect_exit 0 "$ND" init w --fingerprint-only
expect_exit 0 "$ND" import w --format warc crawl.warc.gz
expect_err_match 'import: 3 documents'
run "$ND" get w http://a.example/ http://b.example/ http://c.example/
expect_lines 3
printf '%s' "$page" > page.html
want=$("$ND" fingerprint --html page.html | cut -f1)
expect_exit 0 "$ND" get w http://a.example/
expect_out_match "^http://a.example/	$want	"
# the same crawl as a batch: the second copy of the page is a duplicate
expect_exit 0 "$ND" init w2 --fingerprint-only
expect_exit 0 "$ND" batch w2 --format warc crawl.warc.gz
expect_out_match "^dup	http://c.example/	http://a.example/	0$"
