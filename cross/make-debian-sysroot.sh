#!/usr/bin/env bash
# Builds a Debian 12 (bookworm) arm64 sysroot holding jetagent's build dependencies, for
# cross-compiling with cross/aarch64-linux-gnu.cmake and running the tests under qemu-user. The host's
# own packages are not touched: mmdebstrap only downloads and extracts into a directory.
#
#   cross/make-debian-sysroot.sh            prints the sysroot's path (building it if needed)
#
# The sysroot is cached by a hash of its package list and of this script, under
# $JETAGENT_CACHE_DIR (default ~/.cache/jetagent); a changed list makes a new one.
# Needs mmdebstrap (and root, or mmdebstrap's unshare mode) and network access to the Debian archive.
set -euo pipefail

# jetagent's build and test dependencies, for arm64.
packages=(
    libc6-dev libstdc++-12-dev
    libopencv-dev libyaml-cpp-dev libspdlog-dev libonnx-dev libprotobuf-dev
    libcli11-dev nlohmann-json3-dev libgtest-dev libgpiod-dev
    libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev # hal's GStreamer sources
    libgstrtspserver-1.0-dev # the RTSP reconnect test's server
    gstreamer1.0-plugins-base # videotestsrc, videoconvert, appsink: the GStreamer source tests
    libxnnpack-dev libpthreadpool-dev # the xnnpack backend (its NEON kernels, run under qemu)
    libcpp-httplib-dev libturbojpeg0-dev # the live view's HTTP server and JPEG encoder; JPEG files
    libpng-dev # PNG files (hal/image_codec.h)
    libmosquitto-dev # the mqtt plugin (MQTT telemetry)
)
suite=bookworm
mirror=${JETAGENT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${JETAGENT_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

script=$(readlink -f "${BASH_SOURCE[0]}")
key=$( (printf '%s\n' "$suite" "${packages[@]}"; cat "$script" "$(dirname "$script")/fix-sysroot.sh") | sha256sum | cut -c1-12)
cache=${JETAGENT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/jetagent}
root="$cache/sysroot-debian12-arm64-$key"

if [ -f "$root/.jetagent-sysroot-complete" ]; then
    echo "$root"
    exit 0
fi

command -v mmdebstrap >/dev/null || { echo "make-debian-sysroot: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 1; }
mkdir -p "$cache"
# Sysroots of other package lists are stale (about a gigabyte each): only the current one is kept.
find "$cache" -maxdepth 1 -name 'sysroot-debian12-arm64-*' ! -name "$(basename "$root")" -exec rm -rf {} +
rm -rf "$root" "$root.partial"
echo "make-debian-sysroot: creating $root" >&2
include=$(IFS=,; echo "${packages[*]}")
mmdebstrap --quiet --variant=extract --architectures=arm64 --include="$include" \
    "$suite" "$root.partial" \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main" >&2

"$(dirname "$script")/fix-sysroot.sh" "$root.partial"

printf '%s\n' "${packages[@]}" > "$root.partial/.jetagent-sysroot-complete"
mv "$root.partial" "$root"
echo "$root"
