# test_retention.sh — documents carry a last-seen time: set by add, refreshed
# when add sees the same document again; `expire` deletes the older ones
# and after `compact` their space is reclaimed (fewer entries and bytes in
# every table).

"$ND" init db --fingerprint-only --k 3 --docs 1e5 >/dev/null
gen() { # gen SEED N PREFIX: N far-apart fingerprints with keys PREFIX<i>
    awk -v seed="$1" -v n="$2" -v p="$3" 'BEGIN { srand(seed);
        for (i = 0; i < n; i++)
            printf "%04x%04x%04x%04x\t%s%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, p, i }'
}
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" | head -1; }
table_sum() { grep -o "\"$1\":[0-9]*" | cut -d: -f2 | awk '{s += $1} END {print s + 0}'; }

# 2000 documents seen at t=1000, 1000 at t=100000
gen 1 2000 old > old.fp
gen 2 1000 new > new.fp
expect_exit 0 "$ND" add db --k 0 --format fp --time 1000 old.fp
expect_lines 2000
expect_exit 0 "$ND" add db --k 0 --format fp --time 100000 new.fp
run "$ND" get db old7
expect_out_eq "$(printf 'old7\t%s\t0\t1000' "$(sed -n 8p old.fp | cut -f1)")"

# the first 500 old ones are seen again at t=100000: add reports them as
# duplicates of themselves and refreshes their last-seen time
head -500 old.fp > again.fp
expect_exit 0 "$ND" add db --format fp --time 100000 again.fp
expect_lines 500
expect_out_match '^dup	old0	old0	0$'
check "re-seen documents are not stored twice" "$(printf '%s\n' "$out" | grep -c '^dup	old\([0-9]*\)	old\1	0$')" -eq 500
run "$ND" get db old7 old700
expect_out_match '^old7	[0-9a-f]{16}	0	100000$'
expect_out_match '^old700	[0-9a-f]{16}	0	1000$'

expect_exit 0 "$ND" compact db
run "$ND" stats db --json
before_entries=$(printf '%s' "$out" | table_sum entries)
before_bytes=$(printf '%s' "$out" | table_sum bytes)
tables=$(printf '%s' "$out" | field tables)
before_disk=$(printf '%s' "$out" | field disk_bytes)
check "3000 documents before expiry" "$(printf '%s' "$out" | field documents)" -eq 3000
check "every table holds 3000 entries" "$before_entries" -eq $((3000 * tables))

# expire at t=150000 what was not seen for a day: the 1500 old ones not re-seen
expect_exit 0 "$ND" expire db --older-than 1d --now 150000
expect_out_eq "$(printf 'expired\t1500')"
expect_exit 1 "$ND" get db old700 old1999
expect_exit 0 "$ND" get db old0 old499 new0 new999
expect_lines 4
expect_exit 0 "$ND" verify db
# expiring again removes nothing
expect_exit 0 "$ND" expire db --older-than 1d --now 150000
expect_out_eq "$(printf 'expired\t0')"

# compact reclaims the space: fewer entries and fewer bytes in the tables
expect_exit 0 "$ND" compact db
run "$ND" stats db --json
after_entries=$(printf '%s' "$out" | table_sum entries)
after_bytes=$(printf '%s' "$out" | table_sum bytes)
check "1500 documents after expiry" "$(printf '%s' "$out" | field documents)" -eq 1500
check "1500 fingerprints after expiry" "$(printf '%s' "$out" | field fingerprints)" -eq 1500
check "table entries fell to 1500 each ($after_entries)" "$after_entries" -eq $((1500 * tables))
check "table bytes fell by more than 40% ($before_bytes -> $after_bytes)" $((after_bytes * 10)) -lt $((before_bytes * 6))
check "no fresh entries after compact" -z "$(printf '%s' "$out" | grep -o '"pending":[1-9][0-9]*')"
after_disk=$(printf '%s' "$out" | field disk_bytes)
check "compact gives the disk space back ($before_disk -> $after_disk bytes)" "$after_disk" -lt "$before_disk"
expect_exit 0 "$ND" verify db
