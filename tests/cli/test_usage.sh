# test_usage.sh — the CLI without sharp edges: one-line usage errors, one
# exit-code rule stated by every command, durations that need a unit,
# `expire --dry-run`, `init` that never writes beside a user's files,
# plurals, and the hint for a fingerprint line with a space for a TAB.

commands=$("$ND" --help | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 }')
check "--help lists the commands" "$(printf '%s\n' "$commands" | wc -l)" -ge 19
expect_exit 0 "$ND" --help
expect_out_match '^Exit status: 0 success; 1 bad usage or input'
for c in $commands; do
    # the rule, in every command's help
    expect_exit 0 "$ND" "$c" --help
    expect_out_match '^Exit status: 0 success; 1 bad usage or input'
    expect_out_match '130 interrupted'
    # an unknown option: one line naming it, exit 1, never the help
    expect_exit 1 "$ND" "$c" --bogus
    expect_out_eq ""
    check "$c --bogus: one line on stderr" "$(printf '%s\n' "$err" | wc -l)" -eq 1
    if [ "$c" = shard ]; then
        expect_err_match "^neardup: shard: unknown subcommand '--bogus' .*; see 'neardup shard --help'$"
    else
        expect_err_match "^neardup: $c: unrecognized option '--bogus'; see 'neardup $c --help'$"
    fi
done
expect_exit 1 "$ND"
expect_err_match "^neardup: no command given; see 'neardup --help'$"
check "no command: one line" "$(printf '%s\n' "$err" | wc -l)" -eq 1
expect_exit 1 "$ND" frobnicate
expect_err_match "^neardup: unknown command 'frobnicate'; see 'neardup --help'$"
expect_exit 1 "$ND" import db --format
expect_err_match "^neardup: import: option '--format' needs a value; see 'neardup import --help'$"
expect_exit 1 "$ND" import db --json=yes in.fp
expect_err_match "^neardup: import: option '--json' takes no value; see"
expect_exit 1 "$ND" import db --s in.fp
expect_err_match "^neardup: import: option '--s' is ambiguous; see"
expect_exit 1 "$ND" import db
expect_err_match "^neardup: import: expected a database path and at least one input; see 'neardup import --help'$"
expect_exit 1 "$ND" shard init --bogus st
expect_err_match "^neardup: shard init: unrecognized option '--bogus'; see 'neardup shard init --help'$"
expect_exit 1 "$ND" expire db
expect_err_match "^neardup: expire: --older-than AGE is required; see 'neardup expire --help'$"
expect_exit 1 "$ND" distance 0000000000000000
check "distance: one line" "$(printf '%s\n' "$err" | wc -l)" -eq 1

# exit 2 for every database that cannot be opened, whatever the cause
echo x > afile
mkdir notdb
for db in missing afile notdb; do
    expect_exit 2 "$ND" stats "$db"
    expect_err_match "^neardup: cannot open database '$db'"
    expect_exit 2 "$ND" query "$db" 0000000000000000
    expect_exit 2 "$ND" dump "$db"
    expect_exit 2 "$ND" add "$db" /dev/null
done
check "the file is untouched" "$(cat afile)" = x

# init: a new path or an empty directory, never beside a user's files
mkdir mine
echo "my notes" > mine/notes.txt
expect_exit 2 "$ND" init mine --fingerprint-only
expect_err_match "^neardup: init: 'mine' already exists and is not empty \(a database is created in a new or empty directory\)$"
check "init wrote nothing beside the user's file" "$(ls mine)" = notes.txt
expect_exit 2 "$ND" init afile --fingerprint-only
expect_err_match "^neardup: init: 'afile' already exists and is not a directory$"
check "init left the file alone" "$(cat afile)" = x
mkdir empty
expect_exit 0 "$ND" init empty --fingerprint-only --k 3
expect_out_match '^created empty: k=3'
expect_exit 2 "$ND" init empty --fingerprint-only
expect_err_match "already exists"

# plurals in the summaries
printf '0123456789abcdef\tone\n' > one.fp
expect_exit 0 "$ND" import empty --time 1000 one.fp
expect_err_match '^neardup: import: 1 document in [0-9.]+ s \([0-9]+ docs/s\), 0 bad; the database holds 1 document, 1 fingerprint$'
printf 'fedcba9876543210\ttwo\nfedcba9876543210\tthree\n' > two.fp
expect_exit 0 "$ND" import empty --time 2000 two.fp
expect_err_match '^neardup: import: 2 documents in .*; the database holds 3 documents, 2 fingerprints$'

# a fingerprint line with a space instead of a TAB: a hint, not "too long"
printf '0123456789abcdef doc-with-space\n' > space.fp
expect_exit 1 "$ND" add empty space.fp
expect_err_match "space.fp:1: fingerprint '0123456789abcdef doc-with-space': expected HEX16<TAB>KEY; found a space after the fingerprint$"
expect_exit 1 "$ND" import empty space.fp
expect_err_match 'found a space after the fingerprint'
printf '0123456789abcdef0\n' > long.fp
expect_exit 1 "$ND" add empty long.fp
expect_err_match 'too long \(need exactly 16 hex digits\)'

# durations need a unit; times are whole seconds
expect_exit 1 "$ND" expire empty --older-than 90
expect_err_match "^neardup: expire: --older-than needs a unit: 90s, 90m, 90h, 90d or 90w \(seconds, minutes, hours, days, weeks\); got '90'; see 'neardup expire --help'$"
expect_exit 1 "$ND" expire empty --older-than 90x
expect_err_match "must be like 90d, 12h, 30m, 45s, 2w; got '90x'"
expect_exit 0 "$ND" get empty one two three
expect_lines 3
expect_exit 1 "$ND" add empty --time 5d one.fp
expect_err_match "^neardup: add: --time must be seconds since the epoch, got '5d'; see 'neardup add --help'$"
expect_exit 1 "$ND" import empty --time 5d one.fp
expect_err_match "^neardup: import: --time must be seconds since the epoch, got '5d'; see 'neardup import --help'$"

# expire --dry-run: what would go (documents and count), nothing deleted;
# then expire deletes exactly those. now = 2500, AGE 1000s: before 1500.
expect_exit 0 "$ND" expire empty --older-than 1000s --now 2500 --dry-run
expect_out_eq "$(printf 'one\t0123456789abcdef\t0\t1000\nwould-expire\t1')"
expect_exit 0 "$ND" expire empty --older-than 1000s --now 2500 --dry-run --json
expect_out_eq "$(printf '{"id":"one","fp":"0123456789abcdef","score":0,"time":1000}\n{"would_expire":1}')"
expect_exit 0 "$ND" get empty one two three
expect_lines 3
expect_exit 1 "$ND" expire empty --older-than 1000s --dry-run --compact
expect_err_match 'exclude each other'
expect_exit 0 "$ND" expire empty --older-than 1000s --now 2500
expect_out_eq "$(printf 'expired\t1')"
expect_exit 1 "$ND" get empty one
expect_exit 0 "$ND" get empty two three
expect_lines 2
expect_exit 0 "$ND" expire empty --older-than 1000s --now 2500 --dry-run
expect_out_eq "$(printf 'would-expire\t0')"
# 16 minutes before 3000 is after 2000: both remaining would go
expect_exit 0 "$ND" expire empty --older-than 16m --now 3000 --dry-run
expect_lines 3
expect_out_match '^would-expire	2$'
