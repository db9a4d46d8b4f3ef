#!/usr/bin/env bash
# The jetagent packages installed for real on this machine with apt and dpkg, as root (tools/dev.sh
# test runs it after packaging, amd64): the core (jetagent_*.deb) alone first, then its OpenCV
# plugins (jetagent-opencv_*.deb) and its RTSP server (jetagent-rtsp_*.deb).
#   1. `apt-get install ./jetagent_*.deb`: the maintainer scripts succeed without systemd as PID 1;
#      the jetagent system user and its groups (jetagent.sysusers), the conffile and the modes and
#      owners of the installed files; the core's own plugins (GStreamer's sources, the live view's
#      server, the CPU engine) and no other installed;
#   2. the installed binary runs as the jetagent user with the installed config for a few seconds,
#      in the directories the unit's StateDirectory=, CacheDirectory= and LogsDirectory= give it,
#      and writes its run logs under /var/log/jetagent: the service runs with the core alone;
#   3. the same config with `backend: opencv` fails with exit 2 and an error naming
#      jetagent-opencv; once `apt-get install ./jetagent-opencv_*.deb` has installed it,
#      `jetagent backends` lists its plugins as present and the same run works; likewise an
#      rtsp:// output, exit 2 naming jetagent-rtsp, then serving once that package is installed;
#   4. the conffile edited, the core installed over itself: the edit is kept, without a prompt;
#   5. `apt-get remove jetagent`: the binary, unit, sysusers.d and tmpfiles.d entries gone, and
#      the plugin packages with them (they depend on the core); the conffile, the run logs and the user
#      kept;
#   6. `apt-get purge`: the conffile and the engine cache gone; the run logs and the user kept
#      (systemd/debian/postrm says why);
#   7. what the core's Depends need on a machine with nothing installed (apt's resolver with an
#      empty package database): none of Qt, X11, GDAL, FFmpeg's libavcodec or OpenCV, whose
#      packages are the plugins' to pull in (gst-rtsp-server's among them, through
#      gstreamer1.0-plugins-bad).
# Whatever happens, the trap purges the packages and removes what they made (the user, the groups
# sysusers created, /etc/jetagent and /var/{lib,cache,log}/jetagent, packages apt pulled in), then
# checks that users, groups and installed packages are as before. It refuses to run where jetagent
# or jetagent-opencv is installed or jetagent has left files behind.
#
#   systemd/test-deb-install.sh JETAGENT.deb JETAGENT-OPENCV.deb JETAGENT-RTSP.deb
set -euo pipefail

usage="usage: test-deb-install.sh JETAGENT.deb JETAGENT-OPENCV.deb (as root; installs and purges them)"
deb=${1:?$usage}
opencv_deb=${2:?$usage}
rtsp_deb=${3:?$usage}
started=$(date +%s)
fail() {
    echo "test-deb-install.sh: FAILED: $*" >&2
    exit 1
}
say() { echo "test-deb-install.sh: $*"; }

[ "$(id -u)" = 0 ] || fail "must run as root: it installs the package with apt"
for file in "$deb" "$opencv_deb" "$rtsp_deb"; do [ -f "$file" ] || fail "no such file: $file"; done
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
opencv_deb=$(cd "$(dirname "$opencv_deb")" && pwd)/$(basename "$opencv_deb")
rtsp_deb=$(cd "$(dirname "$rtsp_deb")" && pwd)/$(basename "$rtsp_deb")
[ "$(dpkg-deb --field "$deb" Package)" = jetagent ] || fail "$deb is not the core package jetagent"
[ "$(dpkg-deb --field "$opencv_deb" Package)" = jetagent-opencv ] ||
    fail "$opencv_deb is not the package jetagent-opencv"
[ "$(dpkg-deb --field "$rtsp_deb" Package)" = jetagent-rtsp ] ||
    fail "$rtsp_deb is not the package jetagent-rtsp"
for tool in apt-get dpkg dpkg-query runuser getent userdel groupdel; do
    command -v "$tool" >/dev/null || fail "$tool is missing"
