# test_dedupe.sh — `neardup dedupe`: pairs, clusters, keep and drop on a
# small corpus with known near-duplicates; the representative rule; --keep;
# --db; resemblance confirmation against plain simhash; containment
# (--min-containment); the scratch files; --memory (partitioned sorts);
# bad usage.

expect_exit 0 "$ND" dedupe --help
expect_out_match '^usage: neardup dedupe'
expect_out_match 'Without --db nothing is'

# The corpus: deterministic word sequences over a fixed vocabulary.
V="alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november
oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu red orange
yellow green blue indigo violet black white grey brown pink silver gold copper iron tin
lead zinc nickel river lake ocean sea bay gulf cape island forest field meadow hill valley
mountain"
gen() { # gen SEED N -> N words, 12 a line
    awk -v seed="$1" -v n="$2" -v V="$V" 'BEGIN { nv = split(V, w); x = seed;
        for (i = 1; i <= n; i++) { x = (x * 1103515245 + 12345) % 2147483648;
            printf "%s%s", w[int(x / 65536) % nv + 1], (i % 12 ? " " : "\n") } print "" }'
}
subst() { # subst N WORD: replace the Nth word of stdin
    awk -v n="$1" -v r="$2" '{ for (i = 1; i <= NF; i++) if (++c == n) $i = r; print }'
}
mkdir c
gen 1 200 > c/a.txt                                        # a, its copy, a 2-word edit
cp c/a.txt c/a_copy.txt
subst 50 ZZ < c/a.txt | subst 150 YY > c/a_edit.txt
gen 2 300 > c/b.txt                                        # b and a longer b
{ cat c/b.txt; echo "one more closing sentence for the longer copy"; } > c/b_long.txt
gen 3 150 > c/c.txt                                        # alone
X=$(gen 5 24)                                              # a repeated header and different
for m in 1 2; do                                           # bodies: simhash close, shingles not
    { for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do echo "$X"; done
      gen $((5 + m)) 30; } > c/m$m.txt
done
n_docs=$(ls c | wc -l)

# pairs: exactly the near-duplicates, each once
expect_exit 0 "$ND" dedupe --out pairs c
expect_err_match "dedupe: $n_docs documents, 4 pairs, 0 bad"
expect_lines 4
pairs=$(printf '%s\n' "$out" | awk -F'\t' '{ print ($1 < $2 ? $1 " " $2 : $2 " " $1) }' | sort)
check "pairs are the planted ones: [$pairs]" "$pairs" == "$(printf '%s\n' \
    'c/a.txt c/a_copy.txt' 'c/a.txt c/a_edit.txt' 'c/a_copy.txt c/a_edit.txt' 'c/b.txt c/b_long.txt')"
expect_out_match '^c/a.txt	c/a_copy.txt	0$'
run "$ND" distance c/a.txt c/a_edit.txt
d_edit=$out
expect_exit 0 "$ND" dedupe --out pairs c
expect_out_match "^c/a.txt	c/a_edit.txt	$d_edit\$"
expect_exit 0 "$ND" dedupe --out pairs --json c
expect_out_match '^\{"a":"c/a.txt","b":"c/a_edit.txt","dist":[0-9]+,"resemblance":0\.9[0-9]*\}$'

# clusters: the representative rule (input order by default)
expect_exit 0 "$ND" dedupe c
expect_out_eq "$(printf '1\tkeep\tc/a.txt\t0\n1\tdrop\tc/a_copy.txt\t0\n1\tdrop\tc/a_edit.txt\t%s\n2\tkeep\tc/b.txt\t0\n2\tdrop\tc/b_long.txt\t4' "$d_edit")"
clusters=$out
# every dropped document is within k bits of its kept one (recomputed), and
# is a reported pair with it (so within R too)
"$ND" dedupe --out pairs c 2>/dev/null > pairs.tsv
printf '%s\n' "$clusters" | awk -F'\t' '$2 == "keep" { k[$1] = $3 } $2 == "drop" { print k[$1] "\t" $3 "\t" $4 }' > rule.tsv
check "rule.tsv lists the 3 dropped documents" "$(wc -l < rule.tsv)" -eq 3
while IFS=$'\t' read -r kept dropped dist; do
    d=$("$ND" distance "$kept" "$dropped")
    check "$dropped: distance $d to $kept as printed ($dist) and <= 24" "$d" -eq "$dist" -a "$d" -le 24
    check "$dropped and $kept are a reported pair" -n "$(awk -F'\t' -v a="$kept" -v b="$dropped" \
        '($1 == a && $2 == b) || ($1 == b && $2 == a)' pairs.tsv)"
