#!/usr/bin/env bash
# A built jetagent .deb, checked as dpkg sees it. The core package (jetagent): its architecture,
# the config as a conffile, the files a service install needs, maintainer scripts, a binary built
# for that architecture, its own plugins (GStreamer's sources, the live view's server, the CPU
# engine) and no other, and Depends that name none of the libraries the core must not pull in (OpenCV
# among them). A plugin package (jetagent-opencv, jetagent-rtsp, jetagent-tensorrt): its plugins for that
# architecture in the plugin directory and nothing else, and Depends on the core of its version.
#
#   systemd/check-deb.sh PACKAGE.deb DEBIAN_ARCH      (tools/dev.sh test and package run it)
set -euo pipefail

deb=${1:?usage: check-deb.sh PACKAGE.deb DEBIAN_ARCH}
arch=${2:?usage: check-deb.sh PACKAGE.deb DEBIAN_ARCH}
fail() {
    echo "check-deb.sh: $deb: $*" >&2
    exit 1
}
[ -f "$deb" ] || fail "no such file"

field() { dpkg-deb --field "$deb" "$1"; }
package=$(field Package)
version=$(field Version)
[ "$(field Architecture)" = "$arch" ] || fail "Architecture is '$(field Architecture)', not $arch"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
depends=$(field Depends)
case $arch in
amd64) expected="x86-64" ;;
arm64) expected="ARM aarch64" ;;
*) fail "no expected 'file' output for architecture $arch" ;;
esac
# Where the core looks for plugins (bin/../lib/jetagent/plugins).
plugin_dir=/usr/lib/jetagent/plugins

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb --contents "$deb" | awk '{print $NF}' | sed 's#^\./#/#' >"$work/contents"
dpkg-deb --control "$deb" "$work/control"
dpkg-deb --extract "$deb" "$work/root"

# A plugin package: the plugins its component installs (plugins/*/CMakeLists.txt), nothing else.
check_plugin_package() { # plugin files...
    echo "$depends" | grep -qF "jetagent (= $version)" ||
        fail "Depends does not name the core of its own version, 'jetagent (= $version)': '$depends'"
    [ ! -e "$work/control/conffiles" ] || fail "a plugin package has conffiles: $(cat "$work/control/conffiles")"
    local file path description
    for file in "$@"; do
        path=$plugin_dir/$file
        grep -qxF "$path" "$work/contents" || fail "does not contain $path"
        description=$(file -b "$work/root$path")
        echo "$description" | grep -q "$expected" || fail "$path is not $expected: $description"
    done
    local others
    others=$(grep -v '/$' "$work/contents" | grep -vxF "$(printf '%s\n' "$@" | sed "s#^#$plugin_dir/#")" || true)
    [ -z "$others" ] || fail "holds files that are not its plugins: $others"
    echo "check-deb.sh: $(basename "$deb"): $arch, $* in $plugin_dir ($expected); Depends: $depends"
}
case $package in
jetagent) ;;
jetagent-opencv)
    echo "$depends" | grep -q 'libopencv-dnn' || fail "Depends lacks OpenCV's DNN module: '$depends'"
    echo "$depends" | grep -q 'libopencv-highgui' || fail "Depends lacks OpenCV's highgui: '$depends'"
    check_plugin_package jetagent-opencv-dnn.so jetagent-viewer.so
    exit 0
    ;;
jetagent-rtsp)
    echo "$depends" | grep -q 'libgstrtspserver' || fail "Depends lacks gst-rtsp-server: '$depends'"
    check_plugin_package jetagent-rtsp-server.so
    exit 0
    ;;
jetagent-tensorrt)
    check_plugin_package jetagent-tensorrt.so
    exit 0
    ;;
*) fail "Package is '$package', not jetagent or one of its plugin packages" ;;
esac

# The core package from here on.
echo "$depends" | grep -q 'libjs-chart\.js' || fail "Depends lacks libjs-chart.js (the HTML reports' Chart.js): '$depends'"
# What the plugins are for: a headless core never pulls in Qt, X11, GDAL, FFmpeg's libavcodec or
# any of OpenCV (its core links libGLX and through it X11; its GUI, codec and DNN modules far more):
# the core draws, resizes and decodes with its own code (test-deb-install.sh checks the same of
# Depends' closure).
forbidden='^(libqt[0-9]|qt[0-9]|libx11-|libgdal|libavcodec|libopencv-)'
named=$(echo "$depends" | sed 's/[,|]/\n/g' | awk '{print $1}' | grep -E "$forbidden" || true)
[ -z "$named" ] || fail "Depends names what only plugins may need: $(echo "$named" | tr '\n' ' ')('$depends')"
# The core's own plugins (COMPONENT core in plugins/), and no other: GStreamer's sources, the
# live view's server, the MQTT client and the CPU engine, loaded only by the runs that use them.
# The MQTT client links libmosquitto (small), which dpkg-shlibdeps names.
echo "$depends" | grep -q 'libmosquitto1' || fail "Depends lacks libmosquitto1 (the mqtt plugin's): '$depends'"
if echo "$depends" | grep -q 'libgstrtspserver'; then
    fail "Depends names gst-rtsp-server, which is jetagent-rtsp's: '$depends'"
