# examples_lib.sh — run a page's shell examples, sourced after run.sh by
# test_serve.sh and test_serve_fleet.sh.
#
# run_examples FILE: every "$ " line of FILE is run (through the caller's
# examples_url CMD, which prints CMD with the page's URLs replaced by the
# servers' own) and its output compared with the lines that follow it.
run_examples() {
    local cmd="" want="" line
    _example_done() {
        [ -n "$cmd" ] || return 0
        run bash -c "$(examples_url "$cmd")"
        if [ "$out" == "$want" ]; then _pass; else _fail "example: $cmd
  got:  [$out]
  want: [$want]"; fi
    }
    while IFS= read -r line; do
        if [ "${line:0:2}" == "\$ " ]; then
            _example_done
            cmd=${line:2} want=""
        else
            want=${want:+$want$'\n'}$line
        fi
    done <"$1"
    _example_done
}
