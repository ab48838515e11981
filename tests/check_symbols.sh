#!/bin/bash
# check_symbols.sh — the shared library's interface is the public header.
#
# usage: check_symbols.sh LIBNEARDUP_SO NEARDUP_H   (CC: the C compiler)
#
# Fails when the dynamic symbol table of the shared library
#  - defines a symbol that does not start with nd_ (an internal function
#    or a dependency's, e.g. st_open, db_commit, cmp_run_decode);
#  - defines an nd_ symbol the header does not declare (an internal one
#    such as nd_err_set);
#  - lacks a function the header declares (a public function compiled
#    hidden: the library is built with hidden visibility and the header
#    marks its declarations visible);
# or when the soname's version is not the header's ND_ABI_VERSION.
# The header is read after the preprocessor, so comments and macros
# cannot confuse it.
set -u
lib=$1
header=$2
cc=${CC:-cc}
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Exported (defined) dynamic symbols, names only; ASan/UBSan builds add
# their own instrumentation symbols, which are not ours to judge.
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
    grep -Ev '^(__asan|__odr_asan|__ubsan|__sanitizer|__lsan)' | sort -u >"$tmp/exported" ||
    { echo "check_symbols: nm failed on $lib"; exit 1; }

# Declared functions: every statement of the preprocessed header that is
# not a typedef and names an nd_ identifier followed by "(".
$cc -E -P -x c "$header" >"$tmp/pp" ||
    { echo "check_symbols: cannot preprocess $header"; exit 1; }
grep -v '^[[:space:]]*#' "$tmp/pp" | tr '\n' ' ' | tr ';' '\n' |
    grep -Ev '^[[:space:]]*typedef' |
    grep -oE '(^|[^A-Za-z0-9_])nd_[a-z0-9_]+[[:space:]]*\(' |
    sed -E 's/^[^n]*//; s/[[:space:]]*\($//' | sort -u >"$tmp/declared"

n_declared=$(wc -l <"$tmp/declared")
n_exported=$(wc -l <"$tmp/exported")
if [ "$n_declared" -lt 50 ]; then
    echo "check_symbols: only $n_declared functions found in $header: the parser is broken"
    exit 1
fi

bad=$(grep -v '^nd_' "$tmp/exported")
if [ -n "$bad" ]; then
    echo "exported symbols without the nd_ prefix ($(echo "$bad" | wc -l)):"
    echo "$bad" | sed 's/^/  /'
    fail=1
fi
extra=$(comm -23 "$tmp/exported" "$tmp/declared" | grep '^nd_')
if [ -n "$extra" ]; then
    echo "exported nd_ symbols that neardup.h does not declare:"
    echo "$extra" | sed 's/^/  /'
    fail=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$missing" ]; then
    echo "functions declared in neardup.h but not exported:"
    echo "$missing" | sed 's/^/  /'
    fail=1
fi

abi=$($cc -E -dM -x c "$header" | awk '$2 == "ND_ABI_VERSION" {print $3}')
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [ -z "$abi" ] || [ "$soname" != "libneardup.so.$abi" ]; then
    echo "soname '$soname' does not match ND_ABI_VERSION '$abi' (meson.build: abi_version)"
    fail=1
fi

[ "$fail" = 0 ] && echo "ok: $n_exported symbols exported, all nd_, exactly the $n_declared" \
    "functions of neardup.h; soname $soname"
exit "$fail"