done

config=/etc/jetagent/agent.yaml
unit=/lib/systemd/system/jetagent.service
sysusers=/usr/lib/sysusers.d/jetagent.conf
tmpfiles=/usr/lib/tmpfiles.d/jetagent.conf
dropin_example=/usr/share/doc/jetagent/rtsp-cameras.conf.example
state_dirs=(/etc/jetagent /var/lib/jetagent /var/cache/jetagent /var/log/jetagent)
groups_used=(jetagent video gpio i2c)

packages=(jetagent-opencv jetagent-rtsp jetagent) # plugins first: they depend on the core
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    if [ -n "$status" ] && [ "$status" != not-installed ]; then
        fail "$package is already on this machine (dpkg status '$status'); this test installs and" \
            "purges it, so it runs only where it is not installed: 'apt-get purge $package' first"
    fi
done
for dir in "${state_dirs[@]}"; do
    [ ! -e "$dir" ] || fail "$dir exists (left by an earlier jetagent?); this test would delete it:" \
        "move it away first"
done

work=$(mktemp -d)
# What the machine has before: restored and compared at the end.
installed_packages() { dpkg-query -W -f='${db:Status-Status} ${Package}:${Architecture}\n' | awk '$1 == "installed" {print $2}' | sort; }
installed_packages >"$work/packages.before"
getent passwd | cut -d: -f1 | sort >"$work/users.before"
getent group | cut -d: -f1,4 | sort >"$work/groups.before"
user_existed=0
getent passwd jetagent >/dev/null && user_existed=1
for group in "${groups_used[@]}"; do
    getent group "$group" >/dev/null && echo "$group" >>"$work/groups.existed"
done
touch "$work/groups.existed"

apt_quiet=(env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=300)

cleanup() {
    local rc=$? problems=""
    set +e
    local package
    for package in "${packages[@]}"; do
        if dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null | grep -qvx not-installed; then
            dpkg --purge "$package" >>"$work/cleanup.log" 2>&1 ||
                dpkg --purge --force-remove-reinstreq "$package" >>"$work/cleanup.log" 2>&1 ||
                problems+=" (dpkg --purge $package failed: $(tail -n 3 "$work/cleanup.log"))"
        fi
    done
    local pulled
    pulled=$(cat "$work/pulled" 2>/dev/null)
    # shellcheck disable=SC2086
    [ -z "$pulled" ] || "${apt_quiet[@]}" purge $pulled >>"$work/cleanup.log" 2>&1 ||
        problems+=" (could not purge the packages apt pulled in: $pulled)"
    if [ "$user_existed" = 0 ] && getent passwd jetagent >/dev/null; then
        userdel jetagent || problems+=" (userdel jetagent failed)"
    fi
    for group in "${groups_used[@]}"; do
        if ! grep -qx "$group" "$work/groups.existed" && getent group "$group" >/dev/null; then
            groupdel "$group" || problems+=" (groupdel $group failed)"
        fi
    done
    rm -rf "${state_dirs[@]}"
    installed_packages >"$work/packages.after"
    getent passwd | cut -d: -f1 | sort >"$work/users.after"
    getent group | cut -d: -f1,4 | sort >"$work/groups.after"
    for what in packages users groups; do
        if ! cmp -s "$work/$what.before" "$work/$what.after"; then
            problems+=" ($what differ from before: $(diff "$work/$what.before" "$work/$what.after" | grep '^[<>]' | tr '\n' ' '))"
        fi
    done
    rm -rf "$work"
    if [ -n "$problems" ]; then
        echo "test-deb-install.sh: cleanup did not restore the machine:$problems" >&2
        [ "$rc" = 0 ] && rc=1
    fi
    exit "$rc"
}
trap cleanup EXIT