done < rule.tsv

# keep and drop: complementary id lists
expect_exit 0 "$ND" dedupe --out keep c
expect_out_eq "$(printf 'c/a.txt\nc/b.txt\nc/c.txt\nc/m1.txt\nc/m2.txt')"
keep=$out
expect_exit 0 "$ND" dedupe --out drop c
expect_out_eq "$(printf 'c/a_copy.txt\nc/a_edit.txt\nc/b_long.txt')"
check "keep + drop = the corpus" "$(printf '%s\n%s\n' "$keep" "$out" | sort)" == "$(ls -d c/* | sort)"
expect_exit 0 "$ND" dedupe --out drop --json c
expect_out_match '^\{"drop":"c/a_copy.txt"\}$'

# --keep longest: the longer b stays
expect_exit 0 "$ND" dedupe --out keep --keep longest c
expect_out_match '^c/b_long.txt$'
check "longest: c/b.txt dropped" -z "$(printf '%s\n' "$out" | grep -x c/b.txt)"
# --keep score (jsonl): the highest score stays
for f in a a_copy a_edit b c; do
    s=1; [ $f = a_edit ] && s=9
    printf '{"id":"%s","score":%s,"text":"%s"}\n' "$f" "$s" "$(tr '\n' ' ' < c/$f.txt)"
done > corpus.jsonl
expect_exit 0 "$ND" dedupe --format jsonl --keep score corpus.jsonl
expect_out_match '^1	keep	a_edit	0$'
expect_out_match '^1	drop	a	[0-9]+$'
expect_exit 0 "$ND" dedupe --format jsonl corpus.jsonl
expect_out_match '^1	keep	a	0$'

# identical documents are clustered as one group (no pair among them is
# held): the best copy by --keep stays, the others go with distance 0
t=$(tr '\n' ' ' < c/c.txt)
for i in 1 2 3 4 5; do printf '{"id":"copy%s","score":%s,"text":"%s"}\n' $i $(( (i * 7) % 5 )) "$t"; done > copies.jsonl
printf '{"id":"edit","score":9,"text":"%s"}\n' "$(subst 20 QQ < c/c.txt | tr '\n' ' ')" >> copies.jsonl
expect_exit 0 "$ND" dedupe --format jsonl copies.jsonl
expect_out_match '^1	keep	copy1	0$'
expect_lines 6
expect_err_match '6 documents \(2 distinct\), 1 pair of distinct ones'
subst 20 QQ < c/c.txt > c_edit.txt
d=$("$ND" distance c/c.txt c_edit.txt)
expect_exit 0 "$ND" dedupe --format jsonl --out drop copies.jsonl
expect_out_eq "$(printf 'copy2\ncopy3\ncopy4\ncopy5\nedit')"
expect_exit 0 "$ND" dedupe --format jsonl --keep score copies.jsonl   # copy2 leads the copies
expect_out_eq "$(printf '1\tkeep\tedit\t0\n'; printf '1\tdrop\tcopy%s\t'"$d"'\n' 1 2 3 4 5)"
expect_exit 0 "$ND" dedupe --format jsonl --keep score --out pairs copies.jsonl
expect_lines 15                                               # pairs output: all of them
yes 0123456789abcdef | head -3000 | awk '{ print $0 "\tk" NR }' > same.fp
expect_exit 0 "$ND" dedupe --format fp --out drop same.fp
expect_lines 2999
expect_err_match '3000 documents \(1 distinct\), 0 pairs'

