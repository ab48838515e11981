# test_cluster.sh — `neardup cluster`: query-biased clustering of search
# results, fingerprints and scores from the input or the database, --apply,
# tier parsing and input errors.

expect_exit 0 "$ND" cluster --help
expect_out_match '^usage: neardup cluster'
expect_exit 0 "$ND" --help
expect_out_match '^  cluster +collapse near-duplicate search results'

# apple (most popular): b scores best, keeps a (2 bits) and d (1 bit); c is
# far. pie: b keeps e. tart: a was removed by apple, so it is dropped and
# cannot remove f (1 bit from it). apple's line after pie's is grouped.
printf 'apple\t1\ta.com\t0000000000000000\t5\n' > r.tsv
printf 'apple\t2\tb.com\t0000000000000003\t9\n' >> r.tsv
printf 'pie\t1\tb.com\t0000000000000003\t9\n' >> r.tsv
printf 'apple\t3\tc.com\tffffffffffffffff\t1\n' >> r.tsv
printf 'apple\t4\td.com\t0000000000000001\t2\n' >> r.tsv
printf 'pie\t2\te.com\t0000000000000007\t1\n' >> r.tsv
printf 'tart\t1\ta.com\t0000000000000000\t5\n' >> r.tsv
printf 'tart\t2\tf.com\t0000000000000010\n' >> r.tsv
expect_exit 0 "$ND" cluster r.tsv
expect_out_eq "$(printf 'removed\tapple\ta.com\tb.com\t2\nremoved\tapple\td.com\tb.com\t1\nremoved\tpie\te.com\tb.com\t1')"
expect_err_match '^neardup: cluster: 3 queries, 8 results, 3 removed$'
STDIN=r.tsv expect_exit 0 "$ND" cluster --json -
expect_out_match '^\{"status":"removed","query":"apple","key":"a.com","kept":"b.com","dist":2\}$'
expect_lines 3
# Tiers by query rank: apple k=3, the rest k=0.
expect_exit 0 "$ND" cluster --k-tiers 1-1:3,rest:0 r.tsv
expect_out_eq "$(printf 'removed\tapple\ta.com\tb.com\t2\nremoved\tapple\td.com\tb.com\t1')"
# --k 1: a (2 bits) stays, so in tart it removes f.
expect_exit 0 "$ND" cluster --k 1 r.tsv
expect_out_eq "$(printf 'removed\tapple\td.com\tb.com\t1\nremoved\tpie\te.com\tb.com\t1\nremoved\ttart\tf.com\ta.com\t1')"
# --top 2: apple considers a and b only.
expect_exit 0 "$ND" cluster --top 2 r.tsv
expect_out_eq "$(printf 'removed\tapple\ta.com\tb.com\t2\nremoved\tpie\te.com\tb.com\t1')"

# Fingerprints (and scores) from the database when HEX16 is missing.
expect_exit 0 "$ND" init db --fingerprint-only --k 3
printf '{"id":"a.com","fp":"0000000000000000","score":5}\n{"id":"b.com","fp":"0000000000000003","score":9}\n{"id":"d.com","fp":"0000000000000001","score":2}\n' > docs.jsonl
expect_exit 0 "$ND" import db --format jsonl docs.jsonl
printf 'q\t1\ta.com\nq\t2\tb.com\nq\t3\td.com\t\t10\nq\t4\tx.com\t00000000000000ff\n' > fromdb.tsv
expect_exit 0 "$ND" cluster --db db fromdb.tsv
expect_out_eq "$(printf 'removed\tq\tb.com\td.com\t1\nremoved\tq\ta.com\td.com\t1')"
expect_exit 1 "$ND" cluster fromdb.tsv
expect_err_match '^neardup: fromdb.tsv:1: no fingerprint for .a.com. \(give HEX16 or --db\)$'
printf 'q\t1\ta.com\nq\t2\tnope.com\n' > missing.tsv
expect_exit 1 "$ND" cluster --db db missing.tsv
expect_err_match '^neardup: missing.tsv:2: no fingerprint for .nope.com.: not in the database$'

# --apply deletes the removed documents, after everything is decided.
expect_exit 1 "$ND" cluster --apply fromdb.tsv
expect_err_match '--apply needs --db'
expect_exit 0 "$ND" cluster --db db --apply fromdb.tsv
expect_lines 2
expect_err_match '2 removed, 2 deleted$'
expect_exit 1 "$ND" get db b.com
expect_out_eq "$(printf 'missing\tb.com')"
expect_exit 1 "$ND" get db a.com
expect_exit 0 "$ND" get db d.com
expect_exit 0 "$ND" verify db

# --k-tiers errors.
expect_exit 1 "$ND" cluster --k-tiers 2-10:3 r.tsv
expect_err_match "tier '2-10' should start at query rank 1"
expect_exit 1 "$ND" cluster --k-tiers 1-10:3,12-20:2 r.tsv
expect_err_match "tier '12-20' should start at query rank 11"
expect_exit 1 "$ND" cluster --k-tiers 1-10:65 r.tsv
expect_err_match "k '65' is not 0..64"
expect_exit 1 "$ND" cluster --k-tiers rest:1,1-10:3 r.tsv
expect_err_match "'rest' must be the last tier"
expect_exit 1 "$ND" cluster --k-tiers 1-10 r.tsv
expect_err_match "want FIRST-LAST:K or rest:K"
expect_exit 1 "$ND" cluster --k-tiers 1-x:2 r.tsv
expect_err_match "bad query rank range"
expect_exit 1 "$ND" cluster --k-tiers 1-10:3 --k 2 r.tsv
expect_err_match 'not both'
expect_exit 1 "$ND" cluster --k 65 r.tsv
expect_err_match 'k must be 0..64'
expect_exit 0 "$ND" cluster --k-tiers 1-1:3,2-5:1 r.tsv
expect_lines 3

# Bad lines name FILE:LINE and the problem.
printf 'q\t1\ta\t0000000000000000\nq\t2\n' > bad1.tsv
expect_exit 1 "$ND" cluster bad1.tsv
expect_err_match '^neardup: bad1.tsv:2: missing field'
printf 'q\tfirst\ta\t0000000000000000\n' > bad2.tsv
expect_exit 1 "$ND" cluster bad2.tsv
expect_err_match "^neardup: bad2.tsv:1: bad rank 'first'"
printf 'q\t1\ta\t00000000000000zz\n' > bad3.tsv
expect_exit 1 "$ND" cluster bad3.tsv
expect_err_match "^neardup: bad3.tsv:1: bad fingerprint '00000000000000zz'"
printf 'q\t1\ta\t0000000000000000\t1\nq\t2\tb\t0000000000000000\thigh\n' > bad4.tsv
expect_exit 1 "$ND" cluster bad4.tsv
expect_err_match "^neardup: bad4.tsv:2: bad score 'high'"
printf 'q\t1\ta\t0000000000000000\nr\t1\ta\t0000000000000000\nq\t2\ta\t0000000000000000\n' > bad5.tsv
expect_exit 1 "$ND" cluster bad5.tsv
expect_err_match "^neardup: bad5.tsv:3: document 'a' appears twice for query 'q' \(first at bad5.tsv:1\)"
expect_exit 1 "$ND" cluster
expect_err_match 'need at least one RESULTS file'
expect_exit 1 "$ND" cluster nosuch.tsv
expect_err_match "cannot open 'nosuch.tsv'"
