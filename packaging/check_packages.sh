#!/usr/bin/env bash
# Shipping tests of the Debian packages. Builds them with build_debs.sh, unpacks them with
# dpkg-deb -x into fresh roots (nothing is installed system-wide) and checks what a user of each
# package combination sees.
#
#   check_packages.sh <build-dir> <scratch> [check...]
#
# checks: build (build_debs.sh into <scratch>/debs; every other check needs it), depends, core,
# emulated, cuda, dev, python, plugin. Without checks: all of them, in that order. Exit 77 (skipped) when
# the one check asked for has nothing to test: no kael-cuda package (no nvcc at build time) or no
# python3-kael package (no python install component). CMAKE: the cmake to use. Checks
# other than build only need <scratch>/debs, so they also run where just the .deb files were
# copied (<build-dir> can then be any folder).
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 <build-dir> <scratch> [build|depends|core|emulated|cuda|dev|python|plugin ...]" >&2
    exit 64
fi
build_dir=$(cd "$1" && pwd -P)
mkdir -p "$2"
scratch=$(cd "$2" && pwd -P)  # kael reports physical paths
shift 2
checks=("$@")
if [[ ${#checks[@]} -eq 0 ]]; then
    checks=(build depends core emulated cuda dev python plugin)
fi
cmake_command=${CMAKE:-cmake}
command -v "$cmake_command" >/dev/null || cmake_command=cmake
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
debs="$scratch/debs"
python=/usr/bin/python3
# The packages' lib folder below usr/: the build's CMAKE_INSTALL_LIBDIR, or, where only the .deb
# files were copied (e.g. to a GPU machine), read from libkael-core0's file list.
libdir=
if [[ -f "$build_dir/CMakeCache.txt" ]]; then
    libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
elif compgen -G "$debs/libkael-core0_*.deb" >/dev/null; then
    libdir=$(dpkg-deb -c "$debs"/libkael-core0_*.deb | sed -n 's|.* \./usr/\(.*\)/libkael_core\.so\.[0-9]* -> .*|\1|p')
fi
if [[ -z "$libdir" ]]; then
    echo "no CMAKE_INSTALL_LIBDIR in $build_dir/CMakeCache.txt and no libkael-core0 package in $debs" >&2
    exit 1
fi
# shellcheck source=check_common.sh
source "$source_dir/check_common.sh"

# The one .deb of a package; fails unless it exists (has_deb only asks).
has_deb() {
    compgen -G "$debs/$1_*.deb" >/dev/null
}
deb() {
    local files=("$debs/$1"_*.deb)
    [[ ${#files[@]} -eq 1 && -f "${files[0]}" ]] || fail "expected one $1_*.deb in $debs"
    echo "${files[0]}"
}

# unpack <root> <package>...: a fresh root holding exactly those packages.
unpack() {
    local root=$1
    shift
    rm -rf "$root"
    mkdir -p "$root"
    local package
    for package in "$@"; do
        dpkg-deb -x "$(deb "$package")" "$root"
    done
    echo "unpacked $* into $root"
}

field() {
    dpkg-deb -f "$(deb "$1")" "$2"
}

# json <file> <python expression over `info`>: prints the expression's value.
json() {
    "$python" -c 'import json, sys
info = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# kael_info <root> <json-out> [args...]: runs the root's kael-info, prints its exit status.
kael_info() {
    local root=$1 out=$2
    shift 2
    local status=0
    clean "$root/usr/bin/kael-info" "$@" >"$out" 2>&1 || status=$?
    echo "$status"
}

elf_files() {
    find "$1" -type f -print0 | while IFS= read -r -d '' file; do
        if [[ $(head -c 4 "$file" | od -An -c | tr -d ' ') == '177ELF' ]]; then
            echo "$file"
        fi
    done
}

check_build() {
    rm -rf "$scratch"
    mkdir -p "$scratch"
    echo "build_debs.sh from $build_dir into $debs"
    if ! CMAKE="$cmake_command" "$source_dir/build_debs.sh" "$build_dir" "$debs" >"$scratch/build_debs.log" 2>&1; then
        cat "$scratch/build_debs.log" >&2
        fail "build_debs.sh failed"
    fi
    rm -rf "$debs/source"
    local file
    for file in "$debs"/*.deb; do
        echo "== $(basename "$file")"
        dpkg-deb -f "$file" Package Version Architecture Multi-Arch Depends Recommends Suggests
    done
    local package
    for package in libkael-core0 libkael-nn0 kael-core kael-emulated kael-dev; do
        deb "$package" >/dev/null
        deb "$package-dbgsym" >/dev/null
    done
}

# Depends/Recommends/Suggests of every package, and the ELF files inside each against them.
check_depends() {
    local version
    version=$(field kael-core Version)
    if [[ -f "$build_dir/CMakeCache.txt" ]]; then
        [[ "${version%-*}" == "$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$build_dir/CMakeCache.txt")" ]] ||
            fail "kael-core version $version is not the project's"
    fi
    local core_depends
    core_depends=$(field kael-core Depends)
    [[ "$core_depends" =~ libc6\ \(\>=\ [0-9.]+\) ]] || fail "kael-core Depends lacks libc6 (>= ...): $core_depends"
    [[ "$core_depends" =~ libstdc\+\+6 ]] || fail "kael-core Depends lacks libstdc++6: $core_depends"
    [[ "$core_depends," == "libkael-core0 (= $version),"* || ", $core_depends," == *", libkael-core0 (= $version),"* ]] ||
        fail "kael-core Depends lacks libkael-core0 (= $version): $core_depends"
    [[ "$(field libkael-core0 Depends)" != *kael* ]] || fail "libkael-core0 depends on a kael package"
    # Each library has its own package (one SONAME each): Multi-Arch same, shlibs, ldconfig.
    local library package_name
    for library in kael_core kael_nn; do
        package_name="lib${library//_/-}0"
        [[ "$(field "$package_name" Multi-Arch)" == same ]] || fail "$package_name is not Multi-Arch: same"
        dpkg-deb --ctrl-tarfile "$(deb "$package_name")" | tar -xO ./shlibs |
            grep -qx "lib$library 0 $package_name (>= ${version%-*})" ||
            fail "$package_name has no shlibs entry for lib$library.so.0"
        dpkg-deb --ctrl-tarfile "$(deb "$package_name")" | tar -xO ./triggers |
            grep -qx "activate-noawait ldconfig" || fail "$package_name has no ldconfig trigger"
    done
    # libkael_nn sits on libkael-core0 of the same version.
    [[ ", $(field libkael-nn0 Depends)," == *", libkael-core0 (>= ${version%-*}),"* ]] ||
        fail "libkael-nn0 Depends lacks libkael-core0 (>= ${version%-*}): $(field libkael-nn0 Depends)"
    ! grep -q 'libkael_nn\.so' <(dpkg-deb -c "$(deb libkael-core0)") || fail "libkael-core0 ships libkael_nn"
    [[ "$(field kael-core Recommends)" == *libopenblas0* ]] || fail "kael-core does not recommend libopenblas0"

    local package depends file
    for package in kael-emulated kael-dev kael-cuda python3-kael; do
        has_deb "$package" || continue
        depends=$(field "$package" Depends)
        [[ "$depends," == "kael-core (= $version),"* || ", $depends," == *", kael-core (= $version),"* ]] ||
            fail "$package Depends lacks kael-core (= $version): $depends"
    done
    if has_deb kael-cuda; then
        depends=$(field kael-cuda Depends)
        if [[ "$depends" =~ cuda|nvidia|cublas ]]; then
            fail "kael-cuda must install without a GPU stack, but Depends: $depends"
        fi
        [[ -z "$(field kael-cuda Recommends)" ]] || fail "kael-cuda must not Recommend a GPU stack"
        echo "kael-cuda Suggests: $(field kael-cuda Suggests)"
    fi
    if has_deb python3-kael; then
        check_python_depends
    fi

    local description
    for file in "$debs"/*.deb; do
        package=$(dpkg-deb -f "$file" Package)
        [[ "$(dpkg-deb -f "$file" Version)" == "$version" ]] || fail "$package's version is not $version"
        description=$(dpkg-deb -f "$file" Description)
        [[ "$description" != *" ;"* && "$(head -n 1 <<<"$description")" != *"built using CMake"* ]] ||
            fail "$package: malformed Description: $description"
    done

    # Every NEEDED library of every ELF file is covered by its package's Depends (dpkg-shlibdeps
    # wrote them, with the minimum versions the symbols used need).
    local unpacked soname provider entry
    for file in "$debs"/*.deb; do
        package=$(dpkg-deb -f "$file" Package)
        [[ "$package" != *-dbgsym ]] || continue  # detached debug info: never loaded
        depends=$(dpkg-deb -f "$file" Depends)
        unpacked="$scratch/depends/$package"
        rm -rf "$unpacked"
        mkdir -p "$unpacked"
        dpkg-deb -x "$file" "$unpacked"
        while IFS= read -r elf; do
            while IFS= read -r soname; do
                case "$soname" in
                    libkael_core.so.*) provider=libkael-core0 ;;
                    libkael_nn.so.*) provider=libkael-nn0 ;;
                    libc.so.6 | libm.so.6 | libmvec.so.1 | libdl.so.2 | libpthread.so.0 | librt.so.1 | ld-linux-*.so.*)
                        provider=libc6 ;;
                    libstdc++.so.6) provider=libstdc++6 ;;
                    libgcc_s.so.1) provider=libgcc-s1 ;;
                    libz.so.1) provider=zlib1g ;;
                    libpcre2-8.so.0) provider=libpcre2-8-0 ;;
                    libgloo.so.0) provider=libgloo0 ;;  # the cpu plugin's collectives
                    libdnnl.so.2) provider=libdnnl2 ;;  # the cpu plugin's oneDNN convolutions and pooling
                    *) fail "$package: ${elf#"$unpacked"} needs $soname, which no Depends covers" ;;
                esac
                if [[ "$provider" != "$package" && ", $depends" != *", $provider "* && ", $depends," != *", $provider,"* ]]; then
                    fail "$package: ${elf#"$unpacked"} needs $soname but Depends lacks $provider: $depends"
                fi
            done < <(readelf -dW "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
            while IFS= read -r entry; do
                [[ "$entry" == "\$ORIGIN"* ]] ||
                    fail "$package: ${elf#"$unpacked"} has an RPATH entry not relative to \$ORIGIN: $entry"
            done < <(readelf -dW "$elf" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]/\1/p' | tr ':' '\n')
        done < <(elf_files "$unpacked")
    done
    rm -rf "$scratch/depends"
    echo "Depends of every package cover what its files need"
}

# python3-kael's python3 range matches the ABI tag of its extension module.
check_python_depends() {
    local depends tag module
    depends=$(field python3-kael Depends)
    module=$(dpkg-deb -c "$(deb python3-kael)" | grep -o 'cpython-[0-9]*-[^ ]*\.so' | head -n 1 || true)
    if [[ -z "$module" ]]; then
        echo "python3-kael: no cpython-tagged module; python3 range not checked against it"
        return
    fi
    tag=${module#cpython-}
    tag=${tag%%-*}  # e.g. 311
    local major=${tag:0:1} minor=${tag:1}
    [[ "$depends" =~ python3\ \(\>=\ $major\.$minor~?\) && "$depends" == *"python3 (<< $major.$((minor + 1)))"* ]] ||
        fail "python3-kael's module is $module but Depends says: $depends"
    echo "python3-kael: $module, Depends python3 $major.$minor only"
}

check_core() {
    local root="$scratch/core" usr
    unpack "$root" libkael-core0 kael-core
    usr="$root/usr"
    local plugin_dir="$usr/$libdir/kael/plugins"
    [[ -x "$usr/bin/kael-info" && -x "$usr/bin/kael-demo" ]] || fail "kael-core lacks kael-info or kael-demo"
    compgen -G "$usr/$libdir/libkael_core.so.*" >/dev/null || fail "kael-core lacks $libdir/libkael_core.so.*"
    [[ -f "$plugin_dir/kael_plugin_cpu.so" ]] || fail "kael-core lacks $libdir/kael/plugins/kael_plugin_cpu.so"
    # beside the cpu plugin only its oneDNN convolutions (kael_cpu_onednn.so, opened at run time)
    [[ "$(ls "$plugin_dir" | grep -vx kael_cpu_onednn.so)" == kael_plugin_cpu.so ]] ||
        fail "kael-core ships other plugins: $(ls "$plugin_dir")"
    [[ ! -e "$usr/include" && ! -e "$usr/$libdir/libkael_core.so" ]] || fail "kael-core ships development files"
    ! grep -q 'libkael_core\.so' <(dpkg-deb -c "$(deb kael-core)") || fail "kael-core ships libkael_core (libkael-core0's)"
    local page
    for page in kael-info kael-demo kael-bench; do
        [[ -f "$usr/share/man/man1/$page.1.gz" ]] || fail "kael-core lacks the man page of $page"
    done
    local runpath
    runpath=$(readelf -dW "$usr/bin/kael-info" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
    [[ "$runpath" == "\$ORIGIN/../$libdir" ]] || fail "kael-info RUNPATH is '$runpath', not \$ORIGIN/../$libdir"

    local status
    status=$(kael_info "$root" "$root/info.txt")
    cat "$root/info.txt"
    [[ "$status" == 0 ]] || fail "kael-info exited $status"
    grep -Eq '^  cpu +loaded' "$root/info.txt" || fail "kael-info does not list the cpu plugin as loaded"
    status=$(kael_info "$root" "$root/info.json" --json)
    [[ "$status" == 0 ]] || fail "kael-info --json exited $status"
    [[ "$(json "$root/info.json" '[d["device"] for d in info["devices"]]')" == "['cpu']" ]] ||
        fail "core alone should have exactly the cpu device"
    [[ "$(json "$root/info.json" '[p["path"] for p in info["plugins"]]')" == "['$plugin_dir/kael_plugin_cpu.so']" ]] ||
        fail "core alone should load exactly its own cpu plugin from $plugin_dir"
    status=$(kael_info "$root" "$root/device.txt" --device cuda)
    [[ "$status" == 2 ]] || fail "kael-info --device cuda exited $status, expected 2"
    clean "$usr/bin/kael-demo" --device cpu | tee "$root/demo.txt"
    grep -q "matches cpu" "$root/demo.txt" || fail "kael-demo from kael-core"
    echo "PASS core: kael-info lists cpu only, exit 0; --device cuda exits 2"
}

check_emulated() {
    local root="$scratch/emulated" status
    unpack "$root" libkael-core0 kael-core kael-emulated
    [[ -f "$root/usr/$libdir/kael/plugins/kael_plugin_emulated.so" ]] || fail "kael-emulated lacks its plugin"
    status=$(kael_info "$root" "$root/info.txt")
    cat "$root/info.txt"
    [[ "$status" == 0 ]] || fail "kael-info exited $status"
    grep -Eq '^  cuda:0 .*\[emulated\]' "$root/info.txt" || fail "kael-info does not list cuda:0 as emulated"
    status=$(kael_info "$root" "$root/info.json" --json)
    [[ "$status" == 0 ]] || fail "kael-info --json exited $status"
    [[ "$(json "$root/info.json" '[(d["device"], d["plugin"], d["emulated"]) for d in info["devices"]]')" == \
        "[('cpu', 'cpu', False), ('cuda:0', 'emulated', True)]" ]] || fail "expected cpu and an emulated cuda:0"
    status=$(kael_info "$root" "$root/device.txt" --device cuda:0)
    [[ "$status" == 0 ]] || fail "kael-info --device cuda:0 exited $status with the emulated plugin"
    echo "PASS emulated: cuda:0 listed, marked emulated"
}

check_cuda() {
    if ! has_deb kael-cuda; then
        echo "SKIP cuda: no kael-cuda package (the build has no cuda plugin: no nvcc)"
        exit "$SKIP"
    fi
    local root="$scratch/cuda" status count
    unpack "$root" libkael-core0 kael-core kael-cuda
    [[ -f "$root/usr/$libdir/kael/plugins/kael_plugin_cuda.so" ]] || fail "kael-cuda lacks its plugin"
    status=$(kael_info "$root" "$root/info.txt" --verbose)
    cat "$root/info.txt"
    [[ "$status" == 0 ]] || fail "kael-info exited $status (cpu must stay usable)"
    status=$(kael_info "$root" "$root/info.json" --json)
    [[ "$status" == 0 ]] || fail "kael-info --json exited $status"
    local record='[p for p in info["plugins"] if p["name"] == "cuda"][0]'
    count=$(json "$root/info.json" "${record}[\"device_count\"]")
    if [[ "$count" == 0 ]]; then
        [[ "$(json "$root/info.json" "${record}[\"status\"]")" == "no devices" ]] ||
            fail "the cuda plugin without a GPU should be 'no devices'"
        [[ -n "$(json "$root/info.json" "${record}[\"reason\"]")" ]] || fail "'no devices' without a reason"
        grep -q "reason: " "$root/info.txt" || fail "kael-info does not print the reason"
        status=$(kael_info "$root" "$root/device.txt" --device cuda)
        cat "$root/device.txt"
        [[ "$status" == 2 ]] || fail "kael-info --device cuda exited $status, expected 2"
        echo "PASS cuda (no GPU here): 'no devices' with the reason, exit 0; --device cuda exits 2"
    else
        [[ "$(json "$root/info.json" "${record}[\"status\"]")" == "loaded" ]] || fail "cuda plugin not loaded"
        [[ "$(json "$root/info.json" '[d["emulated"] for d in info["devices"] if d["device"] == "cuda:0"]')" == "[False]" ]] ||
            fail "cuda:0 is not served by the cuda plugin"
        status=$(kael_info "$root" "$root/device.txt" --device cuda)
        [[ "$status" == 0 ]] || fail "kael-info --device cuda exited $status on a GPU machine"
        clean "$root/usr/bin/kael-demo" | tee "$root/demo.txt"
        grep -q DIFFERS "$root/demo.txt" && fail "kael-demo differs on cuda"
        grep -q "matches cpu" "$root/demo.txt" || fail "kael-demo on cuda"
        echo "PASS cuda ($count GPU(s)): plugin loaded, cuda:0 usable, kael-demo matches cpu"
    fi
}

check_dev() {
    local root="$scratch/dev" usr
    unpack "$root" libkael-core0 libkael-nn0 kael-core kael-dev
    usr="$root/usr"
    local lib="$usr/$libdir"
    local file
    for file in include/kael/ops.h include/kael/plugin_api.h include/kael/plugin_ops.h \
        include/kael/plugin_structs.h include/kael/plugin_slots.h \
        include/kael/plugin_extensions.h \
        include/kael/plugin_kit.h include/kael/nn.h include/kael/gpt.h bin/kael-conformance \
        "$libdir/libkael_core.so" "$libdir/libkael_nn.so" \
        "$libdir/cmake/kael/kaelConfig.cmake" "$libdir/cmake/kael/kaelConfigVersion.cmake" \
        "$libdir/cmake/kael/kaelTargets.cmake" "$libdir/pkgconfig/kael.pc"; do
        [[ -e "$usr/$file" ]] || fail "core + dev lack usr/$file"
    done

    # kael-conformance runs from the root (libkael_core through its $ORIGIN RPATH, Boost.Test
    # linked in) and compares the cpu device with itself.
    clean "$usr/bin/kael-conformance" --device cpu --filter long_sums | tee "$root/conformance.txt" ||
        fail "kael-conformance --device cpu from the root"
    grep -q "1 case on cpu (plugin cpu .*): 1 ran on the plugin" "$root/conformance.txt" ||
        fail "kael-conformance printed no report"

    # CMake: find_package(kael CONFIG) from the unpacked root only (no package registries).
    local build="$root/consumer-build"
    clean "$cmake_command" -S "$source_dir/consumer" -B "$build" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$usr" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
        -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF >"$root/configure.log" 2>&1 ||
        { cat "$root/configure.log" >&2; fail "consumer configure"; }
    local found
    found=$(sed -n 's/^kael_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
    [[ "$found" == "$lib/cmake/kael" ]] || fail "find_package(kael) found '$found', not $lib/cmake/kael"
    [[ "$(cat "$build/kael_plugin_dir.txt")" == "$lib/kael/plugins" ]] ||
        fail "kael_PLUGIN_DIR is '$(cat "$build/kael_plugin_dir.txt")', not $lib/kael/plugins"
    clean "$cmake_command" --build "$build" >"$root/build.log" 2>&1 ||
        { cat "$root/build.log" >&2; fail "consumer build"; }
    # No LD_LIBRARY_PATH: CMake's build RPATH names the root's lib folder, and libkael_core finds
    # the cpu plugin next to itself.
    readelf -dW "$build/kael_consumer" | grep -E '\((RPATH|RUNPATH)\)'
    clean "$build/kael_consumer" | tee "$root/consumer.txt"
    grep -q "kael consumer ok" "$root/consumer.txt" || fail "the CMake consumer"
    grep -qF "cpu plugin $lib/kael/plugins/kael_plugin_cpu.so" "$root/consumer.txt" ||
        fail "the consumer did not use the root's cpu plugin"

    # pkg-config: kael.pc names /usr paths; PKG_CONFIG_SYSROOT_DIR maps them into the root. Its
    # Cflags carry -std=c++20, so a plain c++ builds the consumer.
    local flags pc_libdir pc_plugindir
    export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
    [[ "$(pkg-config --modversion kael)" == "$(field kael-dev Version | sed 's/-[^-]*$//')" ]] || fail "kael.pc version"
    grep -qx "prefix=/usr" "$lib/pkgconfig/kael.pc" || fail "kael.pc's prefix is not /usr"
    pc_plugindir=$(PKG_CONFIG_SYSROOT_DIR= pkg-config --variable=plugindir kael)
    [[ "$pc_plugindir" == "/usr/$libdir/kael/plugins" ]] || fail "kael.pc plugindir is '$pc_plugindir'"
    flags=$(pkg-config --cflags --libs kael)
    pc_libdir="$lib"
    echo "pkg-config --cflags --libs kael: $flags; plugindir $pc_plugindir"
    [[ " $flags " == *" -std=c++20 "* ]] || fail "kael.pc's Cflags lack -std=c++20"
    # shellcheck disable=SC2086  # the flags are words
    clean c++ -O1 "$source_dir/consumer/main.cpp" -o "$root/consumer-pc" $flags \
        -Wl,-rpath,"$pc_libdir" || fail "building the consumer with pkg-config's flags"
    clean "$root/consumer-pc" | grep -q "kael consumer ok" || fail "the pkg-config consumer"
    unset PKG_CONFIG_SYSROOT_DIR
    echo "PASS dev: kael-conformance runs; find_package(kael) and pkg-config consumers build and run against the root"
}

check_python() {
    if ! has_deb python3-kael; then
        echo "SKIP python: no python3-kael package (no python install component in this build)"
        exit "$SKIP"
    fi
    local root="$scratch/python" site
    unpack "$root" libkael-core0 libkael-nn0 kael-core python3-kael
    site="$root/usr/lib/python3/dist-packages"
    [[ -d "$site/kael" ]] || fail "python3-kael lacks usr/lib/python3/dist-packages/kael"
    # From the scratch folder, so no kael source folder can shadow the unpacked one.
    (cd "$root" && clean env PYTHONPATH="$site" "$python" -c \
        'import kael, sys; print(kael.__file__); print(kael.devices())') | tee "$root/python.txt" ||
        fail "import kael from the unpacked python3-kael"
    grep -qF "$site/kael/" "$root/python.txt" || fail "imported a kael that is not the unpacked one"
    grep -q cpu "$root/python.txt" || fail "kael.devices() does not list cpu"
    echo "PASS python: import kael from the unpacked root lists its devices"
}

# A third party's plugin: the out-of-tree example (docs/examples/toy_plugin) built from the
# unpacked kael-dev alone, found through KAEL_PLUGIN_PATH by the unpacked kael-core, used from
# C++ (its demo) and Python (when python3-kael was built), and passing kael-conformance.
check_plugin() {
    local root="$scratch/plugin" usr packages=(libkael-core0 libkael-nn0 kael-core kael-dev)
    has_deb python3-kael && packages+=(python3-kael)
    unpack "$root" "${packages[@]}"
    usr="$root/usr"
    local build="$root/toy-build" example="$source_dir/../docs/examples/toy_plugin"
    clean "$cmake_command" -S "$example" -B "$build" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$usr" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
        -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF >"$root/configure.log" 2>&1 ||
        { cat "$root/configure.log" >&2; fail "toy plugin configure against the unpacked kael-dev"; }
    clean "$cmake_command" --build "$build" >"$root/build.log" 2>&1 ||
        { cat "$root/build.log" >&2; fail "toy plugin build"; }
    [[ -f "$build/kael_plugin_toy.so" ]] || fail "no kael_plugin_toy.so in $build"
    # Only the entry is exported, and no kael library is linked.
    local exported
    exported=$(nm -D --defined-only "$build/kael_plugin_toy.so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}')
    [[ "$exported" == "kael_plugin_query" ]] || fail "the toy plugin exports: $exported"
    ! grep -q 'libkael' <(readelf -dW "$build/kael_plugin_toy.so") || fail "the toy plugin links a kael library"
    # Installed with kael's prefix, it lands in kael's plugin folder and loads with no variable.
    clean "$cmake_command" --install "$build" --prefix "$usr" >/dev/null || fail "toy plugin install"
    [[ -f "$usr/$libdir/kael/plugins/kael_plugin_toy.so" ]] ||
        fail "the toy plugin did not install into $libdir/kael/plugins"
    clean "$usr/bin/kael-info" | grep -qE '^  toy +loaded' || fail "the installed toy plugin is not loaded"
    rm "$usr/$libdir/kael/plugins/kael_plugin_toy.so"
    clean env KAEL_PLUGIN_PATH="$build" "$usr/bin/kael-info" | tee "$root/info.txt" ||
        fail "kael-info with the toy plugin"
    grep -qE '^  toy +loaded +ABI [0-9.]+  serves toy \(gpu, 2 devices, selected\)' "$root/info.txt" ||
        fail "kael-info does not list the toy plugin serving toy"
    grep -q '^  toy:1 ' "$root/info.txt" || fail "kael-info does not list toy:1"
    clean env KAEL_PLUGIN_PATH="$build" "$build/toy_demo" | tee "$root/demo.txt" || fail "toy_demo"
    grep -q "toy demo ok" "$root/demo.txt" || fail "toy_demo"
    if [[ -x "$usr/bin/kael-conformance" ]]; then
        clean env KAEL_PLUGIN_PATH="$build" "$usr/bin/kael-conformance" --device toy:0 \
            >"$root/conformance.txt" 2>&1 || { tail -40 "$root/conformance.txt" >&2; fail "kael-conformance --device toy:0"; }
        tail -5 "$root/conformance.txt"
        # The toy plugin leaves most slots to the cpu plugin: the report must say so.
        grep -qE '^[0-9]+ cases on toy:0 \(plugin toy [^)]*\): [0-9]+ ran on the plugin, [0-9]+ used the cpu fallback for: .*matmul x[0-9]+.*; 0 failed$' \
            "$root/conformance.txt" || fail "kael-conformance on toy:0 does not name its fallbacks"
    else
        fail "kael-dev lacks bin/kael-conformance"
    fi
    if has_deb python3-kael; then
        (cd "$root" && clean env KAEL_PLUGIN_PATH="$build" \
            PYTHONPATH="$usr/lib/python3/dist-packages" "$python" -c '
import kael
t = kael.arange(4, dtype=kael.float32).to("toy:1")
print("python on", t.device, (t * t + t).cpu().tolist(), kael.fallback_counts())
assert (t * t + t).cpu().tolist() == [0.0, 2.0, 6.0, 12.0]') | tee "$root/python.txt" ||
            fail "the toy plugin from Python"
    fi
    echo "PASS plugin: an out-of-tree plugin built from kael-dev alone loads, computes and conforms"
}

for check in "${checks[@]}"; do
    case "$check" in
        build | depends | core | emulated | cuda | dev | python | plugin) ;;
        *) fail "unknown check $check" ;;
    esac
done
if [[ ${#checks[@]} -eq 1 ]]; then
    "check_${checks[0]}"  # errexit applies inside; a skip exits 77
    exit 0
fi
# Several checks: each in its own run of this script, so a skip does not stop the others.
failed=()
for check in "${checks[@]}"; do
    echo "=== $check"
    result=0
    "$0" "$build_dir" "$scratch" "$check" || result=$?
    if [[ $result -ne 0 && $result -ne $SKIP ]]; then
        failed+=("$check")
    fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "failed checks: ${failed[*]}" >&2
    exit 1
fi
echo "all checks passed (or skipped)"
