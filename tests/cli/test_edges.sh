# test_edges.sh — the CLI's rough edges (issue 45, point 7), one block a
# point: where a per-key result goes (stdout, for get as for delete), the
# busy store's message, shard's JSON and option order, "did you mean" and
# `help COMMAND`, and the warning for a low --min-resemblance.

# 1. get and delete: a key not stored is a result line on stdout, exit 1
"$ND" init db --fingerprint-only --k 3 --docs 1e4 >/dev/null
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

# 3. shard: --json on every subcommand with a result; options anywhere
expect_exit 0 "$ND" shard split db st --shards 3 --json
expect_out_eq '{"source":"db","path":"st","documents":1,"shards":3,"k":3,"tables":4}'
expect_exit 0 "$ND" shard split db st2 --shards 3
expect_out_eq 'split db into st2: 1 document over 3 shards (k=3, 4 tables)'
expect_exit 0 "$ND" shard which st here --json
s=$("$ND" shard which st here | cut -f2)
expect_out_eq "{\"key\":\"here\",\"shard\":$s,\"path\":\"st/shard-00$s\"}"
expect_exit 0 "$ND" shard which --json st here
expect_out_eq "{\"key\":\"here\",\"shard\":$s,\"path\":\"st/shard-00$s\"}"
expect_exit 0 "$ND" shard which st here
expect_out_eq "$(printf 'here\t%s\tst/shard-00%s' "$s" "$s")"
expect_lines 1
# after `--` an argument starting with '-' is a key
expect_exit 0 "$ND" shard which st -- --json
expect_out_match '^--json	[0-2]	st/shard-00[0-2]$'
expect_exit 0 "$ND" shard init sj --shards 2 --k 3 --docs 1e4 --fingerprint-only --json
expect_out_match '^\{"path":"sj","shards":2,"k":3,"tables":[0-9]+,"fingerprint":"fp2;[^"]*"\}$'
expect_exit 0 "$ND" shard import sj one.fp --json
expect_out_eq '{"path":"sj","imported":1,"bad":0,"shards":2}'
expect_exit 0 "$ND" shard info sj --json
expect_out_match '"total":1\}$'
# an option a subcommand does not take is refused, not ignored
expect_exit 1 "$ND" shard info sj --html
expect_err_match "^neardup: shard info: unrecognized option '--html'; see 'neardup shard info --help'$"
expect_exit 1 "$ND" shard which st here --shards 2
expect_err_match "unrecognized option '--shards'"

# 5. "did you mean" for a mistyped command; help COMMAND is its help
expect_exit 1 "$ND" imprt db in.fp
expect_err_match "^neardup: unknown command 'imprt' \(did you mean 'import'\?\); see 'neardup --help'$"
expect_exit 1 "$ND" shrad
expect_err_match "\(did you mean 'shard'\?\)"
expect_exit 1 "$ND" dedup
expect_err_match "\(did you mean 'dedupe'\?\)"
expect_exit 1 "$ND" qeury
expect_err_match "\(did you mean 'query'\?\)"
# several at the same distance: all named; far from every one: none
expect_exit 1 "$ND" dupe
expect_err_match "^neardup: unknown command 'dupe' \(did you mean 'dump' or 'dedupe'\?\); see 'neardup --help'$"
expect_exit 1 "$ND" frobnicate
expect_err_match "^neardup: unknown command 'frobnicate'; see 'neardup --help'$"
expect_exit 1 "$ND" x
expect_err_match "^neardup: unknown command 'x'; see 'neardup --help'$"
import_help=$("$ND" import --help)
expect_exit 0 "$ND" help import
expect_out_eq "$import_help"
expect_exit 0 "$ND" help shard
expect_out_eq "$("$ND" shard --help)"
expect_exit 0 "$ND" help
expect_out_eq "$("$ND" --help)"
expect_exit 1 "$ND" help imprt
expect_err_match "^neardup: unknown command 'imprt' \(did you mean 'import'\?\)"

# 2. a busy store: who holds it, plainly (pid of the writer), no RocksDB text
mkfifo hold
"$ND" add db --format fp hold >/dev/null 2>&1 &
holder=$!
exec 7>hold   # the writer keeps the fifo open, so `add` waits on it
for _ in $(seq 50); do   # until add has the store
    "$ND" delete db gone >/dev/null 2>&1
    [ $? -eq 2 ] && break
    sleep 0.1
done
expect_exit 2 "$ND" delete db gone
expect_err_match "^neardup: cannot open database 'db': database is busy: db is open for writing by another process \(pid $holder\)$"
check "no RocksDB text in the message [$err]" -z "$(printf '%s' "$err" | grep -iE 'lock|IO error|Resource')"
expect_exit 0 "$ND" get db here   # readers are fine
exec 7>&-
wait $holder
