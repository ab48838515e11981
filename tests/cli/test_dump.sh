# test_dump.sh — `neardup dump` streams every document (key, fingerprint,
# score, last seen) and its tsv output imports back (`import --format
# dump`) into an equal store, for every byte a key may hold; its jsonl
# output is valid JSON for every such key and imports with --format jsonl.

"$ND" init db --fingerprint-only --k 3 --docs 1e4 >/dev/null
# Keys with a TAB, a backslash, control bytes, invalid UTF-8 (fp lines
# carry raw bytes up to the newline), and with a newline and a DEL (jsonl).
printf '0123456789abcdef\tplain\n' > a.fp
printf '00000000000000ff\twith\ttab\n' >> a.fp
printf '1111111111111111\tback\\slash\\x41\n' >> a.fp
printf '2222222222222222\tctl\001\002\033end\n' >> a.fp
printf '3333333333333333\tbad-utf8-\377\376-\300\200-\355\240\200\n' >> a.fp
printf '4444444444444444\tcr\rx\n' >> a.fp
printf '5555555555555555\tunicode-\303\251-\342\202\254-\360\237\230\200\n' >> a.fp
expect_exit 0 "$ND" import db --time 1700000000 a.fp
printf '{"id":"line\\nbreak\\u007f","fp":"6666666666666666","score":2.5}\n' > b.jsonl
printf '{"id":"tiny","fp":"7777777777777777","score":-3.0000000000000001e-300}\n' >> b.jsonl
printf '{"id":"tenth","fp":"8888888888888888","score":0.1}\n' >> b.jsonl
expect_exit 0 "$ND" import db --format jsonl --time -5 b.jsonl
printf '9999999999999999\tlate\n' > c.fp
expect_exit 0 "$ND" add db --time 4102444800 c.fp

expect_exit 0 "$ND" dump db
"$ND" dump db > d1.tsv
check "dump: one line per document" "$(wc -l < d1.tsv)" -eq 11
expect_out_match '^plain	0123456789abcdef	0	1700000000$'
expect_out_match '^with\\ttab	00000000000000ff	0	1700000000$'
expect_out_match '^back\\\\slash\\\\x41	1111111111111111	0	1700000000$'
expect_out_match '^ctl\\x01\\x02\\x1bend	2222222222222222	0	1700000000$'
expect_out_match '^cr\\rx	4444444444444444	0	1700000000$'
expect_out_match '^line\\nbreak\\x7f	6666666666666666	2.5	-5$'
expect_out_match '^tenth	8888888888888888	0.10000000000000001	-5$'
expect_out_match '^late	9999999999999999	0	4102444800$'
# key order (bytes), as nd_db_foreach_doc visits them; bytes >= 0x80 verbatim
check "dump is in key order" "$(cut -f2 d1.tsv | tr '\n' ' ')" = \
    "1111111111111111 3333333333333333 4444444444444444 2222222222222222 9999999999999999 6666666666666666 0123456789abcdef 8888888888888888 7777777777777777 5555555555555555 00000000000000ff "

# tsv round trip: an equal store, byte for byte
"$ND" init copy --fingerprint-only --k 3 --docs 1e4 >/dev/null
expect_exit 0 "$ND" import copy --format dump d1.tsv
expect_err_match '^neardup: import: 11 documents in .*; the database holds 11 documents, 11 fingerprints$'
"$ND" dump copy > d2.tsv
check "the copy dumps the same bytes" "$(cmp d1.tsv d2.tsv 2>&1; echo $?)" = 0
expect_exit 0 "$ND" get copy late tenth
expect_out_eq "$(printf 'late\t9999999999999999\t0\t4102444800\ntenth\t8888888888888888\t0.10000000000000001\t-5')"
expect_exit 0 "$ND" query copy 3333333333333333 --k 0
expect_out_eq "$(printf '3333333333333333\tbad-utf8-\377\376-\300\200-\355\240\200\t3333333333333333\t0')"
expect_exit 0 "$ND" verify copy
# through stdin and through batch (each document's own time is stored)
"$ND" init copy2 --fingerprint-only --k 3 --docs 1e4 >/dev/null
STDIN=d1.tsv expect_exit 0 "$ND" batch copy2 --add --format dump -
check "batch --add of a dump: 11 new" "$(printf '%s\n' "$out" | grep -c '^new')" -eq 11
"$ND" dump copy2 > d3.tsv
check "batch --add --format dump copies the store" "$(cmp d1.tsv d3.tsv 2>&1; echo $?)" = 0

