#!/bin/bash
# test_install.sh BUILD SRC SANITIZE — an installed neardup works without
# LD_LIBRARY_PATH: `meson install --destdir` into a temporary tree, run the
# installed `neardup --help` (and `neardup-mpi --help` when built), check
# that neardup.pc, the man page and the bash completion land where
# docs/c-api.md says, then build its C example (tests/readme_example.c)
# with pkg-config against the installed tree, dynamically and statically,
# and run it (tests/readme_example.sh checks its output); --cflags must
# name the include directory alone.
set -euo pipefail
build=$1 src=$2 sanitize=${3:-none}
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
readelf -d "$bin" | grep -q 'R.*PATH.*\$ORIGIN' || { echo "neardup: no \$ORIGIN rpath" >&2; exit 1; }
if [ -x "$prefix/bin/neardup-mpi" ]; then
    # (Open MPI leaks by design: no leak check under ASan, as in the mpi suite)
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        "$prefix/bin/neardup-mpi" --help | grep -q 'neardup-mpi'
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
if ldd "$tmp/example_static" | grep -q libneardup; then
    echo "the static example still links libneardup.so" >&2; exit 1
fi
bash "$src/tests/readme_example.sh" "$tmp/example_static" "$src/tests/data/texts"
echo "install ok: $prefix"
