#!/bin/bash
# test_install.sh BUILD SRC SANITIZE [CLIENT] — an installed neardup works without
# LD_LIBRARY_PATH: `meson install --destdir` into a temporary tree, run the
# installed `neardup --help` (and `neardup-mpi --help` when built), check
# that neardup.pc, the man page and the bash completion land where
# docs/c-api.md says, then build its C example (tests/readme_example.c)
# with pkg-config against the installed tree, dynamically and statically,
# and run it (tests/readme_example.sh checks its output); --cflags must
# name the include directory alone. CLIENT "client" (the build made
# libneardup-client): its header and neardup-client.pc are installed too,
# and tests/install/client_install.c builds with pkg-config against them
# and runs (a call to a url no server listens on: ND_CLIENT_ECONNECT);
# "noclient" (no libcurl): that part is skipped with a notice.
set -euo pipefail
build=$1 src=$2 sanitize=${3:-none} client=${4:-noclient}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH # what meson test sets for the build tree
root=$tmp/root
meson install -C "$build" --destdir "$root" --no-rebuild --quiet >/dev/null

bin=$(find "$root" -path '*/bin/neardup' -type f)
[ -x "$bin" ] || { echo "no installed neardup under $root" >&2; exit 1; }
prefix=${bin%/bin/neardup}
"$bin" --help > "$tmp/help"
grep -q '^commands:' "$tmp/help"
"$bin" --version
# (each tool's output taken whole before grep -q, which would otherwise
# stop early, kill the tool by SIGPIPE and fail the pipeline: pipefail)
grep -q 'R.*PATH.*\$ORIGIN' <<< "$(readelf -d "$bin")" || { echo "neardup: no \$ORIGIN rpath" >&2; exit 1; }
if [ -x "$prefix/bin/neardup-mpi" ]; then
    # (Open MPI leaks by design: no leak check under ASan, as in the mpi suite)
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        "$prefix/bin/neardup-mpi" --help > "$tmp/mpi-help"
    grep -q 'neardup-mpi' "$tmp/mpi-help"
fi

# where docs/c-api.md says they land
pc=$(find "$root" -name neardup.pc)
case $pc in
*/lib/x86_64-linux-gnu/pkgconfig/neardup.pc | */lib/pkgconfig/neardup.pc | */lib64/pkgconfig/neardup.pc) ;;
*) echo "neardup.pc at an unexpected place: $pc" >&2; exit 1 ;;
esac
[ -s "$prefix/share/man/man1/neardup.1" ]
[ -s "$prefix/share/bash-completion/completions/neardup" ]
[ -s "$prefix/include/neardup.h" ]

# docs/c-api.md's C example, built with pkg-config against the installed tree
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
flags=$(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs neardup)
case $flags in *"$root"*) ;; *) echo "pkg-config did not point into $root: $flags" >&2; exit 1 ;; esac
san=()
[ "$sanitize" = none ] || san=("-fsanitize=$sanitize")
# shellcheck disable=SC2086
cc "${san[@]}" -o "$tmp/example" "$src/tests/readme_example.c" $flags -Wl,-rpath,"$libdir"
bash "$src/tests/readme_example.sh" "$tmp/example" "$src/tests/data/texts"

# Embedders: --cflags names the include directory alone (no dependency's
# flags leak), and a static link of libneardup.a succeeds with --static's
# Libs.private alone (the C++ runtime of the storage adapter included).
pcq() { PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@" neardup; }
cflags=$(pcq --cflags | xargs) # (pkg-config ends with a space)
[ "$cflags" = "-I$prefix/include" ] || { echo "pkg-config --cflags: '$cflags', want -I$prefix/include only" >&2; exit 1; }
static=$(pcq --static --libs)
case " $static " in *" -lstdc++ "*) ;; *) echo "no -lstdc++ in Libs.private: $static" >&2; exit 1 ;; esac
[ -f "$libdir/libneardup.a" ] || { echo "no libneardup.a in $libdir" >&2; exit 1; }
# shellcheck disable=SC2086
cc "${san[@]}" -o "$tmp/example_static" "$src/tests/readme_example.c" $cflags ${static/-lneardup/-l:libneardup.a}
if grep -q libneardup <<< "$(ldd "$tmp/example_static")"; then
    echo "the static example still links libneardup.so" >&2; exit 1
fi
bash "$src/tests/readme_example.sh" "$tmp/example_static" "$src/tests/data/texts"

# libneardup-client, when the build made it: its header beside neardup.h,
# its .pc beside neardup.pc, and a program using it built and linked with
# pkg-config against the installed copy (not the build tree's)
if [ "$client" != client ]; then
    echo "install: libneardup-client not built (no libcurl): its checks skipped"
else
    [ -s "$prefix/include/neardup_client.h" ] || { echo "no installed neardup_client.h" >&2; exit 1; }
    [ -f "$pcdir/neardup-client.pc" ] || { echo "no neardup-client.pc in $pcdir" >&2; exit 1; }
    pcc() { PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@" neardup-client; }
    ccflags=$(pcc --cflags --libs)
    case $ccflags in *"-I$prefix/include"*"-lneardup-client"* | *"-lneardup-client"*"-I$prefix/include"*) ;;
    *) echo "pkg-config neardup-client: '$ccflags', want -I$prefix/include and -lneardup-client" >&2; exit 1 ;;
    esac
    # shellcheck disable=SC2086
    cc "${san[@]}" -std=c11 -Wall -Wextra -Werror -o "$tmp/client" "$src/tests/install/client_install.c" \
        $ccflags -Wl,-rpath,"$libdir"
    linked=$(ldd "$tmp/client")
    grep -q "$libdir/libneardup-client.so" <<< "$linked" ||
        { echo "the client program does not link the installed libneardup-client" >&2; echo "$linked" >&2; exit 1; }
    if grep -q 'libneardup\.so' <<< "$linked"; then
        echo "the client program links libneardup" >&2; exit 1
    fi
    # port 1 on loopback: nothing listens, the connection is refused
    "$tmp/client" http://127.0.0.1:1
fi
echo "install ok: $prefix"
