# test_hostile.sh — the catalogue of bad inputs (issue: Reliability). Each
# case states the exact outcome: exit code, the one-line error naming
# file/line/field, and that the database is unchanged.

"$ND" init db --k 3 --docs 1e5 >/dev/null
printf '1111111111111111\tbase\n' > base.fp
"$ND" add db --format fp base.fp >/dev/null 2>&1
unchanged() { # the database still holds exactly the base document and verifies
    run "$ND" stats db --json
    expect_out_match '"documents":1,"fingerprints":1'
    expect_exit 0 "$ND" verify db
}

# empty input: nothing to do, success
: > empty.fp
expect_exit 0 "$ND" add db --format fp empty.fp
expect_lines 0
expect_err_match '0 new, 0 dup, 0 bad'

# a 100 MB line: over the 64 MiB limit
head -c 100000000 /dev/zero | tr '\0' 'a' > huge.tsv
printf '\tx\n' >> huge.tsv
expect_exit 1 "$ND" add db --format tsv huge.tsv
expect_err_match '^neardup: huge.tsv:1: line longer than the 64 MiB limit$'
rm -f huge.tsv
unchanged

# bad hex, each reason named, nothing stored
for case in '0123:too short' '0123456789abcdef0:too long' '0123456789abcdeg:not a hex digit' '0x23456789abcdef:0x prefix'; do
    printf '%s\tk\n' "${case%%:*}" > bad.fp
    expect_exit 1 "$ND" add db --format fp bad.fp
    expect_err_match "^neardup: bad.fp:1: fingerprint '.*': ${case#*:}"
done
unchanged

# a binary file as fingerprint input
head -c 3000 /bin/ls > bin.fp
expect_exit 1 "$ND" add db --format fp bin.fp
expect_err_match '^neardup: bin.fp:1: fingerprint'
unchanged

# JSON: broken, wrong types, missing fields
printf '{"id":"a","text":' > j1.jsonl
expect_exit 1 "$ND" add db --format jsonl j1.jsonl
expect_err_match '^neardup: j1.jsonl:1: invalid JSON'
printf '{"id":["a"],"text":"x"}\n' > j2.jsonl
expect_exit 1 "$ND" add db --format jsonl j2.jsonl
expect_err_match 'j2.jsonl:1: field "id": expected a string or an integer'
printf '{"id":"a"}\n' > j3.jsonl
expect_exit 1 "$ND" add db --format jsonl j3.jsonl
expect_err_match 'j3.jsonl:1: field "text": missing'
printf '{"id":"a","fp":"0123","score":1}\n' > j4.jsonl
expect_exit 1 "$ND" add db --format jsonl j4.jsonl
expect_err_match 'j4.jsonl:1: field "fp": too short'
printf '{"id":"a","text":"x","score":"high"}\n' > j5.jsonl
expect_exit 1 "$ND" add db --format jsonl j5.jsonl
expect_err_match 'j5.jsonl:1: field "score": expected a number'
unchanged

# --skip-bad counts and skips; good records around bad ones get in
printf '{"id":"g1","fp":"00000000000000f0"}\n{"id":"b"\n{"id":"g2","fp":"0f00000000000000"}\n' > mix.jsonl
expect_exit 0 "$ND" add db --format jsonl --skip-bad mix.jsonl
expect_lines 2
expect_err_match 'mix.jsonl:2: invalid JSON'
expect_err_match '2 new, 0 dup, 1 bad'
"$ND" delete db g1 g2 >/dev/null
unchanged

# invalid UTF-8 and NUL bytes in text are bytes: fingerprinted, stored
printf 'u1\tcaf\xc3 \xff\xfe bad utf8\n' > u.tsv
printf 'n1\tnul\000inside text\n' >> u.tsv
expect_exit 0 "$ND" add db --format tsv u.tsv
expect_lines 2
"$ND" delete db u1 n1 >/dev/null
# a NUL inside a key is refused
printf '{"id":"a\\u0000b","text":"x"}\n' > nulkey.jsonl
expect_exit 1 "$ND" add db --format jsonl nulkey.jsonl
expect_err_match 'field "id": key contains a NUL byte'
unchanged

