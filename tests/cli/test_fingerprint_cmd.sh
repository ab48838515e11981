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
# CJK runs whole (fingerprint version 2): spaces and line breaks inside
# Chinese cost nothing; --fold-chinese reads Traditional as Simplified,
# and a store created with it folds every text added or asked
printf '我们的数据库存储指纹并回答查询' > zh.txt
printf '我们 的 数据库\n存储指纹，并回答查询。' > zhseg.txt
printf '我們的數據庫存儲指紋並回答查詢' > zht.txt
expect_exit 0 "$ND" fingerprint zh.txt zhseg.txt
expect_out_eq "$(printf '122684820440628b\tzh.txt\n122684820440628b\tzhseg.txt')"
expect_exit 0 "$ND" fingerprint --fold-chinese zht.txt
expect_out_eq "$(printf '122684820440628b\tzht.txt')"
expect_exit 0 "$ND" fingerprint zht.txt
expect_out_eq "$(printf '0790b58014d00130\tzht.txt')"
expect_exit 0 "$ND" init zhdb --fingerprint-only --fold-chinese
expect_out_match 'fingerprint fp2;shingles:3;nfkc-cf\+t2s;cjk2;'
printf 'doc\t我們的數據庫存儲指紋並回答查詢\n' > zht.tsv
expect_exit 0 "$ND" add zhdb --format tsv zht.tsv
expect_exit 0 "$ND" get zhdb doc
expect_out_match $'^doc\t122684820440628b\t'
