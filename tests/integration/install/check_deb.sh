#!/usr/bin/env bash
# Builds the Debian package from the build tree (`cpack -G DEB`: an install into a staging directory, no
# compilation) and checks what apt will see: the control fields (dpkg-deb -f/-I) and the file list
# (dpkg-deb -c), and the unit file and plugstack.conf.d line as packaged.
# Arguments: BUILD_DIR PLUGIN_DIR (Slurm's PluginDir, empty when no plugin was built) then the patterns
# Depends must match, one per library (dpkg-shlibdeps names their Debian packages).
set -euo pipefail
build=$(realpath "$1")
plugin_dir=$2
shift 2
out=$(mktemp -d /tmp/cosched-deb-XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "check_deb: $*"; exit 1; }

(cd "$out" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out") >"$out/cpack.log" 2>&1 || {
  cat "$out/cpack.log"; fail "cpack -G DEB failed"; }
debs=("$out"/cosched_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "expected one cosched_*.deb in $out, found: ${debs[*]}"
deb=${debs[0]}
version=$("$build/bin/cosched-rm" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
[ "$(basename "$deb")" = "cosched_${version}_${arch}.deb" ] || fail "package file is $(basename "$deb")"

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = cosched ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), cosched-rm --version says $version"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture: $(field Architecture)"
depends=$(field Depends)
# Each entry of Depends on its own line, to match one package name at a time.
entries=$(echo "$depends" | tr ',' '\n' | sed 's/^ *//')
for pattern in "$@" '^python3( |$)' '^libc6( |$)' '^libstdc\+\+6( |$)'; do
  grep -Eq "$pattern" <<<"$entries" || fail "Depends has no entry matching '$pattern': $depends"
done
# Here-strings, not pipes, into grep -q: it exits at the first match, and under pipefail the writer's SIGPIPE
# failed the check (install.deb failed so once in a clean-clone CI run, with the field present).
info=$(dpkg-deb -I "$deb")
grep -q "^ Recommends: python3-matplotlib" <<<"$info" || fail "no Recommends: python3-matplotlib"

files=$(dpkg-deb -c "$deb" | awk '{print $6}')
has() { grep -qx "$1" <<<"$files" || fail "missing in the package: $1"; }
for f in ./usr/bin/cosched-rm ./usr/bin/cosched-run ./usr/bin/cosched-ctl ./usr/bin/qsubmit ./usr/bin/cosched-sim \
         ./usr/bin/cosched-swfgen ./usr/bin/cosched-report ./usr/lib/libcosched.so.0 ./usr/lib/libcosched_wrap.so.0 \
         ./usr/lib/systemd/system/cosched-rm.service ./usr/include/cosched/selfanalyzer.h \
         ./usr/lib/pkgconfig/cosched.pc ./usr/share/man/man8/cosched-rm.8 ./usr/share/man/man1/cosched-run.1 \
         ./usr/share/man/man1/cosched-ctl.1 ./usr/share/doc/cosched/usage.md ./usr/share/cosched/workloads/w3-mini.swf; do
  has "$f"
done
unit=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/lib/systemd/system/cosched-rm.service)
grep -q '^ExecStart=/usr/bin/cosched-rm --foreground' <<<"$unit" || fail "the unit does not start /usr/bin/cosched-rm: $(echo "$unit" | grep ExecStart)"

if [ -n "$plugin_dir" ]; then
  has ".$plugin_dir/spank_cosched.so"
  has ./usr/bin/cosched-slurm-prolog
  # Only in Slurm's plugin directory: the `cmake --install` place (<libdir>/slurm) is not packaged.
  count=$(grep -c '/spank_cosched\.so$' <<<"$files")
  [ "$count" -eq 1 ] || fail "spank_cosched.so is packaged $count times"
  has ./etc/slurm/plugstack.conf.d/cosched.conf
  has ./etc/cosched/slurm-prolog.conf
  conffiles=$(dpkg-deb -I "$deb" conffiles)
  for c in /etc/slurm/plugstack.conf.d/cosched.conf /etc/cosched/slurm-prolog.conf; do
    grep -qx "$c" <<<"$conffiles" || fail "$c is not a conffile: $conffiles"
  done
  # Installed but not enabled: the one plugin line is commented out, and names the packaged plugin.
  snippet=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./etc/slurm/plugstack.conf.d/cosched.conf)
  active=$(grep -Ev '^[[:space:]]*(#|$)' <<<"$snippet" || true)
  [ -z "$active" ] || fail "plugstack.conf.d/cosched.conf enables something: $active"
  grep -q "^#optional $plugin_dir/spank_cosched.so " <<<"$snippet" || fail "no commented plugin line: $snippet"
fi
# Nothing of the build machine in the packaged text files.
dpkg-deb -x "$deb" "$out/root"
leaks=$(grep -rlI -e "_CPack_Packages" -e "$build" "$out/root" || true)
[ -z "$leaks" ] || fail "build paths in: $leaks"
echo "Debian package OK: $(basename "$deb"), Depends: $depends"
