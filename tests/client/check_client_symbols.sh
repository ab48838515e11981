#!/bin/bash
# check_client_symbols.sh — libneardup-client's interface is its header.
#
# usage: check_client_symbols.sh LIBNEARDUP_CLIENT_SO NEARDUP_CLIENT_H INCLUDE_DIR  (CC)
#
# Fails when the shared library exports a symbol that is not a function
# of neardup_client.h (nd_client_* and nd_fleet_*: none of libcurl's,
# jansson's or an internal ncl_*), lacks one the header declares, or
# links libneardup (the client never needs RocksDB).
set -u
lib=$1 header=$2 incdir=$3
cc=${CC:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
    grep -Ev '^(__asan|__odr_asan|__ubsan|__sanitizer|__lsan|_init$|_fini$)' | sort -u >"$tmp/exported"
# the declarations of neardup_client.h, not of the neardup.h it includes
$cc -E -P -x c -I"$incdir" "$header" | grep -v '^[[:space:]]*#' | tr '\n' ' ' | tr ';' '\n' |
    grep -Ev '^[[:space:]]*typedef' |
    grep -oE '(^|[^A-Za-z0-9_])nd_(client|fleet)_[a-z0-9_]+[[:space:]]*\(' |
    sed -E 's/^[^n]*//; s/[[:space:]]*\($//' | sort -u >"$tmp/declared"
n=$(wc -l <"$tmp/declared")
[ "$n" -ge 30 ] || { echo "only $n functions found in $header: the parser is broken"; exit 1; }
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
[ -z "$extra" ] || { echo "exported but not in neardup_client.h:"; echo "$extra"; fail=1; }
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
[ -z "$missing" ] || { echo "declared but not exported:"; echo "$missing"; fail=1; }
if readelf -d "$lib" | grep -q 'NEEDED.*libneardup\.so'; then
    echo "$lib links libneardup"; fail=1
fi
[ "$fail" = 0 ] && echo "ok: $n functions of neardup_client.h exported, nothing else"
exit "$fail"
