#!/usr/bin/env python3
"""Runs the cuda plugin's elementwise kernels (plugins/cuda/element*.cu*) on host threads, one
std::thread per CUDA thread and a std::barrier for __syncthreads, against the shared Element
task: the kernels' index, tile and alignment logic is checked on machines without a GPU.
Copies the sources with each `kernel<<<grid, block>>>(args)` rewritten to an emulated launch,
builds elementwise_paths.cpp with them and runs it, once more with 64-bit offsets."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SOURCES = ["element_vector.cuh", "element_tiles.cuh", "element_walk.cuh", "elementwise.cu"]


def split_top_level(text):
    """grid and block of a launch configuration; shared-memory bytes and the stream, when
    given, do not matter on the host."""
    parts = split_arguments(text)
    if len(parts) < 2:
        raise ValueError("no launch configuration in " + text)
    return parts[0], parts[1]


def split_arguments(text):
    """text's top-level comma-separated parts."""
    depth = 0
    parts = []
    start = 0
    for i, c in enumerate(text):
        depth += c in "(<{["
        depth -= c in ")>}]"
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def early_launches(source):
    """launch_small_early(&kernel, grid, block, args...) as an emulated launch."""
    marker = "launch_small_early("
    out = []
    at = 0
    while (found := source.find(marker, at)) >= 0:
        depth = 0
        for end in range(found + len(marker) - 1, len(source)):
            depth += source[end] == "("
            depth -= source[end] == ")"
            if depth == 0:
                break
        kernel, grid, block, *rest = split_arguments(source[found + len(marker):end])
        kernel = kernel.lstrip("&")
        name = kernel.split("<")[0]
        out.append(source[at:found])
        out.append(f'emulate(dim3({grid}), dim3({block}), [&] {{ {kernel}({", ".join(rest)}); }}, '
                   f'"{name}")')
        at = end + 1
    out.append(source[at:])
    return "".join(out)


def emulated(source):
    source = early_launches(source)

    def launch(match):
        kernel, configuration, arguments = match.groups()
        grid, block = split_top_level(configuration)
        name = kernel.split("<")[0]
        return f'emulate(dim3({grid}), dim3({block}), [&] {{ {kernel}({arguments}); }}, "{name}");'
    source = re.sub(r"([\w:]+<[^;]*?>)\s*<<<(.*?)>>>\((.*?)\);", launch, source, flags=re.S)
    # The host compiler wants the attribute before `static`, which __shared__ stands for here.
    return source.replace("__shared__ alignas(8)", "alignas(8) __shared__")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True, help="the kael source tree")
    parser.add_argument("--cxx", default="g++")
    arguments = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as folder:
        for name in SOURCES:
            with open(os.path.join(arguments.root, "plugins", "cuda", name)) as file:
                text = emulated(file.read())
            if name == "elementwise.cu":  # the runner only, not the plugin's entry points
                text = text[:text.index("// Whether every byte of the fill value")]
                for header in ("cuda_kernels.h", "staging.h"):  # the plugin's, not needed here
                    text = text.replace(f'#include "{header}"\n', "")
                text += "}  // namespace\n}  // namespace kael::cuda\n"
            with open(os.path.join(folder, name), "w") as file:
                file.write(text)
        binary = os.path.join(folder, "elementwise_paths")
        subprocess.run([arguments.cxx, "-std=c++20", "-O1", "-pthread", f"-I{here}", f"-I{folder}",
                        f"-I{arguments.root}/plugins/shared/include",
                        f"-I{arguments.root}/plugin_api/include",
                        os.path.join(here, "elementwise_paths.cpp"), "-o", binary], check=True)
        for limit in (None, "0"):
            environment = dict(os.environ)
            if limit is not None:
                environment["KAEL_CUDA_INDEX32_LIMIT"] = limit
            print(f"KAEL_CUDA_INDEX32_LIMIT={limit or 'default'}", flush=True)
            if subprocess.run([binary], env=environment).returncode != 0:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
