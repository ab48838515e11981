# test_interrupt.sh — SIGINT and SIGTERM: an interrupted command says so on
# stderr, ends by the signal (exit status 130 or 143), and leaves no
# temporary files; what it had acknowledged stays, nothing else.

# Job control: background jobs of a script otherwise ignore SIGINT (and
# neardup keeps a signal it inherited as ignored).
set -m
# wait_for SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
    local n=$(($1 * 20))
    shift
    while [ "$n" -gt 0 ]; do
        "$@" && return 0
        sleep 0.05
        n=$((n - 1))
    done
    return 1
}
# finish PID: wait for the job; its exit status in $code.
finish() { wait "$1"; code=$?; }

"$ND" init big --fingerprint-only --k 3 --docs 1e6 >/dev/null
awk 'BEGIN { srand(3); for (i = 0; i < 2000000; i++)
    printf "%08x%08x\tk%d\n", int(rand() * 4294967296), int(rand() * 4294967296), i }' > big.fp

# import: SIGINT while chunks are spilled to temporary files
"$ND" import big --chunk 100000 big.fp > imp.out 2> imp.err &
pid=$!
spilled() { compgen -G 'big/nd-load-*/*' >/dev/null; }
wait_for 60 spilled
check "the import wrote temporary files before the signal" "$?" -eq 0
kill -INT "$pid"
finish "$pid"
check "interrupted import: exit status 130 ($code)" "$code" -eq 130
check "interrupted import says so: [$(cat imp.err)]" "$(cat imp.err)" = "neardup: import: interrupted; nothing imported"
check "interrupted import: no temporary files left" -z "$(compgen -G 'big/nd-load-*')"
expect_exit 0 "$ND" stats big --json
expect_out_match '"documents":0,"fingerprints":0'
expect_exit 0 "$ND" verify big

# import --steps: SIGTERM after a step; the steps done stay
"$ND" import big --steps --chunk 100000 big.fp > imp.out 2> imp.err &
pid=$!
stepped() { "$ND" stats big --json 2>/dev/null | grep -q '"documents":[1-9]'; }
wait_for 60 stepped
check "a step was imported before the signal" "$?" -eq 0
kill -TERM "$pid"
finish "$pid"
check "SIGTERM: exit status 143 ($code)" "$code" -eq 143
check "interrupted steps say how far: [$(cat imp.err)]" \
    -n "$(grep -E '^neardup: import: interrupted; [0-9]+00000 documents imported in [0-9]+ steps? before it$' imp.err)"
imported=$(sed -n 's/.*interrupted; \([0-9]*\) documents.*/\1/p' imp.err)
expect_exit 0 "$ND" stats big --json
expect_out_match "\"documents\":$imported,"
check "--steps: no temporary files left" -z "$(compgen -G 'big/nd-load-*')"
expect_exit 0 "$ND" verify big

# add, blocked reading a pipe: the signal ends the read at once; what was
# printed is stored
"$ND" init small --fingerprint-only --k 3 --docs 1e4 >/dev/null
mkfifo feed
"$ND" add small feed > add.out 2> add.err &
pid=$!
exec 3> feed
printf '0123456789abcdef\tfirst\nfedcba9876543210\tsecond\n' >&3
sleep 0.3
kill -INT "$pid"
finish "$pid"
exec 3>&-
check "interrupted add: exit status 130 ($code)" "$code" -eq 130
check "interrupted add says how far: [$(cat add.err)]" \
    -n "$(grep -E '^neardup: add: interrupted after [0-2] new, 0 dup, 0 bad$' add.err)"
added=$(sed -n 's/.*after \([0-9]*\) new.*/\1/p' add.err)
check "add printed a line per document stored" "$(grep -c '^new' add.out)" -eq "${added:-x}"
expect_exit 0 "$ND" stats small --json
expect_out_match "\"documents\":$added,"

# add and batch, without --format, waiting for the first line (the one
# their format is inferred from): the signal ends the wait, nothing done
for cmd in "add small feed" "batch small --add feed"; do
    # shellcheck disable=SC2086
    "$ND" $cmd > wait.out 2> wait.err &
    pid=$!
    exec 3> feed
    sleep 0.3
    kill -INT "$pid"
    finish "$pid"
    exec 3>&-
    check "$cmd interrupted before its first line: exit status 130 ($code)" "$code" -eq 130
    check "$cmd interrupted before its first line says so: [$(cat wait.err)]" \
        -n "$(grep -E '^neardup: (add|batch): interrupted after 0 new, 0 dup(, 0 bad)?$' wait.err)"
done

