#!/usr/bin/env bash
# Makes an arm64 root filesystem usable as a sysroot on the build machine:
#  - absolute symlinks (/usr/lib/.../libz.so -> /lib/...) would point into the build machine itself,
#    and the linker would silently take a host or static library instead; they become relative;
#  - the BLAS/LAPACK links that update-alternatives makes at installation time are created when a
#    tree was only extracted (OpenCV needs them).
#
#   cross/fix-sysroot.sh DIR
# Safe to run more than once.
set -euo pipefail
root=${1:?usage: cross/fix-sysroot.sh SYSROOT}
[ -d "$root/usr/lib/aarch64-linux-gnu" ] || { echo "fix-sysroot: $root has no usr/lib/aarch64-linux-gnu" >&2; exit 1; }
root=$(cd "$root" && pwd)

find "$root" -xdev -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
done

lib="$root/usr/lib/aarch64-linux-gnu"
for name in blas lapack; do
    if [ -e "$lib/$name/lib$name.so.3" ] && [ ! -e "$lib/lib$name.so.3" ]; then
        ln -s "$name/lib$name.so.3" "$lib/lib$name.so.3"
    fi
done
