# test_db_commands.sh — init/add/query/get/delete/compact/stats/verify/
# backup/expire from the command line, with exit codes and outputs.

expect_exit 0 "$ND" --help
expect_out_match '^  dedupe'
for c in fingerprint distance plan init add query get delete compact stats verify backup expire dedupe \
    cluster shard import batch; do
    expect_exit 0 "$ND" "$c" --help
    expect_out_match '^usage: neardup '"$c"
done
expect_exit 1 "$ND" frobnicate
expect_err_match "unknown command 'frobnicate'"

# plan
expect_exit 0 "$ND" plan --k 3 --docs 1e9
expect_out_match '^\*     10      1      5  25\.\.26'
expect_exit 0 "$ND" plan --k 3 --docs 1e9 --json
expect_out_match '"tables":4,.*"prefix_min":16'
expect_exit 1 "$ND" plan --k 9
expect_err_match 'k must be 0..8'

# init
expect_exit 0 "$ND" init db --fingerprint-only --k 3 --docs 1e6 --tables 10
expect_out_match 'k=3, 10 tables, prefix 25..26'
expect_exit 2 "$ND" init db --fingerprint-only
expect_err_match 'already exists'
expect_exit 1 "$ND" init db2 --fingerprint-only --tables 7
expect_err_match 'no design for k=3 with 7 tables'
check "bad init leaves no directory" ! -e db2

# add: fp lines
printf '0123456789abcdef\tdoc1\n0123456789abcdee\tdoc2\nfedcba9876543210\tdoc3\n0123456789abcdef\n' > in.fp
expect_exit 0 "$ND" add db --format fp in.fp
expect_out_eq "$(printf 'new\tdoc1\ndup\tdoc2\tdoc1\t1\nnew\tdoc3\ndup\t0123456789abcdef\tdoc1\t0')"
# Same key seen again refreshes it (dup of itself).
printf '0123456789abcdef\tdoc1\n' > again.fp
STDIN=again.fp expect_exit 0 "$ND" add db --format fp --time 5000
expect_out_eq "$(printf 'dup\tdoc1\tdoc1\t0')"
expect_exit 0 "$ND" get db doc1
expect_out_eq "$(printf 'doc1\t0123456789abcdef\t0\t5000')"
# --json anywhere; after -- a key may start with '-'
expect_exit 0 "$ND" get db doc1 --json
expect_out_eq '{"key":"doc1","fp":"0123456789abcdef","score":0,"time":5000}'
printf '0123456789abcdef\t-rf\n0123456789abcdef\tdoc1\n' > dash.fp
expect_exit 0 "$ND" init dashdb --fingerprint-only --k 3
expect_exit 0 "$ND" import dashdb --time 5000 dash.fp
expect_exit 0 "$ND" get dashdb -- -rf doc1
expect_out_eq "$(printf -- '-rf\t0123456789abcdef\t0\t5000\ndoc1\t0123456789abcdef\t0\t5000')"
expect_exit 1 "$ND" get dashdb -rf
expect_err_match "^neardup: get: unrecognized option '-r'; see 'neardup get --help'$"
# add: jsonl with text and score; tsv
printf '{"id":"j1","text":"the quick brown fox jumps over the lazy dog","score":2.5}\n{"id":7,"fp":"00000000000000ff"}\n' > in.jsonl
expect_exit 0 "$ND" add db --format jsonl --json in.jsonl
expect_out_match '^\{"status":"new","key":"j1"\}$'
expect_out_match '^\{"status":"new","key":"7"\}$'
printf 't1\tthe quick brown fox jumps over the lazy dog\n' > in.tsv
expect_exit 0 "$ND" add db --format tsv in.tsv
expect_out_eq "$(printf 'dup\tt1\tj1\t0')"

# query
expect_exit 0 "$ND" query db 0123456789abcdef --k 3
expect_out_eq "$(printf '0123456789abcdef\tdoc1\t0123456789abcdef\t0')"
expect_exit 0 "$ND" query db 00000000000000fe --k 2 --json
expect_out_eq '{"query":"00000000000000fe","key":"7","fp":"00000000000000ff","dist":1}'
printf '00000000000000ff\nfedcba9876543210\n' > q.txt
STDIN=q.txt expect_exit 0 "$ND" query db -
expect_lines 2
expect_exit 1 "$ND" query db --text in.tsv --k 64
expect_err_match 'k must be 0..16' 
expect_exit 1 "$ND" query db xyz
expect_err_match "argument 1 'xyz': too short"
expect_exit 0 "$ND" query db ffffffffffffffff
expect_lines 0

# stats / verify / compact
expect_exit 0 "$ND" stats db --json
expect_out_match '"documents":4,"fingerprints":4'
expect_exit 0 "$ND" compact db
expect_exit 0 "$ND" stats db
expect_out_match '^0	2[56]	4	1	0	'
expect_exit 0 "$ND" verify db
expect_out_eq ok

# delete
expect_exit 0 "$ND" delete db doc3
expect_out_eq "$(printf 'deleted\tdoc3')"
expect_exit 1 "$ND" delete db doc3
expect_out_eq "$(printf 'missing\tdoc3')"
expect_exit 0 "$ND" delete db --missing-ok doc3
expect_exit 0 "$ND" query db fedcba9876543210 --k 5
expect_lines 0

# backup
expect_exit 0 "$ND" backup db bk
expect_exit 2 "$ND" backup db bk
expect_err_match 'already exists'
expect_exit 0 "$ND" verify bk
expect_exit 0 "$ND" get bk doc1
# a killed backup's DIR.tmp is removed by the next backup into DIR
mkdir bk2.tmp
head -c 100000 /dev/zero > bk2.tmp/000012.sst
printf 'MANIFEST-000005\n' > bk2.tmp/CURRENT
expect_exit 0 "$ND" backup db bk2
check "stale bk2.tmp removed" ! -e bk2.tmp
expect_exit 0 "$ND" verify bk2
# no write access to the source is needed
chmod -R a-w db
expect_exit 0 "$ND" backup db bk3
chmod -R u+w db
expect_exit 0 "$ND" get bk3 doc1

# expire: doc1 was seen at 5000, the others now
expect_exit 0 "$ND" expire db --older-than 1d --now 200000 --compact
expect_out_eq "$(printf 'expired\t1')"
expect_exit 1 "$ND" get db doc1
expect_out_eq "$(printf 'missing\tdoc1')"
expect_exit 1 "$ND" expire db --older-than 90x
expect_err_match 'older-than must be like'
expect_exit 0 "$ND" verify db
