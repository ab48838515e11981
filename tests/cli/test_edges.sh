# test_edges.sh — the CLI's rough edges (issue 45, point 7), one block a
# point: where a per-key result goes (stdout, for get as for delete), the
# busy store's message, shard's JSON and option order, "did you mean" and
# `help COMMAND`, and the warning for a low --min-resemblance.

# 1. get and delete: a key not stored is a result line on stdout, exit 1
"$ND" init db --k 3 --docs 1e4 >/dev/null
printf '0123456789abcdef\there\n' > one.fp
"$ND" import db --time 1000 one.fp 2>/dev/null
expect_exit 1 "$ND" get db here gone
expect_out_eq "$(printf 'here\t0123456789abcdef\t0\t1000\nmissing\tgone')"
check "get: nothing on stderr for a missing key [$err]" -z "$err"
expect_exit 1 "$ND" get db --json gone here
expect_out_eq "$(printf '{"key":"gone","missing":true}\n{"key":"here","fp":"0123456789abcdef","score":0,"time":1000}')"
check "get --json: nothing on stderr [$err]" -z "$err"
expect_exit 1 "$ND" delete db gone
expect_out_eq "$(printf 'missing\tgone')"
check "delete: nothing on stderr [$err]" -z "$err"

# 7. --min-resemblance below 0.8: accepted, with a warning on stderr
expect_exit 0 "$ND" init low --min-resemblance 0.5
expect_out_match '^created low: .*, min resemblance 0.5$'
expect_err_match '^neardup: init: warning: --min-resemblance 0.5 is below 0.8, where the band keys stop finding every candidate; choose 0.8 or more'
check "init: one warning line" "$(printf '%s\n' "$err" | wc -l)" -eq 1
expect_exit 0 "$ND" init fine --min-resemblance 0.8
check "init 0.8: no warning [$err]" -z "$err"
expect_exit 0 "$ND" init dflt --resemblance
check "init --resemblance: no warning [$err]" -z "$err"
expect_exit 0 "$ND" shard init lowst --shards 2 --min-resemblance 0.7
expect_err_match '^neardup: shard init: warning: --min-resemblance 0.7 is below 0.8'
