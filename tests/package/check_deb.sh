#!/usr/bin/env bash
# The Debian package built from this build tree: its name and control fields, its files, unit files
# that `systemd-analyze verify` accepts once unpacked, a daemon that runs, and the same file set as
# `cmake --install --prefix /usr`. Everything happens in a temporary directory removed at exit.
#
# usage: check_deb.sh BUILD_DIR VERSION
# The binaries must be built (ctest runs after the build; target package_test builds them alone).
set -euo pipefail

build=$(cd "$1" && pwd)
version=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fulfillsync-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The install script (run by cpack and cmake --install) writes install_manifest.txt into the build
# tree: leave the tree as found.
[[ -e $build/install_manifest.txt ]] || trap 'rm -rf "$tmp"; rm -f "$build/install_manifest.txt"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# (No `cmd | grep -q`: with pipefail, grep exiting at the first match can fail the pipeline.)
step() { echo "--- $*"; }

for binary in fulfillsyncd fulfillsync-sandbox; do
  [[ -x $build/bin/$binary ]] || fail "$build/bin/$binary is not built (cmake --build --target package_test)"
done

step "cpack -G DEB"
# CPackConfig.cmake as the build wrote it, but running the install script directly: cpack then
# packages what is built instead of first building the 'preinstall' target (the whole tree).
cat > "$tmp/cpack-config.cmake" <<CONFIG
include("$build/CPackConfig.cmake")
set(CPACK_INSTALL_CMAKE_PROJECTS "")
set(CPACK_INSTALL_SCRIPTS "$build/cmake_install.cmake")
# What CPACK_STRIP_FILES asks of the install of a CMake project, which this path skips.
if(CPACK_STRIP_FILES)
  set(CMAKE_INSTALL_DO_STRIP 1)
endif()
CONFIG
cpack --config "$tmp/cpack-config.cmake" -G DEB -B "$tmp/out" > "$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log" >&2; fail "cpack failed"; }

