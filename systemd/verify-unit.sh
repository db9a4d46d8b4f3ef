#!/usr/bin/env bash
# The installed service, checked as a system would take it (ctest SystemdUnitVerifies):
#   1. `cmake --install` into a temporary DESTDIR, then `systemd-analyze verify` on the staged unit
#      (a copy whose ExecStart names the staged binary) with the drop-in example for RTSP cameras in
#      its jetagent.service.d/: any message about either fails; the unit denies IP traffic
#      (IPAddressDeny=any, nothing allowed) and the example allows some;
#   2. every key the unit and the example set, and the values that came later than their key,
#      against the systemd version that introduced them: nothing newer than 245 (JetPack 5; JetPack
#      6 has 249);
#   3. the sysusers.d and tmpfiles.d entries applied to the staged root: the user, its groups and
#      the config's ownership;
#   4. the installed /etc/jetagent/agent.yaml runs: 30 frames with the staged models, and the
#      cache and logs in the temporary directory.
#
#   systemd/verify-unit.sh BUILD_DIR INSTALLED_BINARY INSTALLED_CONFIG INSTALLED_DATA_DIR
# (the installed paths as the build's install prefix makes them: /usr/bin/jetagent,
# /etc/jetagent/agent.yaml, /usr/share/jetagent for the prefix /usr).
set -euo pipefail

usage="usage: verify-unit.sh BUILD_DIR INSTALLED_BINARY INSTALLED_CONFIG INSTALLED_DATA_DIR"
build_dir=${1:?$usage}
binary=${2:?$usage}
config_path=${3:?$usage}
data_dir=${4:?$usage}
# The oldest systemd the unit must load on: JetPack 5 (Ubuntu 20.04).
max_version=245

fail() {
    echo "verify-unit.sh: $*" >&2
    exit 1
}

command -v systemd-analyze >/dev/null ||
    fail "systemd-analyze is missing: install the 'systemd' package (tools/dev.sh deps does)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
DESTDIR=$root cmake --install "$build_dir" >"$work/install.log" ||
    { cat "$work/install.log" >&2; fail "cmake --install failed"; }

units=$(find "$root" -name jetagent.service -path '*/systemd/system/*')
[ "$(printf '%s\n' "$units" | grep -c .)" = 1 ] || fail "expected one staged jetagent.service, found: ${units:-none}"
unit=$units
config=$root$config_path
[ -f "$config" ] || fail "the service config was not installed (looked for $config)"
sysusers=$(find "$root" -path '*/sysusers.d/jetagent.conf')
tmpfiles=$(find "$root" -path '*/tmpfiles.d/jetagent.conf')
[ -n "$sysusers" ] || fail "no sysusers.d/jetagent.conf in the staged install"
[ -n "$tmpfiles" ] || fail "no tmpfiles.d/jetagent.conf in the staged install"

dropin=$(find "$root" -path '*/doc/*' -name rtsp-cameras.conf.example)
[ -n "$dropin" ] || fail "the drop-in example rtsp-cameras.conf.example is not installed with the documentation"

# 1. systemd-analyze verify, of the unit with the drop-in example beside it as systemd would read
# it from /etc/systemd/system/jetagent.service.d/. The unit names the installed binary, which is in
# the staging tree, so a copy names the staged one (--root= would also move /bin/kill and the
# system's targets).
grep -qx "ExecStart=$binary run --config $config_path" "$unit" ||
    fail "ExecStart is not '$binary run --config $config_path'"
[ -x "$root$binary" ] || fail "the staged install has no $binary"
# No IP traffic unless a drop-in allows it: the unit itself denies all and allows nothing.
grep -qx 'IPAddressDeny=any' "$unit" || fail "the unit does not deny IP traffic (IPAddressDeny=any)"
if grep -q '^IPAddressAllow=' "$unit"; then fail "the unit allows IP traffic itself: $(grep '^IPAddressAllow=' "$unit")"; fi
grep -q '^IPAddressAllow=' "$dropin" || fail "the drop-in example $dropin allows no address"
mkdir -p "$work/verify/jetagent.service.d"
sed "s#^ExecStart=$binary #ExecStart=$root$binary #" "$unit" >"$work/verify/jetagent.service"
cp "$dropin" "$work/verify/jetagent.service.d/rtsp-cameras.conf"
echo "== systemd-analyze verify ($(systemd-analyze --version | head -n1))"
rc=0
systemd-analyze verify "$work/verify/jetagent.service" >"$work/verify.log" 2>&1 || rc=$?
cat "$work/verify.log"
[ "$rc" = 0 ] || fail "systemd-analyze verify failed ($rc)"
if grep -q 'jetagent' "$work/verify.log"; then
    fail "systemd-analyze verify warns about the unit (above)"
fi