fi
plugins=$(grep "^/usr/lib/jetagent/plugins/." "$work/contents" | sort | tr '\n' ' ' || true)
expected_plugins="/usr/lib/jetagent/plugins/jetagent-gstreamer.so /usr/lib/jetagent/plugins/jetagent-live.so /usr/lib/jetagent/plugins/jetagent-mqtt.so /usr/lib/jetagent/plugins/jetagent-xnnpack.so "
[ "$plugins" = "$expected_plugins" ] ||
    fail "the core package holds the plugins '$plugins', not '$expected_plugins'"

grep -qx '/etc/jetagent/agent.yaml' "$work/control/conffiles" 2>/dev/null ||
    fail "conffiles does not list /etc/jetagent/agent.yaml"
for script in postinst prerm postrm; do
    [ -x "$work/control/$script" ] || fail "no executable $script"
done
grep -q 'systemd-sysusers' "$work/control/postinst" || fail "postinst does not create the user"
if grep -v '^[[:space:]]*#' "$work/control/postinst" | grep -qE 'systemctl +(enable|start|restart)'; then
    fail "postinst enables or starts the service; the user configures it first"
fi

for path in /usr/bin/jetagent /lib/systemd/system/jetagent.service /usr/lib/sysusers.d/jetagent.conf \
    /usr/lib/tmpfiles.d/jetagent.conf /etc/jetagent/agent.yaml \
    /usr/share/jetagent/models/shapes_cnn.onnx /usr/share/jetagent/models/shapes_labels.txt \
    /usr/share/jetagent/boards/orin-nano-nx.yaml /usr/share/jetagent/configs/agent.yaml \
    /usr/share/jetagent/fixtures/orin-nano-jp6.yaml \
    /usr/share/jetagent/fleet/prometheus.yml /usr/share/jetagent/fleet/jetagent.rules.yml \
    /usr/share/jetagent/fleet/grafana-dashboard.json \
    /usr/share/doc/jetagent/rtsp-cameras.conf.example /usr/share/doc/jetagent/README.md \
    /usr/share/doc/jetagent/docs/running.md /usr/share/doc/jetagent/docs/service.md \
    /usr/share/doc/jetagent/docs/jetson-sysfs.md; do
    grep -qx "$path" "$work/contents" || fail "does not contain $path"
done

# Templates configured with a variable left as @NAME@ (or, set empty, as a path with a part
# missing): in the maintainer scripts, the conffiles and the systemd entries.
configured=("$work"/control/{postinst,prerm,postrm,conffiles} "$work/root/etc/jetagent/agent.yaml"
    "$work/root/lib/systemd/system/jetagent.service" "$work/root/usr/lib/tmpfiles.d/jetagent.conf")
if unexpanded=$(grep -HnoE '@[A-Za-z_][A-Za-z0-9_]*@' "${configured[@]}"); then
    fail "unexpanded template variables: ${unexpanded//$work\//}"
fi
# Every sysusers.d or tmpfiles.d entry the postinst applies is one the package ships.
entries=$(grep -v '^[[:space:]]*#' "$work/control/postinst" |
    grep -oE 'systemd-(sysusers|tmpfiles)( +--[a-z-]+)* +/[^ ;|&]*' | awk '{print $NF}')
[ "$(echo "$entries" | grep -c .)" -ge 2 ] ||
    fail "postinst applies no sysusers.d and tmpfiles.d entries by path: '$entries'"
for entry in $entries; do
    grep -qx "$entry" "$work/contents" || fail "postinst applies $entry, which the package does not contain"
done
description=$(file -b "$work/root/usr/bin/jetagent")
echo "$description" | grep -q "$expected" || fail "usr/bin/jetagent is not $expected: $description"
service=$work/root/lib/systemd/system/jetagent.service
grep -q '^ExecStart=/usr/bin/jetagent run --config /etc/jetagent/agent.yaml$' "$service" ||
    fail "the unit's ExecStart is not the installed binary and config"
# No IP traffic unless the user's drop-in allows it (the shipped example shows how).
grep -qx 'IPAddressDeny=any' "$service" || fail "the unit does not deny IP traffic (IPAddressDeny=any)"
if grep -q '^IPAddressAllow=' "$service"; then fail "the unit allows IP traffic itself"; fi
grep -q '^IPAddressAllow=' "$work/root/usr/share/doc/jetagent/rtsp-cameras.conf.example" ||
    fail "the drop-in example allows no address"
echo "check-deb.sh: $(basename "$deb"): $arch, conffile /etc/jetagent/agent.yaml, unit (no IP traffic), RTSP drop-in example, sysusers, tmpfiles, models; the binary is $expected"
