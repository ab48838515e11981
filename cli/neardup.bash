# bash completion for neardup -*- shell-script -*-
#
# Commands and each command's options come from the tool itself: the
# hidden `neardup __complete` lists the commands, `neardup __complete
# COMMAND [SUB]` the long options COMMAND (or shard's SUB) parses, printed
# from its own option table, so completion offers exactly what the command
# accepts. Values are completed for --format, --features, --out and
# --keep, file names elsewhere. Installed as
# share/bash-completion/completions/neardup.

_neardup_commands()
{
    "$1" __complete 2>/dev/null
}

_neardup_options()
{
    # the command's option table (shard: its subcommand's, $3)
    "$1" __complete "$2" ${3:+"$3"} 2>/dev/null
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
        add) formats='fp jsonl tsv' ;;
        dedupe | shard) formats='fp jsonl tsv files warc' ;;
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
        [ "$cmd" = dedupe ] && { mapfile -t COMPREPLY < <(compgen -W 'first score longest' -- "$cur"); return 0; }
        ;;
    esac
    local sub=
    if [ "$cmd" = shard ]; then
        if [ "$COMP_CWORD" -eq $((i + 1)) ]; then
            mapfile -t COMPREPLY < <(compgen -W "$("$tool" __complete shard 2>/dev/null)" -- "$cur")
            return 0
        fi
        sub=${COMP_WORDS[i + 1]}
    fi
    case $cur in
    -*) mapfile -t COMPREPLY < <(compgen -W "$(_neardup_options "$tool" "$cmd" "$sub")" -- "$cur") ;;
    *) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    esac
    return 0
}
complete -o filenames -F _neardup neardup
