#!/usr/bin/env bash
# Installs what kael needs from Debian's archive, skipping what is already there.
set -euo pipefail
packages=(build-essential cmake pkg-config libboost-dev libboost-test-dev libcli11-dev
          nlohmann-json3-dev libopenblas-dev zlib1g-dev python3-dev pybind11-dev python3-numpy
          python3-pytest python3-hypothesis dataset-fashion-mnist)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
if ((${#missing[@]} == 0)); then
    exit 0
fi
echo "installing: ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
    sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
