#!/usr/bin/env bash
# Installs the build tree into a fresh prefix and checks what a user gets: the files the issue lists, only the API
# exported from libchorus.so, a CMake package that a C and a C++ program build against, a working chorus.pc, and the
# Python package.
set -euo pipefail
build=${1:?usage: check_install.sh BUILD_DIR SOURCE_DIR [PYTHON]}
src=${2:?usage: check_install.sh BUILD_DIR SOURCE_DIR [PYTHON]}
python=${3:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/chorus/chorus.h include/chorus/chorus.hpp lib/libchorus.so bin/chorusrun bin/chorus-perf \
         lib/cmake/Chorus/ChorusConfig.cmake lib/pkgconfig/chorus.pc lib/python3/dist-packages/chorus/__init__.py; do
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
# The Python package as installed finds the installed libchorus.so by itself (no numpy needed: array.array).
env -u LD_LIBRARY_PATH -u CHORUS_LIBRARY PYTHONPATH="$prefix/lib/python3/dist-packages" "$prefix/bin/chorusrun" -n 2 \
  "$python" -c 'import array, chorus
with chorus.Comm.from_env() as comm:
    x = array.array("i", [comm.rank + 1])
    comm.allreduce(x)
    assert x[0] == 3, x' || { echo "the installed chorus Python package failed"; exit 1; }
echo "install check passed"
