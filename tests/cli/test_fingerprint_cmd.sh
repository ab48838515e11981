# test_fingerprint_cmd.sh — fingerprint and distance from the command line.

printf 'the quick brown fox jumps over the lazy dog\n' > a.txt
printf 'THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG!\n' > b.txt
expect_exit 0 "$ND" fingerprint a.txt b.txt
expect_out_eq "$(printf '35f38d1f7a8fc47c\ta.txt\n35f38d1f7a8fc47c\tb.txt')"
expect_exit 0 "$ND" fingerprint --features words a.txt
expect_out_eq "$(printf '330d3e8ac3f9f97e\ta.txt')"
run sh -c "\"$ND\" fingerprint < a.txt"
expect_out_eq "$(printf '35f38d1f7a8fc47c\t-')"
printf '{"id":"x","text":"the quick brown fox jumps over the lazy dog"}\n{"id":"y","text":"hello"}\n' > c.jsonl
expect_exit 0 "$ND" fingerprint --jsonl --json c.jsonl
expect_out_match '^\{"id":"x","fp":"35f38d1f7a8fc47c"\}$'
expect_exit 0 "$ND" distance a.txt 35f38d1f7a8fc47c
expect_out_eq 0
expect_exit 0 "$ND" distance 0000000000000000 ffffffffffffffff
expect_out_eq 64
expect_exit 1 "$ND" distance 0000000000000000
expect_exit 1 "$ND" distance nosuchfile 0000000000000000
expect_err_match 'nosuchfile'
printf '{"id":"x","text":5}\n' > bad.jsonl
expect_exit 1 "$ND" fingerprint --jsonl bad.jsonl
expect_err_match '^neardup: bad.jsonl:1: field "text": expected a string$'
expect_exit 1 "$ND" fingerprint --features bogus a.txt