# Runs apt-get with stdin closed (a conffile prompt would fail, not wait); prints its log on failure.
apt_run() { # what, apt-get arguments...
    local what=$1
    shift
    if ! "${apt_quiet[@]}" "$@" </dev/null >"$work/apt.log" 2>&1; then
        sed 's/^/    /' "$work/apt.log" >&2
        local scripts
        scripts=$(grep -o '[a-z-]* script subprocess returned error exit status [0-9]*' "$work/apt.log" | sort -u | tr '\n' ';')
        fail "$what: 'apt-get $*' failed${scripts:+: $scripts} (apt's output is above)"
    fi
}
mode_owner() { stat -c '%a %U:%G' "$1"; }
expect_mode() { # path, "mode user:group"
    [ -e "$1" ] || fail "$1 is missing"
    [ "$(mode_owner "$1")" = "$2" ] || fail "$1 is $(mode_owner "$1"), expected $2"
}
expect_status() { # package, dpkg status: "ii ", "rc ", or absent (unknown, or known as "un ")
    local now
    now=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || echo absent)
    [ "$now" = "un " ] && now=absent
    [ "$now" = "$2" ] || fail "dpkg status of $1 is '$now', expected '$2'"
}
# What apt installed besides jetagent's own packages (their dependencies, systemd as recommended):
# purged at the end.
record_pulled() {
    installed_packages | comm -13 "$work/packages.before" - | grep -Ev '^jetagent(-[a-z]+)?:' |
        sort -u - "$work/pulled" -o "$work/pulled" || true
}
touch "$work/pulled"

# 1. Install the core alone.
say "installing $(basename "$deb") with apt-get (systemd as PID 1: $([ -d /run/systemd/system ] && echo yes || echo no))"
apt_run "install" install "$deb"
record_pulled
expect_status jetagent "ii "
expect_status jetagent-opencv absent
[ -s "$work/pulled" ] && say "apt also installed: $(tr '\n' ' ' <"$work/pulled")"
plugin_files=$(dpkg -L jetagent | grep '/jetagent/plugins/.' | sort | tr '\n' ' ' || true)
[ "$plugin_files" = "/usr/lib/jetagent/plugins/jetagent-gstreamer.so /usr/lib/jetagent/plugins/jetagent-live.so /usr/lib/jetagent/plugins/jetagent-mqtt.so /usr/lib/jetagent/plugins/jetagent-xnnpack.so " ] ||
    fail "the core package installed the plugins '$plugin_files', not its own four (gstreamer, live, mqtt, xnnpack)"
entry=$(getent passwd jetagent) || fail "the postinst made no jetagent user"
IFS=: read -r _ _ uid _ _ home shell <<<"$entry"
[ "$uid" -lt 1000 ] || fail "jetagent is not a system user (uid $uid)"
[ "$home" = /var/lib/jetagent ] || fail "jetagent's home is $home, not /var/lib/jetagent"
case $shell in */nologin | */false) ;; *) fail "jetagent has a login shell: $shell" ;; esac
member_of=" $(id -nG jetagent) "
for group in "${groups_used[@]}"; do
    [[ $member_of == *" $group "* ]] || fail "jetagent is not in group $group (it is in:$member_of)"
done
dpkg-query -W -f='${Conffiles}\n' jetagent | grep -q "^ $config " || fail "$config is not a conffile"
# The config may hold rtsp:// credentials: the service's group reads it, nobody else.
expect_mode "$config" "640 root:jetagent"
expect_mode /usr/bin/jetagent "755 root:root"
for file in "$unit" "$sysusers" "$tmpfiles" "$dropin_example"; do expect_mode "$file" "644 root:root"; done
# The unit denies IP traffic; the documented drop-in example allows camera addresses.
grep -qx 'IPAddressDeny=any' "$unit" || fail "$unit does not deny IP traffic (IPAddressDeny=any)"
grep -q '^IPAddressAllow=' "$dropin_example" || fail "$dropin_example allows no address"
say "installed: user jetagent (uid $uid, groups$member_of), $config 640 root:jetagent, conffile"

