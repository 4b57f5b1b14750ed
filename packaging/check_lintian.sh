#!/usr/bin/env bash
# Lintian on every package build_debs.sh made (the -dbgsym ones too), as Debian's archive runs
# it: fails on any error or warning that no override in the package explains. Every override
# (packaging/debian/*.lintian-overrides) must follow a comment that gives its reason (several may share one).
#   check_lintian.sh <debs-folder>
set -euo pipefail
debs=$(cd "${1:?debs folder}" && pwd -P)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
if ! command -v lintian >/dev/null; then
    echo "SKIP: no lintian (apt-get install lintian)"
    exit 77
fi
shopt -s nullglob
packages=("$debs"/*.deb)
[[ ${#packages[@]} -gt 0 ]] || { echo "FAIL: no .deb in $debs" >&2; exit 1; }

for overrides in "$here"/debian/*.lintian-overrides; do
    previous=""
    while IFS= read -r line; do
        # An override follows its comment, or another override under the same comment.
        if [[ -n "$line" && "$line" != \#* && -z "$previous" ]]; then
            echo "FAIL: ${overrides##*/}: override without a reason (a comment line before it): $line" >&2
            exit 1
        fi
        previous=$line
    done <"$overrides"
done

# Overridden tags are shown (O:) with their reasons (N:); lintian's own --fail-on would count
# them, so the gate reads the E: and W: lines instead.
status=0
lintian --pedantic --display-info --display-experimental --show-overrides --tag-display-limit 0 \
    "${packages[@]}" >"$debs/lintian.txt" 2>&1 || status=$?
grep -v 'running with root privileges' "$debs/lintian.txt" || true
[[ $status -eq 0 ]] || { echo "FAIL: lintian exited $status" >&2; exit 1; }
if grep -Eq '^[EW]: ' "$debs/lintian.txt"; then
    echo "FAIL: lintian reports errors or warnings (E:/W: above)" >&2
    exit 1
fi
echo "PASS lintian: ${#packages[@]} packages, no error or warning beyond the explained overrides"
