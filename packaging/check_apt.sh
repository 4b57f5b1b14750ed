#!/usr/bin/env bash
# Installs every package build_debs.sh made into this machine with apt, as a Debian user would,
# uses them from PATH, pkg-config, CMake and Python, then purges them and checks that nothing
# is left: the same file list under /usr, /etc and /var/lib/dpkg as before, no kael library in
# ld.so's cache, no byte-compiled Python files. Needs root; refuses to touch a machine where
# kael packages are installed already (exit 77, skipped).
#   check_apt.sh <debs-folder> <scratch>
set -euo pipefail
debs=$(cd "${1:?debs folder}" && pwd -P)
mkdir -p "${2:?scratch}"
scratch=$(cd "$2" && pwd -P)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=check_common.sh
source "$here/check_common.sh"
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    echo "SKIP: installing packages needs root and apt-get"
    exit "$SKIP"
fi
mapfile -t files < <(ls "$debs"/*.deb)
[[ ${#files[@]} -gt 0 ]] || fail "no .deb in $debs"
packages=()
for file in "${files[@]}"; do
    packages+=("$(dpkg-deb -f "$file" Package)")
done
if installed=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' "${packages[@]}" 2>/dev/null |
    grep -v '^un' | grep -v '^ *$'); then
    echo "SKIP: kael packages are installed on this machine already; this test would remove them:"
    echo "$installed"
    exit "$SKIP"
fi

# Every path (not contents: ld.so.cache and dpkg's status change legitimately) under the places
# packages write to.
snapshot() {
    find /usr /etc /var/lib/dpkg/info -xdev 2>/dev/null | grep -v '^/usr/lib/python3/dist-packages/.*/__pycache__/.*\.cpython-.*\.pyc$' | LC_ALL=C sort
}
snapshot >"$scratch/before.txt"
purge() {
    DEBIAN_FRONTEND=noninteractive apt-get purge -y "${packages[@]}" >"$scratch/purge.log" 2>&1
}
trap 'purge || true' EXIT

echo "apt-get install ${files[*]##*/}"
DEBIAN_FRONTEND=noninteractive apt-get install -y "${files[@]}" >"$scratch/install.log" 2>&1 ||
    { cat "$scratch/install.log" >&2; fail "apt-get install"; }
grep -E '^(Setting up|Processing triggers)' "$scratch/install.log"

cd "$scratch"  # nothing of kael's source tree can shadow the installed files
[[ "$(command -v kael-info)" == /usr/bin/kael-info ]] || fail "kael-info is not /usr/bin/kael-info"
clean kael-info | tee info.txt || fail "kael-info exited $?"
grep -Eq '^  cpu +loaded' info.txt || fail "kael-info does not list the cpu plugin"
grep -q "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/kael/plugins/kael_plugin_cpu.so" info.txt ||
    grep -q "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/kael/plugins" <(clean kael-info --verbose) ||
    fail "kael-info does not load from /usr/lib/<multiarch>/kael/plugins"
for page in kael-info kael-demo kael-bench kael-conformance; do
    [[ -f /usr/share/man/man1/$page.1.gz ]] || fail "no man page for $page"
done
# grep -q reads from a file, not a pipe: with pipefail, a grep that stops at its first match
# would fail the pipeline on ldconfig's SIGPIPE whenever the cache is larger than a pipe buffer.
grep -q 'libkael_core.so.0 ' <(ldconfig -p) || fail "libkael_core.so.0 is not in ld.so's cache (ldconfig trigger)"

# pkg-config and plain c++ (Cflags carry -std=c++20; the system paths need no -I/-L).
flags=$(pkg-config --cflags --libs kael)
echo "pkg-config --cflags --libs kael: $flags"
# shellcheck disable=SC2086  # the flags are words
clean c++ -O1 "$here/consumer/main.cpp" -o consumer-pc $flags || fail "c++ with pkg-config's flags"
clean ./consumer-pc | grep -q "kael consumer ok" || fail "the pkg-config consumer"
[[ "$(pkg-config --variable=plugindir kael)" == "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/kael/plugins" ]] ||
    fail "plugindir is $(pkg-config --variable=plugindir kael)"
# CMake, from the system's package folders.
clean cmake -S "$here/consumer" -B consumer-build >cmake.log 2>&1 || { cat cmake.log >&2; fail "cmake consumer"; }
clean cmake --build consumer-build >>cmake.log 2>&1 || { cat cmake.log >&2; fail "cmake consumer build"; }
clean consumer-build/kael_consumer | grep -q "kael consumer ok" || fail "the CMake consumer"

if printf '%s\n' "${packages[@]}" | grep -qx python3-kael; then
    clean /usr/bin/python3 -c 'import kael; print(kael.__file__, kael.devices())' | tee python.txt ||
        fail "import kael"
    grep -q '^/usr/lib/python3/dist-packages/kael/__init__.py ' python.txt || fail "kael is not imported from dist-packages"
    compgen -G '/usr/lib/python3/dist-packages/kael/__pycache__/__init__.cpython-*.pyc' >/dev/null ||
        fail "python3-kael was not byte-compiled on install (py3compile)"
fi

trap - EXIT
purge || { cat "$scratch/purge.log" >&2; fail "apt-get purge"; }
echo "purged: ${packages[*]}"
snapshot >"$scratch/after.txt"
if ! diff "$scratch/before.txt" "$scratch/after.txt" >"$scratch/left.txt"; then
    cat "$scratch/left.txt" >&2
    fail "installing and purging the packages changed these paths"
fi
[[ ! -e /usr/lib/python3/dist-packages/kael ]] || fail "/usr/lib/python3/dist-packages/kael is left"
! grep -q libkael_core <(ldconfig -p) || fail "libkael_core is still in ld.so's cache"
echo "PASS apt: installed, used from PATH, pkg-config, CMake and Python, purged without a trace"