# 2. Run as the service would: the unit's *Directory= made with its modes, its UMask=, its
# Environment=, its user.
directory_of() { # a unit key: StateDirectory, CacheDirectory, LogsDirectory -> "/var/... mode"
    local base name mode
    case $1 in StateDirectory) base=/var/lib ;; CacheDirectory) base=/var/cache ;; LogsDirectory) base=/var/log ;; esac
    name=$(sed -n "s/^$1=//p" "$unit")
    mode=$(sed -n "s/^$1Mode=//p" "$unit")
    if [ -z "$name" ] || [ -z "$mode" ]; then fail "$unit sets no $1= or $1Mode="; fi
    echo "$base/$name $mode"
}
for key in StateDirectory CacheDirectory LogsDirectory; do
    read -r dir mode <<<"$(directory_of "$key")"
    install -d -o jetagent -g jetagent -m "$mode" "$dir"
done
umask_value=$(sed -n 's/^UMask=//p' "$unit")
mapfile -t unit_environment < <(sed -n 's/^Environment=//p' "$unit")
say "running /usr/bin/jetagent run --config $config --duration 3 as jetagent (${unit_environment[*]})"
rc=0
(cd /var/lib/jetagent && umask "$umask_value" &&
    timeout -s KILL 120 runuser -u jetagent -- env "${unit_environment[@]}" \
        /usr/bin/jetagent run --config "$config" --duration 3) \
    >"$work/run.log" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
    sed 's/^/    /' "$work/run.log" >&2
    fail "the installed jetagent exited $rc as the jetagent user with $config (its output is above)"
fi
runs=$(find /var/log/jetagent -mindepth 1 -maxdepth 1 -type d)
[ "$(printf '%s\n' "$runs" | grep -c .)" = 1 ] || fail "expected one run directory in /var/log/jetagent, found: ${runs:-none}"
frames_file=$(find "$runs" -name '*.jsonl' -size +0 | head -n 1)
[ -n "$frames_file" ] || fail "the run wrote no per-frame JSONL log in $runs: $(ls "$runs")"
frames=$(grep -c '"frame' "$frames_file" || true)
[ "$frames" -gt 0 ] || fail "$frames_file has no frame records"
owners=$(find "$runs" ! -user jetagent)
[ -z "$owners" ] || fail "files in $runs not owned by jetagent: $owners"
cached=$(find /var/cache/jetagent -type f -user jetagent | wc -l)
[ "$cached" -gt 0 ] || fail "the run left nothing in its engine cache /var/cache/jetagent (engine.cache_dir)"
say "ran with the core alone: exit 0, $frames frame records in $frames_file, $cached files in" \
    "/var/cache/jetagent"

# 3. The OpenCV backend: refused with the core alone (exit 2, naming the package), working once
# jetagent-opencv is installed. Its runs log under the state directory, apart from the service's.
opencv_config=/var/lib/jetagent/opencv.yaml
sed 's/^\( *backend:\) *auto\b.*/\1 opencv/' "$config" >"$opencv_config"
grep -q '^ *backend: opencv$' "$opencv_config" || fail "found no 'backend: auto' in $config to change"
chown jetagent:jetagent "$opencv_config"
# `jetagent run ARGS...` as the jetagent user, with the unit's umask and environment, in its state
# directory; its output goes to LOG, and its exit code is printed.
run_as_service() { # log file, run arguments...
    local log=$1 code=0
    shift
    (cd /var/lib/jetagent && umask "$umask_value" &&
        timeout -s KILL 120 runuser -u jetagent -- env "${unit_environment[@]}" \
            /usr/bin/jetagent run "$@") >"$log" 2>&1 || code=$?
    echo "$code"
}
run_opencv() { # log file: the config with backend opencv
    run_as_service "$1" --config "$opencv_config" --duration 3 --log-dir /var/lib/jetagent/opencv-runs
}
rc=$(run_opencv "$work/opencv-missing.log")
if [ "$rc" != 2 ] || ! grep -q 'jetagent-opencv' "$work/opencv-missing.log"; then
    sed 's/^/    /' "$work/opencv-missing.log" >&2
    fail "with the core alone, backend opencv exited $rc (expected 2, naming jetagent-opencv;" \
        "its output is above)"