# --min-resemblance 0 (plain simhash) against the default
run "$ND" distance c/m1.txt c/m2.txt
check "m1, m2: simhash within 3 bits ($out)" "$out" -le 3
expect_exit 0 "$ND" dedupe --out pairs --k 3 --min-resemblance 0 c
expect_out_match '^c/m1.txt	c/m2.txt	[0-3]$'            # shared header: a false pair
check "k=3 simhash misses the 2-word edit (distance $d_edit)" "$d_edit" -gt 3
check "k=3 simhash: no a/a_edit pair" -z "$(printf '%s\n' "$out" | grep 'a_edit')"
expect_exit 0 "$ND" dedupe --out pairs c
check "default: no m1/m2 pair" -z "$(printf '%s\n' "$out" | grep 'c/m1')"
expect_exit 0 "$ND" dedupe --out pairs --min-resemblance 0.99 c
expect_lines 1                                                # only the exact copy
expect_exit 1 "$ND" dedupe --k 9 --min-resemblance 0 c
expect_err_match 'above 8 needs texts'
expect_exit 1 "$ND" dedupe --k 65 c
expect_exit 1 "$ND" dedupe --min-resemblance 1.5 c
expect_exit 1 "$ND" dedupe --out triples c
expect_exit 1 "$ND" dedupe --keep newest c
expect_exit 1 "$ND" dedupe

# --min-containment: a page with three paragraphs appended is contained in
# the longer page (resemblance about 0.5, 18 bits apart: neither the
# self-join nor resemblance reports it); an unrelated page never pairs
mkdir cc
gen 11 200 > cc/page.txt
{ cat cc/page.txt; gen 12 60; gen 13 60; gen 14 60; } > cc/page_more.txt
gen 15 300 > cc/other.txt
expect_exit 0 "$ND" dedupe --out pairs cc
expect_out_eq ""
expect_err_match '3 documents, 0 pairs, 0 bad'
expect_exit 0 "$ND" dedupe --out pairs --min-containment 0 cc
expect_out_eq ""
expect_exit 0 "$ND" dedupe --out pairs --min-containment 0.8 cc
expect_out_match '^cc/page.txt	cc/page_more.txt	[0-9]+$'
expect_lines 1
expect_err_match '3 documents, 1 pair \(1 by containment\), 0 bad'
expect_exit 0 "$ND" dedupe --out pairs --json --min-containment 0.8 cc
expect_out_match '^\{"a":"cc/page.txt","b":"cc/page_more.txt","dist":[0-9]+,"resemblance":0\.[3-7][0-9]*,"containment":(0\.[89][0-9]*|1\.000)\}$'
expect_exit 0 "$ND" dedupe --out drop --min-containment 0.8 cc
expect_out_eq "cc/page_more.txt"
expect_exit 0 "$ND" dedupe --out pairs --min-containment 0.5 --min-resemblance 0.5 cc
check "unrelated page never pairs" -z "$(printf '%s\n' "$out" | grep other)"
for bad in -0.1 1.5 abc "" 0.8x nan; do
    expect_exit 1 "$ND" dedupe --min-containment "$bad" cc
    expect_err_match "min-containment must be a number in \[0, 1\]"
done

