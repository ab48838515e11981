# test_readers.sh — the input readers as a user meets them (input/in_*.c):
# inputs that cannot be opened, symbolic links in --format files, JSONL
# text as JSON escapes it (same fingerprints as the plain text), bad JSON
# lines (one message naming file:line and the field, nothing stored), the
# line limit, and gzip input (members, trailing bytes, stdin).

"$ND" init db --fingerprint-only --k 3 --docs 1e4 >/dev/null
"$ND" init fdb --fingerprint-only --k 3 --docs 1e4 >/dev/null
stored() { # the number of documents in DB (default db)
    run "$ND" stats "${1:-db}" --json
    printf '%s\n' "$out" | sed -n 's/.*"documents":\([0-9]*\).*/\1/p'
}

# --- an input that cannot be opened: named, without a line number ---
for cmd in "fingerprint --format tsv" "add db --format tsv" "import db --format tsv" \
           "batch db --format tsv" "dedupe --format tsv" "fingerprint --format files" \
           "import db --format files" "dedupe --format jsonl" "import db --format warc"; do
    # shellcheck disable=SC2086
    expect_exit 1 "$ND" $cmd nosuch.in
    expect_err_match '^neardup: nosuch.in: cannot open: No such file or directory$'
done
mkdir adir
expect_exit 1 "$ND" add db --format jsonl adir
expect_err_match '^neardup: adir: cannot open: Is a directory$'
check "no line 0 in any message" -z "$(printf '%s\n' "$err" | grep ':0:')"

# --- --format files follows symbolic links ---
mkdir -p tree/sub real
printf 'alpha beta gamma delta epsilon\n' > tree/a.txt
printf 'one two three four five six\n' > real/r.txt
printf 'zeta eta theta iota kappa\n' > tree/sub/s.txt
ln -s a.txt tree/link-to-file           # a link to a file: a document under the link's name
ln -s ../real tree/link-to-dir          # a link to a directory: walked
expect_exit 0 "$ND" fingerprint --format files tree
expect_out_eq "$(printf '%s\ttree/a.txt\n%s\ttree/link-to-dir/r.txt\n%s\ttree/link-to-file\n%s\ttree/sub/s.txt' \
    "$("$ND" fingerprint tree/a.txt | cut -f1)" "$("$ND" fingerprint real/r.txt | cut -f1)" \
    "$("$ND" fingerprint tree/a.txt | cut -f1)" "$("$ND" fingerprint tree/sub/s.txt | cut -f1)")"
# a link back up the walk is a loop: reported (a bad record), the rest read
ln -s .. tree/sub/up
expect_exit 0 "$ND" dedupe --format files --skip-bad --out keep tree
expect_err_match "^neardup: tree/sub/up: directory loop: leads back to 'tree' \(not walked again\)$"
expect_lines 3 # a.txt and link-to-file are one text
expect_exit 1 "$ND" import fdb --format files tree
expect_err_match "^neardup: tree/sub/up: directory loop"
check "nothing imported from a walk with a loop" "$(stored fdb)" = 0
# a dangling link: reported with its reason
rm tree/sub/up
ln -s nowhere tree/dangling
expect_exit 0 "$ND" import fdb --format files --skip-bad tree
expect_err_match '^neardup: tree/dangling: cannot open: No such file or directory$'
expect_err_match 'import: 4 documents'
rm tree/dangling
# a FIFO inside a walk is not a document (and is not opened)
mkfifo tree/fifo
expect_exit 0 "$ND" fingerprint --format files tree
expect_lines 4
# the licences: every entry counted, links included
if [ -d /usr/share/common-licenses ]; then
    n=$(find /usr/share/common-licenses -mindepth 1 -maxdepth 1 \( -type f -o -xtype f \) | wc -l)
    links=$(find /usr/share/common-licenses -mindepth 1 -maxdepth 1 -type l | wc -l)
    "$ND" init lic --fingerprint-only >/dev/null
    expect_exit 0 "$ND" import lic --format files /usr/share/common-licenses
    expect_err_match "import: $n documents"
    check "common-licenses holds links ($links)" "$links" -gt 0
fi

