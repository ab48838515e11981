# bash completion for neardup -*- shell-script -*-
#
# Commands and each command's options come from the tool's own help
# (`neardup --help`, `neardup COMMAND --help`), so they cannot drift from
# it; values are completed for --format and --features, file names
# elsewhere. Installed as share/bash-completion/completions/neardup.

_neardup_commands()
{
    "$1" --help 2>/dev/null | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 } f && /^$/ { f = 0 }'
}

_neardup_options()
{
    # every --option named in the command's usage, without its value
    "$1" "$2" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u
}

_neardup()
{
    local cur prev tool cmd i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    tool=${COMP_WORDS[0]}
    cmd=
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [ -z "$cmd" ]; then
        case $cur in
        -*) mapfile -t COMPREPLY < <(compgen -W '--help --version' -- "$cur") ;;
        *) mapfile -t COMPREPLY < <(compgen -W "$(_neardup_commands "$tool")" -- "$cur") ;;
        esac
        return 0
    fi
    case $prev in
    --format)
        local formats='fp jsonl tsv files warc dump'
        case $cmd in
        dump) formats='tsv jsonl' ;;
        fingerprint) formats='files jsonl tsv warc' ;;
        esac
        mapfile -t COMPREPLY < <(compgen -W "$formats" -- "$cur")
        return 0
        ;;
    --features)
        mapfile -t COMPREPLY < <(compgen -W 'words shingles shingles:3 chars:4' -- "$cur")
        return 0
        ;;
    --out)
        [ "$cmd" = dedupe ] && { mapfile -t COMPREPLY < <(compgen -W 'clusters pairs keep drop' -- "$cur"); return 0; }
        ;;
    --keep)
        [ "$cmd" = dedupe ] && { mapfile -t COMPREPLY < <(compgen -W 'score longest' -- "$cur"); return 0; }
        ;;
    esac
    if [ "$cmd" = shard ] && [ "$COMP_CWORD" -eq $((i + 1)) ]; then
        mapfile -t COMPREPLY < <(compgen -W 'init split import info which' -- "$cur")
        return 0
    fi
    case $cur in
    -*) mapfile -t COMPREPLY < <(compgen -W "$(_neardup_options "$tool" "$cmd") --help" -- "$cur") ;;
    *) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    esac
    return 0
}
complete -o filenames -F _neardup neardup