fi
say "backend opencv with the core alone: exit 2, '$(grep -m 1 'jetagent-opencv' "$work/opencv-missing.log")'"
say "installing $(basename "$opencv_deb") with apt-get"
apt_run "install jetagent-opencv" install "$opencv_deb"
record_pulled
expect_status jetagent-opencv "ii "
/usr/bin/jetagent backends >"$work/backends.log" 2>&1 ||
    { sed 's/^/    /' "$work/backends.log" >&2; fail "'jetagent backends' failed (its output is above)"; }
for plugin in opencv-dnn viewer; do
    grep -Eq "^$plugin +present" "$work/backends.log" || {
        sed 's/^/    /' "$work/backends.log" >&2
        fail "'jetagent backends' does not list the plugin $plugin as present (its output is above)"
    }
done
rc=$(run_opencv "$work/opencv.log")
if [ "$rc" != 0 ]; then
    sed 's/^/    /' "$work/opencv.log" >&2
    fail "with jetagent-opencv installed, backend opencv exited $rc (its output is above)"
fi
opencv_frames=$(find /var/lib/jetagent/opencv-runs -name '*.jsonl' -size +0 -exec grep -c '"frame' {} + |
    awk -F: '{n += $NF} END {print n + 0}')
[ "$opencv_frames" -gt 0 ] || fail "the backend opencv run logged no frames in /var/lib/jetagent/opencv-runs"
say "installed jetagent-opencv: backends lists opencv-dnn and viewer as present; backend opencv" \
    "ran: exit 0, $opencv_frames frame records"

# 3b. An rtsp:// output: refused with the core alone (exit 2, naming jetagent-rtsp), serving once
# that package is installed. A free loopback port; the run encodes only while a client plays, so
# the server starting and the run ending cleanly is what is checked here (tests/stream_out_test.cpp
# plays and decodes the stream).
rtsp_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run_rtsp() { # log file: the service's config with an rtsp:// output
    run_as_service "$1" --config "$config" --duration 2 \
        --output "rtsp://127.0.0.1:$rtsp_port/jetagent" --log-dir /var/lib/jetagent/rtsp-runs
}
rc=$(run_rtsp "$work/rtsp-missing.log")
if [ "$rc" != 2 ] || ! grep -q 'Install the jetagent-rtsp package' "$work/rtsp-missing.log"; then
    sed 's/^/    /' "$work/rtsp-missing.log" >&2
    fail "without jetagent-rtsp, an rtsp:// output exited $rc (expected 2, naming jetagent-rtsp;" \
        "its output is above)"
fi
say "rtsp:// output with the core alone: exit 2, naming jetagent-rtsp"
say "installing $(basename "$rtsp_deb") with apt-get"
apt_run "install jetagent-rtsp" install "$rtsp_deb"
record_pulled
expect_status jetagent-rtsp "ii "
rc=$(run_rtsp "$work/rtsp.log")
if [ "$rc" != 0 ] || ! grep -q "RTSP server: rtsp://127.0.0.1:$rtsp_port/jetagent" "$work/rtsp.log"; then
    sed 's/^/    /' "$work/rtsp.log" >&2
    fail "with jetagent-rtsp installed, the rtsp:// output run exited $rc or served nothing (its" \
        "output is above)"
fi
say "installed jetagent-rtsp: the run served rtsp://127.0.0.1:$rtsp_port/jetagent and exited 0"

# 4. The conffile edited, then the core installed over itself: the edit stays.
marker="# edited by test-deb-install.sh $$"
echo "$marker" >>"$config"
apt_run "reinstall over an edited conffile" install --reinstall "$deb"
expect_status jetagent "ii "
grep -qx "$marker" "$config" || fail "reinstalling the package replaced the edited $config"
expect_mode "$config" "640 root:jetagent"
say "reinstalled: the edited conffile kept"