# batch --add, blocked reading a pipe: a live pipe is answered line by
# line, so the line written before the pause is answered and stored; the
# interrupt then ends the read with nothing half-done
"$ND" batch small --add feed > batch.out 2> batch.err &
pid=$!
exec 3> feed
printf '1111111111111111\tthird\n' >&3
sleep 0.3
kill -INT "$pid"
finish "$pid"
exec 3>&-
check "interrupted batch: exit status 130 ($code)" "$code" -eq 130
check "interrupted batch says so: [$(cat batch.err)]" \
    "$(cat batch.err)" = "neardup: batch: interrupted after 1 new, 0 dup (the new ones stored)"
check "the answered line was printed" "$(grep -c '^new.third' batch.out)" -eq 1
expect_exit 0 "$ND" get small third

# commands with nothing to clean up end at once, with one line
for cmd in "query small -" "dedupe --format fp -"; do
    # shellcheck disable=SC2086
    "$ND" $cmd < feed > other.out 2> other.err &
    pid=$!
    exec 3> feed
    printf '0123456789abcdef\n' >&3
    sleep 0.3
    kill -INT "$pid"
    finish "$pid"
    exec 3>&-
    name=${cmd%% *}
    check "interrupted $name: exit status 130 ($code)" "$code" -eq 130
    check "interrupted $name says so: [$(cat other.err)]" "$(cat other.err)" = "neardup: $name: interrupted"
done

# the long whole-store calls (verify, expire, repair) stop at their next
# consistent point on SIGINT, say so and leave the store whole; their
# progress lines name each phase. A store of 400,000 documents.
"$ND" init long --fingerprint-only --k 3 --docs 1e6 >/dev/null
head -n 400000 big.fp > long.fp
"$ND" import long long.fp >/dev/null 2>&1
# stop CMD PATTERN: run CMD (its line drawn at every update), SIGINT once
# its stderr matches PATTERN; out, err and code as run sets them
stop() {
    local pattern=$1 pid
    shift
    NEARDUP_PROGRESS=all "$@" > long.out 2> long.err &
    pid=$!
    seen() { tr '\r' '\n' < long.err | grep -qE "$pattern"; }
    wait_for 60 seen
    check "$1 $2: '$pattern' shown before the signal" "$?" -eq 0
    kill -INT "$pid"
    finish "$pid"
    out=$(cat long.out)
    err=$(tr '\r' '\n' < long.err | grep -v '^ *$' | tail -n 1)
}
stop 'verify: documents: [1-9]' "$ND" verify long
check "interrupted verify: exit status 130 ($code)" "$code" -eq 130
check "interrupted verify says so: [$err]" "$err" = "neardup: verify: interrupted"
check "interrupted verify printed no verdict: [$out]" -z "$out"
check "verify's line showed its tables first" -n "$(tr '\r' '\n' < long.err | grep -E '^verify: tables: ([0-9]+) of \1 tables')"

stop 'repair: rebuilding: [1-9]' "$ND" repair long
check "interrupted repair: exit status 130 ($code)" "$code" -eq 130
check "interrupted repair says so: [$err]" "$err" = "neardup: repair: interrupted"
check "interrupted repair leaves no rebuilt copy" ! -e long.repairing
check "interrupted repair leaves the store in place" ! -e long.damaged
expect_exit 0 "$ND" verify long
NEARDUP_PROGRESS=all run "$ND" repair long
check "repair after the interrupted one: exit 0 ($code)" "$code" -eq 0
expect_out_match '^kept 400000 documents$'
check "repair's line named its phases" \
    -n "$(printf '%s' "$err" | tr '\r' '\n' | grep -E '^repair: salvaging: 1 of 1 steps')" \
    -a -n "$(printf '%s' "$err" | tr '\r' '\n' | grep -E '^repair: counting: 400000 docs')" \
    -a -n "$(printf '%s' "$err" | tr '\r' '\n' | grep -E '^repair: rebuilding: 400000 of 400000 docs')"
rm -rf long.damaged

stop 'expire: expiring: [1-9]' "$ND" expire long --older-than 1s --now 99999999999
check "interrupted expire: exit status 130 ($code)" "$code" -eq 130
check "interrupted expire says so: [$err]" "$err" = "neardup: expire: interrupted"
gone=$(sed -n 's/^expired\t\([0-9]*\)$/\1/p' long.out)
check "interrupted expire printed what it deleted: [$out]" -n "$gone"
# every document expires: the store is written anew and switched to in
# one write, so a stop before the switch deletes none
check "none expired: $gone" "${gone:-1}" -eq 0
expect_exit 0 "$ND" stats long --json
expect_out_match "\"documents\":400000,"
expect_exit 0 "$ND" verify long

