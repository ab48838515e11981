# test_synced_loss.sh — a durable acknowledgement is never silently lost
# (issue 44, point 3). Before: after `add --sync` of 3,000 documents and
# kill -9, the store opened with 0 documents (every log deleted), 1,508
# (the log cut in half), 2,961 (a record header zeroed in the last block)
# or all but 2 (a length field changed), and `verify` said ok. Now every
# synced write records its sequence number in SYNCED, and an open that
# recovers to less refuses (exit 2, `corrupt data`, the loss named) until
# `repair` accepts the loss and counts the documents gone. Healthy crashes,
# backups and non-sync writes (which promise nothing across kill -9) open.
damage=$(dirname "$src")/synced_logdamage.py
python3 -c "
import random
r = random.Random(3)
for i in range(3000): print('%016x\tk%d' % (r.getrandbits(64), i))" > fps.txt
printf '0123456789abcdef\tnew1\n' > one.txt

# killed_writer DB [--sync]: add every line of fps.txt through a writer that
# stays open, wait for its 3,000 acknowledgements, kill -9 it: what it
# wrote is in the log only.
killed_writer() {
    local db=$1; shift
    "$ND" init "$db" --fingerprint-only --k 3 --docs 1e4 >/dev/null
    rm -f in.fifo; mkfifo in.fifo
    "$ND" add "$db" "$@" < in.fifo > acks.txt 2>/dev/null &
    local pid=$!
    exec 3>in.fifo
    cat fps.txt >&3
    for _ in $(seq 300); do [ "$(wc -l < acks.txt)" -ge 3000 ] && break; sleep 0.05; done
    check "writer acknowledged $(wc -l < acks.txt) of 3000" "$(wc -l < acks.txt)" -eq 3000
    kill -9 "$pid"; wait "$pid" 2>/dev/null
    exec 3>&-
}
docs_of() { "$ND" stats "$1" --json 2>/dev/null | sed -n 's/.*"documents":\([0-9]*\),.*/\1/p'; }
log_of() { ls "$1"/*.log | while read -r f; do [ -s "$f" ] && echo "$f"; done | tail -n 1; }

killed_writer synced --sync
check "the killed writer left its writes in the log" -n "$(log_of synced)"

# refuses WHAT: open, stats, verify and add of d exit 2 naming the loss
refuses() {
    local c
    for c in stats verify get; do
        run "$ND" $c d k1
        [ "$c" = get ] || run "$ND" $c d
        check "$1: $c exit $code, want 2 :: $err" "$code" -eq 2
        check "$1: $c does not name the loss :: $err" \
            -n "$(printf '%s\n' "$err" | grep 'corrupt data' | grep -E 'acknowledged writes up to sequence [0-9]+ are missing|write-ahead log .* is missing')"
    done
    STDIN=one.txt run "$ND" add d
    check "$1: add exit $code, want 2 :: $err" "$code" -eq 2
    run "$ND" stats d
    check "$1: refused again after add (exit $code)" "$code" -eq 2
}
# repaired WHAT: repair recovers what is left and counts the loss
repaired() {
    run "$ND" repair d
    check "$1: repair exit $code :: $err" "$code" -eq 0
    local kept dropped of
    kept=$(docs_of d)
    dropped=$(printf '%s\n' "$out$err" | sed -n 's/.*dropped \([0-9]*\) documents (of \([0-9]*\) found).*/\1/p')
    of=$(printf '%s\n' "$out$err" | sed -n 's/.*dropped \([0-9]*\) documents (of \([0-9]*\) found).*/\2/p')
    check "$1: repair found $of, want 3000 acknowledged :: $out $err" "${of:-0}" -eq 3000
    check "$1: kept $kept + dropped $dropped != 3000" "$((${kept:-0} + ${dropped:-0}))" -eq 3000
    check "$1: repair dropped nothing :: $out $err" "${dropped:-0}" -gt 0
    [ -n "${SYNCED_LOSS_VERBOSE:-}" ] && echo "$1: kept $kept, dropped $dropped of $of"
    run "$ND" verify d
    check "$1: verify after repair exit $code :: $err" "$code" -eq 0
    rm -rf d d.damaged
}

for how in deleted all-deleted half boundary zero-header length; do
    rm -rf d; cp -a synced d
    log=$(log_of d)
    case $how in
    deleted) rm -f "$log" ;;
    all-deleted) rm -f d/*.log ;;
    *) python3 "$damage" "$log" "$how" >/dev/null ;;
    esac
    refuses "$how"
    repaired "$how"
done

# healthy: every acknowledged document, and the next clean close leaves
# no record (nothing left to check)
rm -rf d; cp -a synced d
check "healthy crash: $(docs_of d) documents, want 3000" "$(docs_of d)" = 3000
run "$ND" verify d
check "healthy crash: verify exit $code :: $err" "$code" -eq 0
STDIN=one.txt run "$ND" add d --sync
check "healthy crash: add exit $code :: $err" "$code" -eq 0
check "a clean close left SYNCED" ! -e d/SYNCED
rm -f d/*.log
check "healthy, closed, logs deleted: $(docs_of d) documents, want 3001" "$(docs_of d)" = 3001

# a backup of the crashed store (a reader's checkpoint) opens whole
rm -rf d bk; cp -a synced d
run "$ND" backup d bk
check "backup exit $code :: $err" "$code" -eq 0
check "backup of the crashed store: $(docs_of bk) documents" "$(docs_of bk)" = 3000
run "$ND" verify bk
check "backup verify exit $code :: $err" "$code" -eq 0
STDIN=one.txt run "$ND" add bk
check "backup add exit $code :: $err" "$code" -eq 0

# non-sync writes promise nothing across kill -9: a deleted log opens
killed_writer plain
rm -f plain/*.log
run "$ND" stats plain
check "non-sync, log deleted: stats exit $code :: $err" "$code" -eq 0
STDIN=one.txt run "$ND" add plain
check "non-sync, log deleted: add exit $code :: $err" "$code" -eq 0
