# test_man_completion.sh — the man page (built from the tool's help) names
# every command and renders without warnings; the bash completion
# completes commands, options and option values.
# Needs $MANPAGE (build/cli/neardup.1) and $COMPLETION (cli/neardup.bash).

commands=$("$ND" --help | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 }')
check "the man page exists" -s "$MANPAGE"
for c in $commands; do
    check "the man page has a section for $c" -n "$(grep -x "\.SS $c" "$MANPAGE")"
    # and the command's usage line, from its own --help
    usage_line=$("$ND" "$c" --help | head -1 | sed 's/-/\\-/g')
    check "the man page holds the usage of $c" -n "$(grep -F -x -- "$usage_line" "$MANPAGE")"
done
check "the man page states the exit-code rule" -n "$(grep -F '130 interrupted' "$MANPAGE")"
if command -v groff >/dev/null; then
    run groff -man -ww -z -Tutf8 "$MANPAGE"
    check "groff renders the man page without warnings: [$err]" -z "$err"
fi

# complete WORD...: the completions of the last word (COMPREPLY, sorted)
complete_words() {
    bash -c '
        source "$0"
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        _neardup
        printf "%s\n" "${COMPREPLY[@]}" | sort' "$COMPLETION" "$ND" "$@"
}
run complete_words im
expect_out_eq import
run complete_words d
expect_out_eq "$(printf 'dedupe\ndelete\ndistance\ndump')"
run complete_words ""
check "every command completes from nothing" "$(printf '%s\n' "$out" | wc -l)" -eq "$(printf '%s\n' "$commands" | wc -l)"
run complete_words import db --for
expect_out_eq --format
run complete_words import db --format j
expect_out_eq jsonl
run complete_words dump db --format ""
expect_out_eq "$(printf 'jsonl\ntsv')"
run complete_words expire db --d
expect_out_eq --dry-run
run complete_words add db --pro
expect_out_eq --progress
run complete_words shard i
expect_out_eq "$(printf 'import\ninfo\ninit')"
run complete_words shard which st --
expect_out_eq "$(printf -- '--help\n--json')"
run complete_words shard split db st --
expect_out_eq "$(printf -- '--chunk\n--docs\n--help\n--json\n--shards')"
# the help's prose names options of other commands: not offered
run complete_words import db --min
expect_out_eq ""
run complete_words dedupe --keep ""
expect_out_eq "$(printf 'first\nlongest\nscore')"
run complete_words add db --format ""
expect_out_eq "$(printf 'fp\njsonl\ntsv')"
run complete_words init --features sh
expect_out_eq "$(printf 'shingles\nshingles:3')"
touch somefile.fp
run complete_words add db some
expect_out_eq somefile.fp

# Completion offers exactly what each command (and shard subcommand)
# parses: every option offered is taken, every option taken is offered.
# Candidates: every option of every table and every --word of every help;
# an option is taken when the command does not call it unrecognized
# (`CMD --opt` alone: a usage error of another kind, or "needs a value").
subs=$("$ND" __complete shard)
check "shard lists its subcommands" "$(printf '%s\n' $subs | tr '\n' ' ')" = "init split import info which "
targets=$(for c in $commands; do [ "$c" = shard ] && for s in $subs; do echo "shard:$s"; done || echo "$c"; done)
cands=$( { for t in $targets; do "$ND" __complete ${t/:/ }; done
           for c in $commands; do "$ND" "$c" --help; done | grep -o -- '--[a-z][a-z-]*'; } | sort -u)
check "candidates found" "$(printf '%s\n' "$cands" | wc -l)" -ge 30
for t in $targets; do
    offered=$("$ND" __complete ${t/:/ } | sort)
    check "$t offers options" -n "$offered"
    # bash offers what __complete prints (shard: for the subcommand typed)
    if [ "${t%%:*}" = shard ]; then run complete_words shard "${t#*:}" --; else run complete_words "$t" db --; fi
    check "$t: bash completes its table [$out]" "$out" = "$offered"
    nl=$'\n'
    for o in $cands; do
        e=$("$ND" ${t/:/ } "$o" 2>&1 >/dev/null </dev/null)
        taken=1
        [[ $e == *"unrecognized option '$o'"* || $e == *"option '$o' is ambiguous"* ]] && taken=0
        if [[ "$nl$offered$nl" == *"$nl$o$nl"* ]]; then
            check "$t offers $o, which it refuses: $e" "$taken" -eq 1
        elif [[ "$nl$offered" != *"$nl$o"* ]]; then
            # (an abbreviation of an offered option is taken, not offered)
            check "$t takes $o, which completion does not offer" "$taken" -eq 0
        fi
    done
done

# resemblance stores: the options complete, the page explains them
run complete_words init db --min
expect_out_eq --min-resemblance
run complete_words init db --res
expect_out_eq --resemblance
run complete_words shard init dir --min
expect_out_eq --min-resemblance
run complete_words shard init dir --fing
expect_out_eq --fingerprint-only
check "the man page describes resemblance stores" \
    -n "$(grep -F 'verifies by resemblance' "$MANPAGE")"
check "the man page shows init --min-resemblance" \
    -n "$(grep -F -- '\-\-min\-resemblance R' "$MANPAGE")"