# Endless input (issue 44, point 6): SIGTERM and SIGINT end every command
# that reads records within a second, whatever it reads: a FIFO that
# never delivers (blocked in read), an endless stream of valid records
# through a pipe, and /dev/zero read with --skip-bad (one endless bad
# line). The signal's status and message; a store written holds no lock.
"$ND" init ends --fingerprint-only --k 3 --docs 1e6 >/dev/null
"$ND" init rends --k 3 --docs 1e6 >/dev/null
"$ND" shard init sends --shards 2 --fingerprint-only --k 3 --docs 1e6 >/dev/null
mkfifo never.fifo
exec 8<>never.fifo # held open for writing: reads block, never end
fps() { awk 'BEGIN { for (i = 1; ; i++) printf "%016x\tk%d\n", i * 2654435761, i }'; }
texts() { awk 'BEGIN { for (i = 1; ; i++) printf "t%d\tword%d and some other words %d\n", i, i % 977, i }'; }
# catching PID: its handlers of SIGINT and SIGTERM are installed (bits 2
# and 15 of SigCgt): a signal before that ends a process that is still
# starting (a loaded machine takes a while to load the libraries) by
# default, silently
catching() {
    local m
    m=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
    [ -n "$m" ] && [ $((0x$m & 0x4002)) -eq $((0x4002)) ]
}
# ended WHAT SIG PID: PID ends by SIG within a second, saying so, and
# leaves no loader's temporary files in the stores
ended() {
    local what=$1 sig=$2 pid=$3 want=143 t0
    [ "$sig" = INT ] && want=130
    wait_for 20 catching "$pid"
    check "$what: the command started" "$?" -eq 0
    sleep 0.3
    t0=$(date +%s%N)
    kill -"$sig" "$pid"
    local n=0
    while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 40 ]; do sleep 0.05; n=$((n + 1)); done
    local ms=$((($(date +%s%N) - t0) / 1000000))
    kill -KILL "$pid" 2>/dev/null
    finish "$pid"
    check "$what: SIG$sig ended it in $ms ms (a second at most)" "$ms" -le 1000
    check "$what: exit status $code, want $want" "$code" -eq "$want"
    check "$what: says it was interrupted [$(head -c 200 ends.err)]" \
        -n "$(grep -E 'interrupted|terminated' ends.err)"
    check "$what: no temporary files left" -z "$(compgen -G '*ends/nd-load-*'; compgen -G 'sends/shard-*/nd-load-*')"
}
# endless NAME FORMAT CMD...: CMD (its input last) on each endless input
endless() {
    local name=$1 format=$2 sig=TERM skip=()
    shift 2
    "$@" never.fifo > ends.out 2> ends.err &
    ended "$name, a FIFO that never delivers" TERM $!
    "$@" never.fifo > ends.out 2> ends.err &
    ended "$name, a FIFO that never delivers" INT $!
    if [ "$format" = fp ]; then fps | "$@" - > ends.out 2> ends.err &
    else texts | "$@" - > ends.out 2> ends.err & fi
    ended "$name, an endless pipe" INT $!
    if "$1" "$2" --help 2>&1 | grep -q -- --skip-bad || "$1" "$2" "$3" --help 2>&1 | grep -q -- --skip-bad; then
        "$@" --skip-bad /dev/zero > ends.out 2> ends.err &
        ended "$name, /dev/zero with --skip-bad" TERM $!
    fi
}
endless "add" fp "$ND" add ends --format fp
endless "add of texts" tsv "$ND" add rends --format tsv
endless "import" fp "$ND" import ends --format fp
endless "import --steps" fp "$ND" import ends --steps --format fp
endless "batch" fp "$ND" batch ends --format fp
endless "batch --add" fp "$ND" batch ends --add --format fp
endless "dedupe" tsv "$ND" dedupe --format tsv
endless "fingerprint" tsv "$ND" fingerprint --format tsv
endless "shard import" fp "$ND" shard import sends --format fp
# query reads fingerprints from stdin only
"$ND" query ends - < never.fifo > ends.out 2> ends.err &
ended "query -, a FIFO that never delivers" TERM $!
fps | cut -f1 | "$ND" query ends - > ends.out 2> ends.err &
ended "query -, an endless pipe" INT $!
exec 8>&-
expect_exit 0 "$ND" compact ends
expect_exit 0 "$ND" verify ends
expect_exit 0 "$ND" verify rends
for s in sends/shard-*; do expect_exit 0 "$ND" verify "$s"; done
set +m