# keys over the limit (4096 bytes)
printf '1111111111111112\t%s\n' "$(head -c 4097 /dev/zero | tr '\0' k)" > longkey.fp
expect_exit 1 "$ND" add db --format fp longkey.fp
expect_err_match 'longkey.fp:1: key: key longer than 4096 bytes'
unchanged

# duplicate keys in one input: the second is a near-duplicate of the first
printf '2222222222222222\tsame\n2222222222222222\tsame\n' > dupkey.fp
expect_exit 0 "$ND" add db --format fp dupkey.fp
expect_out_eq "$(printf 'new\tsame\ndup\tsame\tsame\t0')"
"$ND" delete db same >/dev/null
unchanged

# truncated gzip
seq 1 20000 | awk '{printf "%016x\tk%d\n", $1 * 2654435761, $1}' | gzip > t.fp.gz
head -c 20000 t.fp.gz > trunc.fp.gz
expect_exit 1 "$ND" fingerprint --format tsv trunc.fp.gz
expect_err_match 'trunc.fp.gz:[0-9]+: corrupt or truncated gzip data'

# WARC whose Content-Length lies
printf 'WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: http://x/\r\nContent-Length: 5000\r\n\r\nshort body\r\n\r\n' > lie.warc
expect_exit 1 "$ND" fingerprint --format warc lie.warc
expect_err_match 'lie.warc:[0-9]+: record claims 5000 bytes but the input ends after [0-9]+ \(record at line 1\)'

# k out of range
expect_exit 1 "$ND" add db --k 17 --format fp base.fp
expect_err_match 'k must be 0..16'
expect_exit 1 "$ND" init db9 --k 9
check "no database for a bad k" ! -e db9

# a database path that is a file
echo x > afile
expect_exit 1 "$ND" query afile 0000000000000000
expect_err_match "afile exists and is not a directory"
# a directory that is not a database
mkdir plain
expect_exit 2 "$ND" stats plain
expect_err_match "no database at plain"

# a database opened by another process
mkfifo hold
( "$ND" add db --format fp hold >/dev/null 2>&1 ) &
holder=$!
exec 7>hold   # the writer keeps the fifo open, so `add` waits on it
sleep 0.5
expect_exit 2 "$ND" add db --format fp base.fp
expect_err_match 'busy'
expect_exit 0 "$ND" query db 1111111111111111   # readers are fine
exec 7>&-
wait $holder
unchanged

# an SST file with flipped bytes: checksums surface as corruption, no crash
"$ND" init big --k 3 --docs 1e5 >/dev/null
awk 'BEGIN { srand(3); for (i = 0; i < 30000; i++) printf "%04x%04x%04x%04x\tk%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, i }' > many.fp
"$ND" add big --format fp many.fp >/dev/null 2>&1
"$ND" compact big
"$ND" verify big >/dev/null
sst=$(ls -S big/*.sst | head -1)
size=$(stat -c %s "$sst")
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of="$sst" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect_exit 2 "$ND" verify big
expect_err_match 'corrupt data'

# read-only directory and full disk (tmpfs mounts need root)
if [ "$(id -u)" -eq 0 ]; then
    mkdir ro && mount -t tmpfs -o size=64m tmpfs ro
    "$ND" init ro/db --k 3 --docs 1e5 >/dev/null
    "$ND" add ro/db --format fp base.fp >/dev/null 2>&1
    mount -o remount,ro ro
    expect_exit 2 "$ND" add ro/db --format fp dupkey.fp
    expect_err_match 'read-only|Read-only'
    expect_exit 0 "$ND" query ro/db 1111111111111111
    expect_lines 1
    umount ro

    mkdir full && mount -t tmpfs -o size=1m tmpfs full
    "$ND" init full/db --k 3 --docs 1e5 >/dev/null 2>&1
    awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++) printf "%04x%04x%04x%04x\tkey-with-some-length-%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, i }' > fill.fp
    expect_exit 2 "$ND" add full/db --format fp --sync fill.fp
    expect_err_match 'no space left|No space left'
    acked=$(printf '%s\n' "$out" | grep -c '^new' || true)
    mount -o remount,size=64m full
    expect_exit 0 "$ND" verify full/db
    run "$ND" stats full/db --json
    expect_out_match "\"documents\":$acked,"
    umount full
else
    echo "NOTICE: read-only and full-disk cases need root (tmpfs mounts): not run" >&2
fi