arch=$(dpkg --print-architecture)
deb=$tmp/out/fulfillsync_${version}_${arch}.deb
[[ -f $deb ]] || { ls -l "$tmp/out" >&2; fail "no $(basename "$deb")"; }
debs=("$tmp"/out/*.deb)
[[ ${#debs[@]} -eq 1 ]] || fail "expected one .deb, got: ${debs[*]}"

step "dpkg-deb --info"
dpkg-deb --info "$deb"
field() { dpkg-deb --field "$deb" "$1"; }
[[ $(field Package) == fulfillsync ]] || fail "Package is '$(field Package)'"
[[ $(field Version) == "$version" ]] || fail "Version is '$(field Version)'"
[[ $(field Architecture) == "$arch" ]] || fail "Architecture is '$(field Architecture)'"
[[ $(field Section) == net ]] || fail "Section is '$(field Section)'"
[[ -n $(field Maintainer) ]] || fail "no Maintainer"
depends=$(field Depends)
[[ -n $depends ]] || fail "empty Depends"
[[ $depends =~ (^|[ ,])libssl3([ ,]|$) ]] || fail "Depends lacks libssl3: $depends"
[[ $depends =~ libsqlite3-0 ]] || fail "Depends lacks libsqlite3-0: $depends"
[[ $depends =~ zlib1g ]] || fail "Depends lacks zlib1g (gzip for /metrics): $depends"
[[ $depends =~ libcrypt1 ]] || fail "Depends lacks libcrypt1 (bcrypt for basic auth): $depends"
[[ $depends =~ libpq5 ]] || fail "Depends lacks libpq5 (the PostgreSQL merchant driver): $depends"
[[ $depends =~ civetweb ]] && fail "Depends still names civetweb, which nothing links: $depends"
grep -q "enables and starts neither" <<< "$(field Description)" || fail "the description does not say the service is not started"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
grep -q "Built with CMake's $build_type configuration" <<< "$(field Description)" ||
  fail "the description does not name the build type ($build_type)"

dpkg-deb --control "$deb" "$tmp/control"
[[ $(cat "$tmp/control/conffiles") == /etc/fulfillsync/fulfillsync.example.yaml ]] ||
  fail "conffiles: $(cat "$tmp/control/conffiles")"
for script in postinst prerm postrm; do
  [[ -x $tmp/control/$script ]] || fail "no executable $script"
  sh -n "$tmp/control/$script" || fail "$script is not valid sh"
done
grep -q "systemd-sysusers fulfillsync.conf" "$tmp/control/postinst" || fail "postinst does not run systemd-sysusers"
grep -q "systemd-tmpfiles --create fulfillsync.conf" "$tmp/control/postinst" || fail "postinst does not run systemd-tmpfiles"
if grep -Eq "systemctl +(enable|start|restart|reenable)|deb-systemd-(helper|invoke)" "$tmp/control/postinst"; then
  fail "postinst enables or starts the service"
fi

step "dpkg-deb --contents"
# The regular files and links, as absolute paths.
dpkg-deb --contents "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | sort > "$tmp/deb-files"
cat "$tmp/deb-files"
expected=(
  /usr/bin/fulfillsyncd
  /usr/bin/fulfillsync-sandbox
  /usr/lib/systemd/system/fulfillsyncd.service
  /usr/lib/systemd/system/fulfillsyncd@.service
  /usr/lib/sysusers.d/fulfillsync.conf
  /usr/lib/tmpfiles.d/fulfillsync.conf
  /etc/fulfillsync/fulfillsync.example.yaml
  /usr/share/fulfillsync/monitoring/fulfillsync-alerts.yml
  /usr/share/fulfillsync/monitoring/fulfillsync-alerts.test.yml
  /usr/share/fulfillsync/monitoring/fulfillsync-dashboard.json
  /usr/share/fulfillsync/monitoring/README.md
  /usr/share/doc/fulfillsync/README.md
)
for file in "${expected[@]}"; do
  grep -qxF "$file" "$tmp/deb-files" || fail "the package lacks $file"
done
printf '%s\n' "${expected[@]}" | sort > "$tmp/expected-files"
diff -u "$tmp/expected-files" "$tmp/deb-files" || fail "the package holds other files than expected"

step "dpkg-deb -x, systemd-analyze verify"
root=$tmp/root
dpkg-deb -x "$deb" "$root"
grep -qx "d /var/lib/fulfillsync 0700 fulfillsync fulfillsync -" "$root/usr/lib/tmpfiles.d/fulfillsync.conf" ||
  fail "tmpfiles snippet"
grep -q "^u fulfillsync " "$root/usr/lib/sysusers.d/fulfillsync.conf" || fail "sysusers snippet"
# verify checks that ExecStart= names an executable: point the copies at the unpacked daemon, as
# the units name /usr/bin/fulfillsyncd (not installed on the test machine).
units=$tmp/units
mkdir "$units"
for unit in fulfillsyncd.service fulfillsyncd@.service; do
  sed "s|/usr/bin/fulfillsyncd|$root/usr/bin/fulfillsyncd|g" "$root/usr/lib/systemd/system/$unit" > "$units/$unit"
done
for unit in fulfillsyncd.service fulfillsyncd@shop1.service; do
  output=$(systemd-analyze verify "$units/$unit" 2>&1) || fail "systemd-analyze verify $unit: $output"
  [[ -z $output ]] || fail "systemd-analyze verify $unit complains: $output"
  echo "$unit: verified"
done

step "the units' hardening"
for unit in fulfillsyncd.service fulfillsyncd@.service; do
  grep -qx "PrivateMounts=yes" "$units/$unit" || fail "$unit lacks PrivateMounts=yes"
  # An empty IPAddressDeny= only resets the list: it filters nothing.
  if grep -Eqx "IPAddress(Deny|Allow)=[[:space:]]*" "$units/$unit"; then fail "$unit has an empty IP address filter"; fi
done
for unit in fulfillsyncd.service fulfillsyncd@shop1.service; do
  # --threshold is the exposure times ten; the reason for each remaining point is in the unit.
  review=$(systemd-analyze security --offline=yes --threshold=11 --no-pager "$units/$unit" 2>&1) ||
    fail "systemd-analyze security rates $unit above 1.1: $review"
  echo "$unit: $(grep -o 'exposure level.*' <<< "$review")"
done

for binary in fulfillsyncd fulfillsync-sandbox; do
  if grep -q '\.debug_info' <<< "$(readelf -S "$root/usr/bin/$binary")"; then fail "$binary is not stripped"; fi
done

step "fulfillsyncd --help"
help=$("$root/usr/bin/fulfillsyncd" --help 2>&1) || fail "fulfillsyncd --help failed: $help"
grep -q "resync" <<< "$help" || fail "fulfillsyncd --help does not list resync: $help"
grep -q "not found" <<< "$(ldd "$root/usr/bin/fulfillsyncd" "$root/usr/bin/fulfillsync-sandbox")" &&
  fail "unresolved libraries: $(ldd "$root/usr/bin/fulfillsyncd" | grep 'not found')"

step "check-config as the README runs it, with the packaged example configuration"
# The README's steps on the package's own files, outside systemd (no CREDENTIALS_DIRECTORY): the
# example copied and edited (its merchant database and state directory moved into the temporary
# directory), the token beside it. check-config must read the file the unit's LoadCredential= loads.
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
etc=$tmp/etc/fulfillsync
mkdir -p "$etc" "$tmp/state" "$tmp/shop"
sed -e "s|/var/lib/fulfillsync/|$tmp/state/|" -e "s|/var/lib/shop/|$tmp/shop/|" \
  "$root/etc/fulfillsync/fulfillsync.example.yaml" > "$etc/fulfillsync.yaml"
install -m 0600 /dev/stdin "$etc/api-token" <<< 'YOUR-PERSONAL-ACCESS-TOKEN'
sqlite3 "$tmp/shop/shop.db" < "$source_dir/schema/merchant/source_tables.sql"
sqlite3 "$tmp/shop/shop.db" < "$source_dir/schema/merchant/change_log/0001_change_log.sql"
checked=$(env -u CREDENTIALS_DIRECTORY "$root/usr/bin/fulfillsyncd" --config "$etc/fulfillsync.yaml" check-config 2>&1) ||
  fail "check-config of the packaged example failed: $checked"
echo "$checked"
grep -qF "OK    api.token_file: $etc/api-token is readable, private and not empty" <<< "$checked" ||
  fail "check-config did not check $etc/api-token"
grep -qF "CREDENTIALS_DIRECTORY is not set" <<< "$checked" || fail "check-config does not say where the token came from"
# fulfillsyncd@shop1 reads shop1.yaml and loads shop1.api-token.
cp "$etc/fulfillsync.yaml" "$etc/shop1.yaml"
checked=$(env -u CREDENTIALS_DIRECTORY "$root/usr/bin/fulfillsyncd" --config "$etc/shop1.yaml" check-config 2>&1) &&
  fail "check-config of shop1.yaml passed without shop1.api-token: $checked"
grep -qF "ERROR api.token_file: cannot read $etc/shop1.api-token" <<< "$checked" ||
  fail "check-config of shop1.yaml did not look for $etc/shop1.api-token: $checked"

step "cmake --install --prefix /usr with DESTDIR"
DESTDIR="$tmp/destdir" cmake --install "$build" --prefix /usr > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
(cd "$tmp/destdir" && find . ! -type d | sed 's/^\.//' | sort) > "$tmp/install-files"
diff -u "$tmp/deb-files" "$tmp/install-files" || fail "cmake --install and the package install different files"

echo "OK: $(basename "$deb") ($(du -h "$deb" | cut -f1)), Depends: $depends"
