#!/usr/bin/env bash
# Installs the build into a temporary prefix and checks the layout, then builds a relinked program
# against the installed package twice: with CMake's find_package(Cosched) and with pkg-config.
set -euo pipefail
build=$1
prefix=$(mktemp -d /tmp/cosched-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
programs="cosched-rm cosched-ctl cosched-run qsubmit cosched-sim cosched-swfgen cosched-report"
for f in lib/libcosched.so lib/libcosched_wrap.so.0 include/cosched/selfanalyzer.h \
         lib/cmake/Cosched/CoschedConfig.cmake lib/pkgconfig/cosched.pc \
         share/doc/cosched/README.md share/doc/cosched/usage.md share/cosched/workloads/w3-mini.swf \
         share/cosched/workloads/catalog.yaml lib/systemd/system/cosched-rm.service \
         share/man/man8/cosched-rm.8 share/man/man1/cosched-ctl.1 share/man/man1/cosched-run.1 \
         share/man/man1/qsubmit.1 share/man/man1/cosched-sim.1 share/bash-completion/completions/cosched-ctl \
         share/doc/cosched/slurm.md; do
  [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
# The Slurm plugin and prolog (docs/slurm.md), where libslurm-dev let the plugin build; the plugin finds the
# libraries next to it, so it must sit one directory below them.
if [ -e "$build/slurm/spank_cosched.so" ]; then
  plugin=$(find "$prefix" -name spank_cosched.so -path "*/slurm/*")
  [ -n "$plugin" ] || { echo "missing after install: <libdir>/slurm/spank_cosched.so"; exit 1; }
  [ -e "$(dirname "$(dirname "$plugin")")/libcosched.so.0" ] || {
    echo "the installed plugin $plugin is not one directory below libcosched"; exit 1; }
  [ -x "$prefix/bin/cosched-slurm-prolog" ] || { echo "missing after install: bin/cosched-slurm-prolog"; exit 1; }
fi
grep -q "^ExecStart=$prefix/bin/cosched-rm --foreground" "$prefix/lib/systemd/system/cosched-rm.service" || {
  echo "the systemd unit does not start the installed cosched-rm in the foreground"; exit 1; }
# Every command is in PREFIX/bin after an install, and in the build tree's bin/ before one (README: PATH).
for p in $programs; do
  [ -x "$prefix/bin/$p" ] || { echo "missing after install: bin/$p"; exit 1; }
  [ -x "$build/bin/$p" ] || { echo "missing in the build tree: $build/bin/$p"; exit 1; }
  "$build/bin/$p" --help >/dev/null || { echo "$build/bin/$p --help failed"; exit 1; }
done
"$prefix/bin/cosched-rm" --help >/dev/null
"$prefix/bin/cosched-run" --help >/dev/null
"$prefix/bin/cosched-report" --help >/dev/null
# An installed cosched-run loads the installed libraries, not the build tree's.
launch=$("$prefix/bin/cosched-run" -v -q --socket /nonexistent/rm.sock -- true 2>&1) || {
  echo "installed cosched-run failed to start a program: $launch"; exit 1; }
case "$launch" in
  *"tool=$prefix/lib/libcosched.so.0"*"wrappers=$prefix/lib/libcosched_wrap.so.0"*) ;;
  *) echo "installed cosched-run uses the wrong libraries: $launch"; exit 1 ;;
esac

src=$(mktemp -d /tmp/cosched-consumer-XXXXXX)
trap 'rm -rf "$prefix" "$src"' EXIT
cat > "$src/main.c" <<'C'
#include <cosched/selfanalyzer.h>
#include <stdio.h>
int main(void) {
  cosched_iter_begin(1);
  cosched_iter_end(1);
  printf("allocation %d\n", cosched_allocation());  /* 0: not under cosched */
  return 0;
}
C
cat > "$src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(Cosched REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE Cosched::cosched)
CM
cmake -S "$src" -B "$src/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$src/build" >/dev/null
out=$("$src/build/consumer")
[ "$out" = "allocation 0" ] || { echo "consumer printed: $out"; exit 1; }
# cosched.pc names the prefix normalised, and carries the OpenMP flags a relinked code needs.
libdir=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --variable=libdir cosched)
[ "$libdir" = "$prefix/lib" ] || { echo "cosched.pc libdir is '$libdir', not '$prefix/lib'"; exit 1; }
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs cosched)
case "$flags" in *//*|*/../*) echo "cosched.pc paths are not normalised: $flags"; exit 1 ;; esac
case "$flags" in *-fopenmp*) ;; *) echo "cosched.pc has no OpenMP flag: $flags"; exit 1 ;; esac
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cc -o "$src/pc" "$src/main.c" $flags
[ "$("$src/pc")" = "allocation 0" ]
echo "install layout and package OK ($prefix)"