# --- JSONL: escapes decode to the text's bytes ---
# The same texts as TSV and as JSON (escapes, \u, a surrogate pair, UTF-8
# as is): the same fingerprints.
printf 'e1\tcaf\xc3\xa9 na\xc3\xafve \xf0\x9f\x98\x80 end of "quoted" back\\slash\n' > esc.tsv
printf '{"id":"e1","text":"caf\\u00e9 na\xc3\xafve \\ud83d\\ude00 end of \\"quoted\\" back\\\\slash"}\n' > esc.jsonl
run "$ND" fingerprint --format tsv esc.tsv
want=$out
expect_exit 0 "$ND" fingerprint --format jsonl esc.jsonl
expect_out_eq "$want"
# \u0000 is a byte of the text
printf 'n1\tbefore\000after\n' > nul.tsv
printf '{"id":"n1","text":"before\\u0000after"}\n' > nul.jsonl
run "$ND" fingerprint --format tsv nul.tsv
want=$out
expect_exit 0 "$ND" fingerprint --format jsonl nul.jsonl
expect_out_eq "$want"

# --- JSONL: a bad line is one message naming file:line and the field, and
# nothing of it is stored; with --skip-bad the good lines around it are ---
bad_case() { # LINE REGEX
    printf '{"id":"ok1","fp":"00000000000000f1"}\n%s\n{"id":"ok2","fp":"000000000000f100"}\n' "$1" > bad.jsonl
    expect_exit 1 "$ND" add db --format jsonl bad.jsonl
    expect_err_match "^neardup: bad.jsonl:2: $2"
    check "one message for [$1]" "$(printf '%s\n' "$err" | grep -c 'bad.jsonl')" = 1
    expect_exit 0 "$ND" add db --format jsonl --skip-bad bad.jsonl
    expect_err_match '1 new, 1 dup, 1 bad|2 new, 0 dup, 1 bad'
    expect_out_match '^new	ok2$|^dup	ok2'
    check "nothing of the bad line stored [$1]" "$(stored)" = 2
    "$ND" delete db ok1 ok2 >/dev/null
}
bad_case '{"id":"b","text":"\ud800"}' 'invalid JSON at column [0-9]+: invalid Unicode'
bad_case '{"id":"b","text":"\udc00x"}' 'invalid JSON at column [0-9]+: invalid Unicode'
bad_case "$(printf '{"id":"b","text":"caf\xe9"}')" 'invalid JSON at column [0-9]+: unable to decode byte 0xe9'
bad_case "$(printf '{"id":"b","text":"a\001b"}')" 'invalid JSON at column [0-9]+: control character 0x1'
bad_case "$(printf '{"id":"b","text":"a\tb"}')" 'invalid JSON at column [0-9]+: control character 0x9'
bad_case '{"id":"b"}' 'field "text": missing'
bad_case '{"id":"b","text":["x"]}' 'field "text": expected a string'
bad_case '{"text":"x"}' 'field "id": missing'
bad_case '{"id":false,"text":"x"}' 'field "id": expected a string or an integer'
bad_case '{"id":"b\u0000c","text":"x"}' 'field "id": key contains a NUL byte'
bad_case '{"id":"b","text":"x","score":[1]}' 'field "score": expected a number'
bad_case '{"id":"b","text":"x","n":18446744073709551615}' 'invalid JSON at column [0-9]+: too big integer'
bad_case '{"id":"b","text":"x"} trailing' 'invalid JSON at column [0-9]+: end of file expected'
bad_case '["b","x"]' 'field "\(line\)": expected a JSON object'
# deep nesting: within jansson's 2048 levels it is read, beyond it refused
deep() { printf '{"id":"%s","fp":"00000000000000aa","d":' "$1"; head -c "$2" /dev/zero | tr '\0' '['
         head -c "$2" /dev/zero | tr '\0' ']'; printf '}\n'; }
deep d1500 1500 > deep.jsonl
expect_exit 0 "$ND" fingerprint --format jsonl deep.jsonl
expect_out_eq "$(printf '00000000000000aa\td1500')"
bad_case "$(deep d3000 3000)" 'invalid JSON at column [0-9]+: maximum parsing depth reached'

# --- the line limit (64 MiB) applies to JSON lines too ---
{ printf '{"id":"huge","text":"'; head -c 70000000 /dev/zero | tr '\0' 'a'; printf '"}\n'
  printf '{"id":"after","fp":"0000000000000abc"}\n'; } > huge.jsonl
