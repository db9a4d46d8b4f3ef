#!/usr/bin/env bash
# A built jetagent .deb, checked as dpkg sees it: its architecture, the config as a conffile,
# the files a service install needs, maintainer scripts, and a binary built for that architecture.
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
[ "$(field Package)" = jetagent ] || fail "Package is '$(field Package)', not jetagent"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture is '$(field Architecture)', not $arch"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
depends=$(field Depends)
echo "$depends" | grep -q 'libopencv-core' || fail "Depends lacks the OpenCV runtime: '$depends'"
echo "$depends" | grep -q 'libjs-chart\.js' || fail "Depends lacks libjs-chart.js (the HTML reports' Chart.js): '$depends'"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb --control "$deb" "$work/control"
grep -qx '/etc/jetagent/agent.yaml' "$work/control/conffiles" 2>/dev/null ||
    fail "conffiles does not list /etc/jetagent/agent.yaml"
for script in postinst prerm postrm; do
    [ -x "$work/control/$script" ] || fail "no executable $script"
done
grep -q 'systemd-sysusers' "$work/control/postinst" || fail "postinst does not create the user"
if grep -v '^[[:space:]]*#' "$work/control/postinst" | grep -qE 'systemctl +(enable|start|restart)'; then
    fail "postinst enables or starts the service; the user configures it first"
fi

dpkg-deb --contents "$deb" | awk '{print $NF}' | sed 's#^\./#/#' >"$work/contents"
for path in /usr/bin/jetagent /lib/systemd/system/jetagent.service /usr/lib/sysusers.d/jetagent.conf \
    /usr/lib/tmpfiles.d/jetagent.conf /etc/jetagent/agent.yaml \
    /usr/share/jetagent/models/shapes_cnn.onnx /usr/share/jetagent/models/shapes_labels.txt \
    /usr/share/jetagent/boards/orin-nano-nx.yaml /usr/share/jetagent/configs/agent.yaml \
    /usr/share/jetagent/fixtures/orin-nano-jp6.yaml \
    /usr/share/doc/jetagent/rtsp-cameras.conf.example /usr/share/doc/jetagent/README.md \
    /usr/share/doc/jetagent/docs/running.md /usr/share/doc/jetagent/docs/service.md \
    /usr/share/doc/jetagent/docs/jetson-sysfs.md; do
    grep -qx "$path" "$work/contents" || fail "does not contain $path"
done

dpkg-deb --extract "$deb" "$work/root"
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
case $arch in
amd64) expected="x86-64" ;;
arm64) expected="ARM aarch64" ;;
*) fail "no expected 'file' output for architecture $arch" ;;
esac
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
