#!/usr/bin/env bash
# cross/check-sysroot.sh on a stand-in JetPack 5 root filesystem: it must name the release and refuse a
# cross compiler whose C++ runtime is newer than the board's (GLIBCXX_3.4.28, Ubuntu 20.04).
set -uo pipefail
script=${1:?usage: check_sysroot_test.sh CHECK_SYSROOT_SH}
prefix=${JETAGENT_CROSS_PREFIX:-aarch64-linux-gnu-}
if ! command -v "${prefix}g++" >/dev/null; then
    echo "skipped: ${prefix}g++ is not installed (tools/dev.sh deps installs it)"
    exit 77
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/lib/aarch64-linux-gnu" "$root/etc"
printf 'GLIBCXX_3.4.27\nGLIBCXX_3.4.28\n' > "$root/usr/lib/aarch64-linux-gnu/libstdc++.so.6"
echo '# R35 (release), REVISION: 4.1, GCID: 0, BOARD: t186ref, EABI: aarch64, DATE: -' > "$root/etc/nv_tegra_release"
echo 'PRETTY_NAME="Ubuntu 20.04.6 LTS"' > "$root/etc/os-release"

output=$("$script" "$root" "$prefix" 2>&1)
status=$?
echo "$output"
fail() { echo "FAILED: $*"; exit 1; }
[ "$status" -eq 1 ] || fail "expected exit status 1, got $status"
grep -q 'JetPack 5' <<<"$output" || fail "the release is not named"
grep -q 'GLIBCXX_3.4.28' <<<"$output" || fail "the sysroot's libstdc++ level is not reported"
compiler_gcc=$("${prefix}g++" -dumpversion | cut -d. -f1)
if [ "$compiler_gcc" -ge 11 ]; then
    grep -q 'WARNING: binaries may need libstdc++ symbols' <<<"$output" || fail "a GCC $compiler_gcc cross compiler was not flagged"
fi
grep -q 'OpenCV .*MISSING' <<<"$output" || fail "the missing OpenCV is not reported"
echo "passed"