expect_exit 1 "$ND" add db --format jsonl huge.jsonl
expect_err_match '^neardup: huge.jsonl:1: line longer than the 64 MiB limit$'
check "nothing stored from an over-long line" "$(stored)" = 0
expect_exit 0 "$ND" add db --format jsonl --skip-bad huge.jsonl
expect_out_eq "$(printf 'new\tafter')"
"$ND" delete db after >/dev/null
rm -f huge.jsonl
# a long line within the limit, with escapes all along
{ printf '{"id":"long","text":"'; head -c 3000000 /dev/zero | tr '\0' 'a' | sed 's/aaaaaaaaaa/word\\n\\u00e9 /g'
  printf '"}\n'; } > long.jsonl
{ printf 'long\t'; head -c 3000000 /dev/zero | tr '\0' 'a' | sed 's/aaaaaaaaaa/word \xc3\xa9 /g'; printf '\n'; } > long.tsv
run "$ND" fingerprint --format tsv long.tsv
want=$out
expect_exit 0 "$ND" fingerprint --format jsonl long.jsonl
expect_out_eq "$want"

# --- gzip: members, trailing bytes, stdin, truncation ---
printf '00000000000000ff\tz1\n' | gzip > m.fp.gz
printf 'ff00000000000000\tz2\n' | gzip >> m.fp.gz
expect_exit 0 "$ND" fingerprint --format tsv m.fp.gz
expect_lines 2
printf 'not gzip at all' >> m.fp.gz          # after a member: ignored, as gunzip -q does
run "$ND" add db --format fp m.fp.gz
expect_out_eq "$(printf 'new\tz1\nnew\tz2')"
"$ND" delete db z1 z2 >/dev/null
STDIN=m.fp.gz expect_exit 0 "$ND" import db --format fp -
expect_err_match 'import: 2 documents'
"$ND" delete db z1 z2 >/dev/null
head -c 20 m.fp.gz > cut.fp.gz
expect_exit 1 "$ND" fingerprint --format tsv cut.fp.gz
expect_err_match '^neardup: cut.fp.gz:[0-9]+: corrupt or truncated gzip data: unexpected end of file$'
expect_exit 1 "$ND" import db --format fp cut.fp.gz
expect_err_match '^neardup: cut.fp.gz:[0-9]+: corrupt or truncated gzip data'
check "nothing imported from a truncated stream" "$(stored)" = 0
# corrupt deflate data
printf '\037\213\010\000\000\000\000\000\000\003garbage-not-deflate' > bad.fp.gz
expect_exit 1 "$ND" fingerprint --format tsv bad.fp.gz
expect_err_match '^neardup: bad.fp.gz:1: corrupt or truncated gzip data: '
# a single 0x1f byte, and a one-byte input, are plain text
printf '\037' > one.tsv
expect_exit 1 "$ND" fingerprint --format tsv one.tsv
expect_err_match 'one.tsv:1: text: missing TAB'


# A UTF-8 byte order mark opening an input is no part of the first key
# (issue 44: it became one), given the format or inferred; and a JSONL
# line of white space alone is blank, as an empty one is.
printf '\357\273\277bom1\tthe first text of a file saved with a mark\nbom2\tanother text\n' > bom.tsv
expect_exit 0 "$ND" fingerprint --format tsv bom.tsv
expect_out_match '	bom1$'
check "the mark is not in the first key" -z "$(printf '%s' "$out" | grep "$(printf '\357\273\277')")"
expect_exit 0 "$ND" fingerprint bom.tsv
expect_out_match '	bom1$'
printf '\357\273\277{"id": "j1", "text": "a json text"}\n  \n\t\n\n{"id": "j2", "text": "another"}\n' > bom.jsonl
expect_exit 0 "$ND" fingerprint bom.jsonl
expect_lines 2
expect_out_match '	j1$'
expect_out_match '	j2$'
expect_exit 0 "$ND" fingerprint --format jsonl bom.jsonl
expect_lines 2
printf '\357\273\2770123456789abcdef\tfp1\n' > bom.fp
expect_exit 0 "$ND" init bomdb --fingerprint-only
expect_exit 0 "$ND" add bomdb --format fp bom.fp
expect_out_eq "$(printf 'new\tfp1')"
