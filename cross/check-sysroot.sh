#!/usr/bin/env bash
# Checks an arm64 sysroot before a cross build: which release it is (Jetson Linux / JetPack when it is
# a board's rootfs), what C and C++ runtimes it has, whether jetagent's dependencies are there, and
# whether the cross compiler's C++ runtime is too new for it.
#
#   cross/check-sysroot.sh SYSROOT [CROSS_PREFIX]     (CROSS_PREFIX defaults to aarch64-linux-gnu-)
#
# Exit status 0 when a build can go ahead, 1 when something it needs is missing or incompatible.
set -uo pipefail
root=${1:?usage: cross/check-sysroot.sh SYSROOT [CROSS_PREFIX]}
prefix=${2:-${JETAGENT_CROSS_PREFIX:-aarch64-linux-gnu-}}
lib="$root/usr/lib/aarch64-linux-gnu"
problems=0

say() { printf '%-22s %s\n' "$1" "$2"; }
missing() { say "$1" "MISSING: $2"; problems=$((problems + 1)); }

[ -d "$lib" ] || { echo "check-sysroot: $root has no usr/lib/aarch64-linux-gnu: not an arm64 root filesystem" >&2; exit 1; }

release=$(. "$root/etc/os-release" 2>/dev/null && echo "${PRETTY_NAME:-unknown}")
say "release" "${release:-unknown (no etc/os-release)}"
if [ -f "$root/etc/nv_tegra_release" ]; then
    l4t=$(head -n 1 "$root/etc/nv_tegra_release")
    case "$l4t" in
    "# R35"*) generation="JetPack 5" ;;
    "# R36"*) generation="JetPack 6" ;;
    "# R38"*) generation="JetPack 7" ;;
    *) generation="unknown JetPack" ;;
    esac
    say "Jetson Linux" "$l4t ($generation)"
else
    say "Jetson Linux" "none (not a Jetson root filesystem: binaries built here are for testing only)"
fi

glibc=$(ls "$lib"/libc-*.so "$root"/lib/aarch64-linux-gnu/libc-*.so 2>/dev/null | sed -n 's/.*libc-\([0-9.]*\)\.so/\1/p' | head -n 1)
if [ -z "$glibc" ]; then
    libc=$(ls "$lib/libc.so.6" "$root/lib/aarch64-linux-gnu/libc.so.6" 2>/dev/null | head -n 1)
    glibc=$(strings "$libc" 2>/dev/null | sed -n 's/^GLIBC_\([0-9.]*\)$/\1/p' | sort -V | tail -n 1)
fi
say "glibc" "${glibc:-unknown}"

glibcxx() { strings "$1" 2>/dev/null | sed -n 's/^GLIBCXX_\(3\.4\.[0-9]*\)$/\1/p' | sort -V | tail -n 1; }
target_cxx=$(glibcxx "$(ls "$lib"/libstdc++.so.6* 2>/dev/null | head -n 1)")
say "libstdc++" "GLIBCXX_${target_cxx:-unknown}"

if command -v "${prefix}g++" >/dev/null; then
    compiler_lib=$("${prefix}g++" -print-file-name=libstdc++.so.6)
    compiler_cxx=$(glibcxx "$(readlink -f "$compiler_lib")")
    say "cross compiler" "$("${prefix}g++" -dumpfullversion) (${prefix}g++), its libstdc++ GLIBCXX_${compiler_cxx:-unknown}"
    if [ -n "$target_cxx" ] && [ -n "$compiler_cxx" ] &&
        [ "$(printf '%s\n%s\n' "$target_cxx" "$compiler_cxx" | sort -V | tail -n 1)" != "$target_cxx" ]; then
        say "" "WARNING: binaries may need libstdc++ symbols up to GLIBCXX_$compiler_cxx, but the sysroot"
        say "" "has GLIBCXX_$target_cxx: use an older cross compiler (see cross/README.md) or build on the board"
        problems=$((problems + 1))
    fi
else
    missing "cross compiler" "${prefix}g++ not found"
fi

# jetagent's dependencies, by the files its build looks for.
check() { # NAME PATTERN...
    local name=$1
    shift
    for pattern in "$@"; do
        # shellcheck disable=SC2086
        if ls -d $pattern >/dev/null 2>&1; then
            say "$name" "found"
            return
        fi
    done
    missing "$name" "none of: $*"
}
check OpenCV "$lib/cmake/opencv4/OpenCVConfig.cmake" "$root/usr/lib/cmake/opencv4/OpenCVConfig.cmake" \
    "$root/usr/local/lib/cmake/opencv4/OpenCVConfig.cmake"
check yaml-cpp "$lib/cmake/yaml-cpp/yaml-cpp-config.cmake" "$root/usr/share/cmake/yaml-cpp/yaml-cpp-config.cmake" \
    "$root/usr/lib/cmake/yaml-cpp/yaml-cpp-config.cmake"
check spdlog "$lib/cmake/spdlog/spdlogConfig.cmake" "$root/usr/lib/cmake/spdlog/spdlogConfig.cmake"
check ONNX "$lib/cmake/ONNX/ONNXConfig.cmake" "$root/usr/local/lib/cmake/ONNX/ONNXConfig.cmake"
check protobuf "$lib/libprotobuf.so" "$root/usr/local/lib/libprotobuf.so"
check CLI11 "$root/usr/share/cmake/CLI11/CLI11Config.cmake" "$lib/cmake/CLI11/CLI11Config.cmake" \
    "$root/usr/lib/cmake/CLI11/CLI11Config.cmake"
check nlohmann-json "$root/usr/share/cmake/nlohmann_json/nlohmann_jsonConfig.cmake" \
    "$lib/cmake/nlohmann_json/nlohmann_jsonConfig.cmake" "$root/usr/lib/cmake/nlohmann_json/nlohmann_jsonConfig.cmake"
if ls "$lib"/cmake/GTest/GTestConfig.cmake >/dev/null 2>&1; then say GoogleTest "found"; else say GoogleTest "absent: configure with -DJETAGENT_BUILD_TESTS=OFF"; fi
# Optional: what the GPU backends will use once they exist.
if ls "$root"/usr/local/cuda*/include/cuda_runtime.h >/dev/null 2>&1; then say CUDA "found"; else say CUDA "absent"; fi
if ls "$root"/usr/include/aarch64-linux-gnu/NvInfer.h "$root"/usr/include/NvInfer.h >/dev/null 2>&1; then say TensorRT "found"; else say TensorRT "absent"; fi

if find "$root/usr/lib" -maxdepth 3 -type l -lname '/*' 2>/dev/null | grep -q .; then
    say "symlinks" "absolute links found: run cross/fix-sysroot.sh $root"
    problems=$((problems + 1))
fi

[ "$problems" -eq 0 ] && exit 0
echo "check-sysroot: $problems problem(s); see above" >&2
exit 1