# --memory: a sort larger than the budget is split into partitions (1 KB
# forces hundreds a table); every output is the same as with the default.
# planted.fp: random fingerprints and copies 0..5 bits from earlier ones.
RANDOM=7
fps=()
for i in $(seq 1 1500); do
    if [ "$i" -gt 10 ] && [ $((RANDOM % 2)) -eq 1 ]; then
        b=${fps[RANDOM % ${#fps[@]}]}
        for ((f = RANDOM % 6; f > 0; f--)); do b=$((b ^ (1 << (RANDOM % 64)))); done
    else
        b=$(((RANDOM << 49) ^ (RANDOM << 34) ^ (RANDOM << 19) ^ (RANDOM << 4) ^ (RANDOM & 15)))
    fi
    fps+=("$b")
    printf '%016x\tp%d\n' "$b" "$i"
done > planted.fp
for args in "--format fp --out pairs planted.fp" "--format fp --out pairs --k 8 planted.fp" \
            "--format fp planted.fp" "--format fp --out keep --k 5 planted.fp" \
            "--format fp --out drop same.fp" "--out pairs c" "c" "--out keep --keep longest c" \
            "--out pairs --json --min-containment 0.8 cc" "--format jsonl --keep score copies.jsonl"; do
    run "$ND" dedupe $args
    want_out=$out want_err=${err%, *}
    run "$ND" dedupe --memory 0.001 $args
    check "--memory 0.001 $args: same output" "$out" == "$want_out"
    check "--memory 0.001 $args: same summary" "${err%, *}" == "$want_err"
done
run "$ND" dedupe --format fp --out pairs --k 5 planted.fp
check "planted.fp has pairs at up to 5 bits" "$(printf '%s\n' "$out" | wc -l)" -gt 500
for bad in 0 -1 abc "" 5x 0.0001 2000000 nan; do
    expect_exit 1 "$ND" dedupe --memory "$bad" c
    expect_err_match "memory must be a number of MB in \[0.001, 1048576\], got '$bad'"
done

# scratch files: keys and sketches go to $TMPDIR, unlinked (nothing left)
mkdir scratch
TMPDIR=$PWD/scratch expect_exit 0 "$ND" dedupe --out pairs c
expect_lines 4
check "scratch directory left empty" -z "$(ls -A scratch)"
TMPDIR=$PWD/no-such-dir expect_exit 2 "$ND" dedupe c
expect_err_match "cannot create the keys scratch file in '.*no-such-dir': .* \(set TMPDIR\)"

# fp input: simhash only, k <= 8 (default 3)
printf '0123456789abcdef\tf1\n0123456789abcdee\tf2\nfedcba9876543210\tf3\n0123456789abcdf0\tf4\n' > in.fp
expect_exit 0 "$ND" dedupe --format fp --out pairs in.fp
expect_out_eq "$(printf 'f1\tf2\t1')"
expect_exit 0 "$ND" dedupe --format fp --out pairs --k 5 in.fp
expect_lines 3                                                # 1, 5 and 4 bits
expect_exit 1 "$ND" dedupe --format fp --k 9 in.fp

# jsonl records with fingerprints only: simhash within 3 bits by default
printf '{"id":"a","fp":"0123456789abcdef"}\n{"id":"b","fp":"0123456789abcdee"}\n' > fp.jsonl
expect_exit 0 "$ND" dedupe --format jsonl fp.jsonl
expect_out_eq "$(printf '1\tkeep\ta\t0\n1\tdrop\tb\t1')"
expect_exit 1 "$ND" dedupe --format jsonl --k 9 fp.jsonl
expect_err_match 'needs texts'
mkdir empty
expect_exit 0 "$ND" dedupe empty
expect_out_eq ""

# without --db nothing is written
before=$(ls -A)
expect_exit 0 "$ND" dedupe c
check "no file written without --db" "$(ls -A)" == "$before"

# --db: the corpus stays in a database that can be queried afterwards
expect_exit 0 "$ND" dedupe --db store --out drop c
expect_out_eq "$(printf 'c/a_copy.txt\nc/a_edit.txt\nc/b_long.txt')"
# --db never creates a store beside a user's files (the library's rule)
mkdir notes
echo "my notes" > notes/notes.txt
expect_exit 2 "$ND" dedupe --db notes --out drop c
expect_err_match "'notes' already exists and is not empty"
check "dedupe --db wrote nothing beside the user's file" "$(ls notes)" = notes.txt
expect_exit 0 "$ND" stats store --json
expect_out_match "\"documents\":$n_docs,"
expect_exit 0 "$ND" verify store
expect_exit 0 "$ND" fingerprint c                                  # every document, its fingerprint
want=$(printf '%s\n' "$out" | awk -F'\t' '{ print $2 "\t" $1 }' | LC_ALL=C sort)
expect_exit 0 "$ND" get store $(ls -d c/*)
check "--db: every document with its fingerprint" "$(printf '%s\n' "$out" | cut -f1,2 | LC_ALL=C sort)" = "$want"
expect_exit 0 "$ND" query store --k 8 --text c/a_edit.txt
expect_out_match '	c/a.txt	'
expect_out_match '	c/a_copy.txt	'
expect_exit 0 "$ND" dedupe --db store --out drop c                # reused: same answer, same store
expect_out_eq "$(printf 'c/a_copy.txt\nc/a_edit.txt\nc/b_long.txt')"
expect_exit 0 "$ND" stats store --json
expect_out_match "\"documents\":$n_docs,"
# --db with thousands of documents (one loader, one write of the store):
# each key with the fingerprint of its last line (300 keys come twice)
awk 'BEGIN { srand(21); for (i = 0; i < 3300; i++) printf "%04x%04x%04x%04x\tx%d\n", rand()*65536,
    rand()*65536, rand()*65536, rand()*65536, i < 3000 ? i : (i - 3000) * 10 }' > many.fp
want=$(awk -F'\t' '{ fp[$2] = $1 } END { for (k in fp) print k "\t" fp[k] }' many.fp | LC_ALL=C sort)
# default --memory: one chunk; --memory 0.2 (1310 documents a chunk): the
# loader spills three chunks and merges them
for mem in 256 0.2; do
    expect_exit 0 "$ND" dedupe --db manydb$mem --memory $mem --format fp --out keep many.fp
    expect_exit 0 "$ND" stats manydb$mem --json
    expect_out_match '"documents":3000,'
    expect_exit 0 "$ND" get manydb$mem $(cut -f1 <<<"$want")
    check "--db --memory $mem: 3000 documents with their last fingerprints" \
        "$(printf '%s\n' "$out" | cut -f1,2 | LC_ALL=C sort)" = "$want"
    expect_exit 0 "$ND" verify manydb$mem
    check "--db --memory $mem: no temporary directory left" -z "$(ls -d manydb$mem/nd-load-* 2>/dev/null)"
done
expect_exit 0 "$ND" init other --fingerprint-only --k 3 --features words
expect_exit 0 "$ND" dedupe --db other --out pairs c                # the store's features
expect_exit 2 "$ND" dedupe --db other --features shingles:3 c      # a mismatch is refused
expect_err_match "cannot open or create database 'other'"
# --db with --k: a store of another design distance is refused before
# anything is read (issue 36); without --k the store's k is used
expect_exit 0 "$ND" init k3 --fingerprint-only --k 3
expect_exit 1 "$ND" dedupe --db k3 --k 5 --out drop c
expect_err_match "^neardup: dedupe: database 'k3' has k = 3, but --k 5 asks for k = 5 \(min\(K, 8\)\); give --k 3, or no --k to keep the store's$"
expect_out_eq ""
check "refused: one line on stderr" "$(printf '%s\n' "$err" | wc -l)" -eq 1
expect_exit 0 "$ND" stats k3 --json
expect_out_match '"documents":0,'
expect_exit 1 "$ND" dedupe --db k3 --k 24 c                       # min(24, 8) = 8
expect_err_match "has k = 3, but --k 24 asks for k = 8"
expect_exit 0 "$ND" dedupe --db k3 --k 3 --out drop c          # within 3 bits: the copy only
expect_out_eq "c/a_copy.txt"
expect_exit 0 "$ND" dedupe --db k3 --out drop c
expect_exit 0 "$ND" init k8 --fingerprint-only --k 8
expect_exit 0 "$ND" dedupe --db k8 --k 24 --out drop c
expect_exit 0 "$ND" stats k3 --json
expect_out_match "\"documents\":$n_docs,"