# 2. Keys against the version that brought them. The number is the first systemd release whose
# NEWS names the key (or value), so the key is at least that old; "38" marks keys of releases
# before NEWS starts (38). Checked against /usr/share/doc/systemd/NEWS.gz of systemd 252.
declare -A introduced=(
    [Description]=38 [Documentation]=38 [Wants]=38 [After]=38 [WantedBy]=38
    [Type]=38 [ExecStart]=38 [ExecReload]=38 [Restart]=38 [RestartSec]=38
    [User]=38 [Group]=38 [UMask]=38 [TimeoutStartSec]=188 [TimeoutStopSec]=188
    [NotifyAccess]=38 [WatchdogSec]=207
    [StartLimitIntervalSec]=229 [StartLimitBurst]=229 # 229: moved to [Unit]
    [PrivateTmp]=183 [CapabilityBoundingSet]=183
    [NoNewPrivileges]=187 # 187 added it with SystemCallFilter=; NEWS names it first in 227
    [SystemCallFilter]=187 [SystemCallArchitectures]=209 [SystemCallErrorNumber]=209
    [DeviceAllow]=210 [DevicePolicy]=212 [RestrictAddressFamilies]=211
    [ProtectSystem]=214 [ProtectHome]=214
    [RestrictRealtime]=231
    [ProtectKernelTunables]=232 [ProtectKernelModules]=232 [ProtectControlGroups]=232 [RemoveIPC]=232
    [RestrictNamespaces]=233
    [StateDirectory]=235 [CacheDirectory]=235 [LogsDirectory]=235 [StateDirectoryMode]=235
    [CacheDirectoryMode]=235 [LogsDirectoryMode]=235 [LockPersonality]=235
    [ProtectHostname]=242 [RestrictSUIDSGID]=242
    [ProtectKernelLogs]=244
    [ProtectClock]=245
    [IPAddressDeny]=235 [IPAddressAllow]=235 [Environment]=38
    # Keys the unit leaves out on purpose, and newer ones, listed so that using one says so.
    [ProtectProc]=247 [ProcSubset]=247 [PrivateIPC]=248 [RestrictFileSystems]=250 [ExecSearchPath]=250
    [MemoryDenyWriteExecute]=231 [PrivateDevices]=209 [PrivateNetwork]=209
    # Values newer than their key.
    [ProtectSystem=strict]=232
    [SystemCallFilter=@system-service]=241 # NEWS 241 already changes the group
    [NotifyAccess=exec]=233
)
echo "== keys against systemd $max_version (the unit and the drop-in example)"
problems=0
while IFS= read -r line; do
    case $line in '' | '#'* | ';'* | '['*) continue ;; esac
    key=${line%%=*}
    value=${line#*=}
    version=${introduced[$key]:-}
    if [ -z "$version" ]; then
        echo "  $key: not in the table of keys systemd $max_version has (add it, with its version, if it is older)"
        problems=$((problems + 1))
        continue
    fi
    if [ "$version" -gt "$max_version" ]; then
        echo "  $key: added in systemd $version, newer than $max_version"
        problems=$((problems + 1))
    fi
    for word in $value; do
        v=${introduced[$key=$word]:-}
        if [ -n "$v" ] && [ "$v" -gt "$max_version" ]; then
            echo "  $key=$word: added in systemd $v, newer than $max_version"
            problems=$((problems + 1))
        fi
    done
done < <(cat "$unit" "$dropin")
[ "$problems" = 0 ] || fail "$problems key(s) of the unit are unknown to systemd $max_version (above)"
echo "  every key is in systemd $max_version"

# 3. What the package's postinst runs, into the staged root: systemd-sysusers creates the user and
# its groups there (the root's own /etc/passwd and /etc/group), then systemd-tmpfiles gives the
# config to the jetagent group, 0640. Changing ownership needs root; otherwise only a dry run of
# systemd-sysusers is possible.
if [ "$(id -u)" = 0 ]; then
    echo "== systemd-sysusers and systemd-tmpfiles --create into the staged root"
    mkdir -p "$root/etc"
    systemd-sysusers --root="$root" "$sysusers" || fail "systemd-sysusers rejects $sysusers"
    grep -q '^jetagent:x:[0-9]*:[0-9]*:[^:]*:/var/lib/jetagent:' "$root/etc/passwd" ||
        fail "systemd-sysusers made no jetagent user with home /var/lib/jetagent"
    for group in video gpio i2c; do
        grep -Eq "^$group:x:[0-9]+:(.*,)?jetagent(,|$)" "$root/etc/group" ||
            fail "jetagent is not a member of $group"
    done
    systemd-tmpfiles --root="$root" --create "$tmpfiles" || fail "systemd-tmpfiles rejects $tmpfiles"
    gid=$(awk -F: '$1 == "jetagent" {print $3}' "$root/etc/group")
    [ "$(stat -c '%a %u %g' "$config")" = "640 0 $gid" ] ||
        fail "the config is $(stat -c '%a %u:%g' "$config") after systemd-tmpfiles, not 640 0:$gid"
    echo "  user jetagent in video, gpio, i2c; the config 0640 root:jetagent"
else
    echo "== systemd-sysusers --dry-run (not root: the tmpfiles entry is not applied)"
    systemd-sysusers --dry-run --root="$root" "$sysusers" 2>&1 | tee "$work/sysusers.log"
    grep -q "user 'jetagent'" "$work/sysusers.log" || fail "systemd-sysusers would not create the jetagent user"
fi

# 4. The shipped config runs: its paths moved into the staging and temporary trees.
echo "== jetagent run --config (the installed agent.yaml)"
sed -e "s#$data_dir/#$root$data_dir/#g" \
    -e "s#/var/cache/jetagent#$work/cache#g" "$config" >"$work/agent.yaml"
grep -q "model: $root$data_dir/models/" "$work/agent.yaml" || fail "the config's model is not under $data_dir/models"
"$root$binary" run --config "$work/agent.yaml" --frames 30 --as-fast-as-possible \
    --log-dir "$work/logs" || fail "jetagent rejected or failed on the installed agent.yaml"
frames=$(find "$work/logs" -name 'shapes.frames.csv' | head -n1)
[ -n "$frames" ] || fail "the run wrote no shapes.frames.csv under $work/logs"
lines=$(($(wc -l <"$frames") - 1))
[ "$lines" -ge 30 ] || fail "the run logged $lines frames, not 30 ($frames)"
echo "verify-unit.sh: the unit verifies, needs systemd <= $max_version, and its config runs ($lines frames)"
