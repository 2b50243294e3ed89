#!/usr/bin/env bash
# Builds the Debian package and installs it into a fresh root that holds only the packages its
# Depends pull in (copied from this machine's installed ones, with their dpkg records), so dpkg
# itself judges whether Depends is complete; then runs a scenario with expectations, a baseline
# and a JUnit report from the installed files, chrooted. CI runs it (.ci/run); it needs root.
# Usage: bash scripts/package-check.sh [BUILD_DIR]   (default build/default, already built)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
[ "$(id -u)" -eq 0 ] || { echo "package-check: needs root (chroot, dpkg --root); skipped" >&2; exit 0; }
work=out/package-check
rm -rf "$work"
mkdir -p "$work"
say() { echo "package-check: $*" >&2; }

cpack --config "$build/CPackConfig.cmake" -B "$work" > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; exit 1; }
deb=$(ls "$work"/twinbench_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
say "built $(basename "$deb") ($(du -h "$deb" | cut -f1)); Depends: $depends"
for lib in libns3 libprotobuf libssl libfmt; do
  [[ "$depends" == *"$lib"* ]] || { say "Depends names no $lib package"; exit 1; }
done

# The root: the packages Depends names and everything they depend on, as installed here.
root="$work/root"
mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{tmp,proc,dev,etc} "$root/var/lib/dpkg"/{info,updates}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
named=$(echo "$depends" | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:.*//' | tr -d ' ')
closure=$(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
            --no-breaks --no-replaces --no-enhances $named 2>/dev/null |
          grep -v '^ ' | grep -v '^<' | sort -u)
: > "$root/var/lib/dpkg/status"
for p in $closure; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || continue
  dpkg-query -s "$p" >> "$root/var/lib/dpkg/status"
  echo >> "$root/var/lib/dpkg/status"
  dpkg -L "$p" | while read -r f; do
    if [ -f "$f" ] || [ -L "$f" ]; then cp -a --parents "$f" "$root/" 2>/dev/null || true; fi
  done
done
say "fresh root: $(echo $closure | wc -w) packages, $(du -sh "$root" | cut -f1)"

# dpkg installs the package into that root, refusing it if a dependency is missing there.
dpkg --root="$root" --log=/dev/null -i "$deb" > "$work/dpkg.log" 2>&1 ||
  { cat "$work/dpkg.log" >&2; say "dpkg refused the package in the fresh root"; exit 1; }

in_root() { unshare --mount --fork sh -c "mount -t proc proc '$root/proc' && exec chroot '$root' \"\$@\"" sh "$@"; }
in_root /usr/bin/twinbench --version >&2
scenario=/usr/share/twinbench/scenarios/examples/ci_expectations.textproto
in_root /usr/bin/twinbench run "$scenario" -q --out /tmp/base > /dev/null
in_root /usr/bin/twinbench run "$scenario" -q --out /tmp/new --baseline /tmp/base \
  --junit /tmp/report.xml > /dev/null 2> "$work/run.log" ||
  { cat "$work/run.log" >&2; say "the installed twinbench failed its example"; exit 1; }
grep -q "all 3 expectations held" "$work/run.log" && grep -q "no regression" "$work/run.log" ||
  { cat "$work/run.log" >&2; exit 1; }
cp "$root/tmp/report.xml" "$work/"
xmllint --noout --schema tests/inputs/junit.xsd "$work/report.xml" 2>&1 | sed 's/^/package-check: /' >&2
say "installed and ran in the fresh root: $(tail -2 "$work/run.log" | tr '\n' ' ')"
