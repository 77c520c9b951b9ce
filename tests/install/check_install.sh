#!/usr/bin/env bash
# Installs the build tree into a fresh prefix and checks what a user gets: the files the issue lists, only the API
# exported from libchorus.so, a CMake package that a C and a C++ program build against, and a working chorus.pc.
set -euo pipefail
build=${1:?usage: check_install.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: check_install.sh BUILD_DIR SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/chorus/chorus.h include/chorus/chorus.hpp lib/libchorus.so bin/chorusrun bin/chorus-perf \
         lib/cmake/Chorus/ChorusConfig.cmake lib/pkgconfig/chorus.pc; do
  [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
# Only the C API (chorus*) may be exported: everything else is hidden.
leaked=$(nm -D --defined-only "$prefix/lib/libchorus.so" | awk '$2 ~ /[TtDdBbRrVvWw]/ {print $3}' \
         | grep -v '^chorus' | grep -v '^_init$' | grep -v '^_fini$' || true)
if [ -n "$leaked" ]; then echo "libchorus.so exports non-API symbols:"; echo "$leaked" | head -20; exit 1; fi
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$work/consumer/consumer_c"
LD_LIBRARY_PATH="$prefix/lib" "$work/consumer/consumer_cpp"
# pkg-config, as a Makefile user would.
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs chorus)
cc -std=c11 -Wall -Werror "$src/tests/install/consumer/main.c" $flags -o "$work/pc_consumer"
LD_LIBRARY_PATH="$prefix/lib" "$work/pc_consumer"
# The installed tools run as installed (rpath), with no LD_LIBRARY_PATH.
env -u LD_LIBRARY_PATH "$prefix/bin/chorusrun" -n 2 "$prefix/bin/chorus-perf" allreduce -b 8 -e 4K -f 8 -n 2 -w 1 \
  | grep -q "Out of bounds values : 0 OK" || { echo "installed chorusrun + chorus-perf failed"; exit 1; }
echo "install check passed"