# jsonl: valid JSON for every key (strict: no raw control bytes)
expect_exit 0 "$ND" dump db --format jsonl
printf '%s\n' "$out" > d1.jsonl
check "jsonl: one line per document" "$(wc -l < d1.jsonl)" -eq 11
expect_out_match '^\{"id":"plain","fp":"0123456789abcdef","score":0,"time":1700000000\}$'
expect_out_match '^\{"id":"with\\ttab",'
expect_out_match '^\{"id":"ctl\\u0001\\u0002\\u001bend",'
expect_out_match '^\{"id":"bad-utf8-\\u00ff\\u00fe-\\u00c0\\u0080-\\u00ed\\u00a0\\u0080",'
expect_out_match '^\{"id":"line\\nbreak\\u007f","fp":"6666666666666666","score":2.5,"time":-5\}$'
run python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    d = json.loads(line)
    assert set(d) == {"id", "fp", "score", "time"}, d
    n += 1
print(n)' d1.jsonl
expect_out_eq 11
# jsonl imports back: keys (valid UTF-8 ones byte for byte), fingerprints
# and scores; the time is import's --time
"$ND" init j --fingerprint-only --k 3 --docs 1e4 >/dev/null
expect_exit 0 "$ND" import j --format jsonl --time 1700000000 d1.jsonl
"$ND" dump j > dj.tsv
check "jsonl round trip: same keys, fingerprints and scores (valid UTF-8 keys)" \
    "$(grep -v bad-utf8 d1.tsv | cut -f1-3)" = "$(grep -v bad-utf8 dj.tsv | cut -f1-3)"

# bad dump lines: file, line and field named; nothing imported
printf 'ok\t0123456789abcdef\t0\t5\nbad\\q\t0123456789abcdef\t0\t5\n' > bad1.tsv
expect_exit 1 "$ND" import copy2 --format dump bad1.tsv
expect_err_match '^neardup: bad1.tsv:2: key: bad escape'
printf 'k\t0123456789abcdef\t0\n' > bad2.tsv
expect_exit 1 "$ND" import copy2 --format dump bad2.tsv
expect_err_match '^neardup: bad2.tsv:1: expected KEY<TAB>HEX16<TAB>SCORE<TAB>LASTSEEN'
printf 'k\t0123456789abcdef\tx\t5\n' > bad3.tsv
expect_exit 1 "$ND" import copy2 --format dump bad3.tsv
expect_err_match 'bad3.tsv:1: score: not a number'
printf 'k\t0123456789abcdef\t0\t5d\n' > bad4.tsv
expect_exit 1 "$ND" import copy2 --format dump bad4.tsv
expect_err_match 'bad4.tsv:1: time: not whole seconds'
printf 'k\t0123456789abcdeg\t0\t5\n' > bad5.tsv
expect_exit 1 "$ND" import copy2 --format dump bad5.tsv
expect_err_match 'bad5.tsv:1: fingerprint: not a hex digit'
printf 'k\t0123456789abcdef\t0\t5\textra\n' > bad6.tsv
expect_exit 1 "$ND" import copy2 --format dump bad6.tsv
expect_err_match 'bad6.tsv:1: more than 4 fields'
"$ND" dump copy2 > d4.tsv
check "bad dump lines imported nothing" "$(cmp d1.tsv d4.tsv 2>&1; echo $?)" = 0

# an empty store dumps nothing; a closed pipe ends the dump quietly
"$ND" init none --fingerprint-only --k 3 --docs 1e4 >/dev/null
expect_exit 0 "$ND" dump none
expect_out_eq ""
run bash -c '"$0" dump "$1" | head -1' "$ND" db
expect_out_match '^back'
expect_exit 1 "$ND" dump db --format csv
expect_err_match "^neardup: dump: --format must be tsv or jsonl, got 'csv'; see 'neardup dump --help'$"