# 5. Remove: the program, its plugins and its systemd entries go; the config, logs and user stay.
mapfile -t opencv_files < <(dpkg -L jetagent-opencv jetagent-rtsp | grep '\.so$')
[ "${#opencv_files[@]}" -gt 0 ] || fail "dpkg lists no plugin file of jetagent-opencv"
apt_run "remove" remove jetagent
expect_status jetagent "rc "
expect_status jetagent-opencv absent
expect_status jetagent-rtsp absent
for file in /usr/bin/jetagent "$unit" "$sysusers" "$tmpfiles" "$dropin_example" "${opencv_files[@]}"; do
    [ ! -e "$file" ] || fail "$file is still there after 'apt-get remove'"
done
grep -qx "$marker" "$config" || fail "'apt-get remove' did not keep the conffile $config"
[ -s "$frames_file" ] || fail "'apt-get remove' deleted the run logs ($frames_file)"
getent passwd jetagent >/dev/null || fail "'apt-get remove' deleted the jetagent user"
say "removed: program, plugins and unit gone; config, run logs and user kept"

# 6. Purge: the config and the engine cache go; the logs and the user stay.
apt_run "purge" purge jetagent
expect_status jetagent absent
if [ -e /etc/jetagent ]; then fail "'apt-get purge' left /etc/jetagent: $(ls -A /etc/jetagent)"; fi
[ ! -e /var/cache/jetagent ] || fail "'apt-get purge' left the engine cache /var/cache/jetagent"
[ -s "$frames_file" ] || fail "'apt-get purge' deleted the run logs ($frames_file)"
getent passwd jetagent >/dev/null || fail "'apt-get purge' deleted the jetagent user"
say "purged: config and cache gone; run logs and user kept"

# 7. What the core needs on a bare system: apt resolving its Depends (not its Recommends) against
# an empty package database, so that what this machine already has hides nothing. None of the
# packages the plugins are for may be among them (check-deb.sh checks the Depends field itself):
# no Qt, X11, GDAL, libavcodec, and no OpenCV at all (Debian 12's libopencv-core depends on
# libglx0, which reaches X11's client libraries). (gst-rtsp-server, whose package pulls in
# gstreamer1.0-plugins-bad, GTK and libavcodec, is jetagent-rtsp's.)
forbidden='^(libqt[0-9]|qt[0-9]|libx11-|libxcb|libgdal|libavcodec|libopencv-)'
: >"$work/empty-status"
bare_install() { # output file, packages or .deb files: what apt would install for them on an empty system
    local output=$1
    shift
    if ! apt-get -s --no-install-recommends -o Dir::State::status="$work/empty-status" install "$@" \
        </dev/null >"$work/bare.log" 2>&1; then
        sed 's/^/    /' "$work/bare.log" >&2
        fail "apt cannot resolve $* on an empty system (its output is above; 'apt-get update' first?)"
    fi
    awk '$1 == "Inst" && $2 != "jetagent" {print $2}' "$work/bare.log" | sort -u >"$output"
}
bare_install "$work/bare" "$deb"
reached=$(grep -E "$forbidden" "$work/bare" || true)
if [ -n "$reached" ]; then
    # Which of the core's Depends pulls each in.
    why=""
    for dependency in $(dpkg-deb --field "$deb" Depends | sed 's/([^)]*)//g; s/|/,/g; s/,/ /g'); do
        bare_install "$work/bare.one" "$dependency"
        while read -r package; do
            why+=" $package (through $dependency);"
        done < <(grep -xFf "$work/bare.one" <<<"$reached" || true)
    done
    fail "on an empty system the core's Depends pull in what only plugins may need:$why"
fi
say "the core's Depends on an empty system: $(grep -c . "$work/bare") packages, none of Qt, X11," \
    "GDAL, libavcodec or OpenCV"
say "passed in $(($(date +%s) - started)) s (cleanup follows)"
