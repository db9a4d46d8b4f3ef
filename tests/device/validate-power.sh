#!/usr/bin/env bash
# Validates jetagent's power measurement on a real board, where no test here can reach: run it on
# the Jetson itself, as root (EMC and some rails need it), from the repository root after a build.
#
#   sudo tests/device/validate-power.sh [--build DIR] [--seconds N]
#
# 1. What `jetagent power --list` finds: the profile must match, no expected rail may be missing.
# 2. jetagent_power_bench on the board's own sysfs: one full rail sample and the sampler's CPU share
#    at 100 Hz against the targets (< 50 us, < 1% of one core).
# 3. A cross-check against NVIDIA's tegrastats when it is installed: both measure N seconds side by
#    side; the averages of the total rail must agree within 5% (different sampling instants and
#    averaging, so not to the milliwatt).
# 4. A demo run with power sampling on: every frame of the log carries its energy.
# Prints PASS/FAIL per check and exits 1 if any failed.
set -uo pipefail

build=build
seconds=20
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
jetagent="$build/src/jetagent"
bench="$build/tests/jetagent_power_bench"
for f in "$jetagent" "$bench"; do
    [ -x "$f" ] || { echo "missing $f: build first (cmake --build $build)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "PASS  $*"; }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }

echo "== 1. discovery"
"$jetagent" power --list | tee "$work/list.txt"
if grep -q "^rails: none found" "$work/list.txt"; then
    fail "no power rails found"
else
    pass "rails found"
fi
if grep -q "^missing:" "$work/list.txt"; then
    fail "the profile expects rails that were not found (see 'missing:' above)"
else
    pass "every rail the profile expects was found"
fi
if grep -q "unknown board" "$work/list.txt"; then
    fail "unknown board: please report /proc/device-tree/model and compatible so a profile can match"
else
    pass "the board matched a profile"
fi

echo "== 2. sampler cost on this board"
"$bench" --sysfs-root / --seconds 10 | tee "$work/bench.txt"
if grep -q "all targets met" "$work/bench.txt"; then pass "sampler targets"; else fail "sampler targets"; fi

echo "== 3. cross-check against tegrastats (${seconds} s)"
total=$(sed -n 's/^total: \([A-Za-z0-9_]*\).*/\1/p' "$work/list.txt")
if ! command -v tegrastats >/dev/null; then
    echo "SKIP  tegrastats is not installed"
elif [ -z "$total" ] || [ "$total" = "sum" ]; then
    echo "SKIP  this board has no total rail to compare (the total is an estimate)"
else
    tegrastats --interval 1000 > "$work/tegrastats.txt" &
    tpid=$!
    "$jetagent" power -i 1000 -d "$seconds" --csv "$work/power.csv" > "$work/power.txt"
    kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null
    # tegrastats prints "<RAIL> <now>mW/<avg>mW" (JetPack 5+) or "<RAIL> <now>/<avg>" (JetPack 4).
    theirs=$(tail -n 1 "$work/tegrastats.txt" | sed -n "s/.*$total \([0-9]*\)\(mW\)\{0,1\}\/\([0-9]*\).*/\3/p")
    ours=$(awk -v rail="$total" '$1 == "total" && $2 == "=" && $3 == rail { print $5 * 1000 }' "$work/power.txt")
    if [ -z "$theirs" ] || [ -z "$ours" ]; then
        fail "could not read both averages (tegrastats: '${theirs}', jetagent: '${ours}')"
    elif awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * b) }'; then
        pass "$total average: jetagent ${ours} mW, tegrastats ${theirs} mW"
    else
        fail "$total average: jetagent ${ours} mW, tegrastats ${theirs} mW (more than 5% apart)"
    fi
fi

echo "== 4. energy per frame in a demo run"
cfg="$work/demo-power.yaml"
sed -e "s#\.\./models/#$(pwd)/models/#" firmware-config/demo.yaml > "$cfg"
printf '\npower:\n  sampling: on\n' >> "$cfg"
"$jetagent" run -c "$cfg" -n 150 -o "$work/logs" > "$work/run.txt" 2>&1
csv=$(ls "$work"/logs/*/shapes.frames.csv 2>/dev/null | head -n 1)
if [ -z "$csv" ]; then
    fail "the demo run wrote no frame log:"; tail -n 5 "$work/run.txt"
else
    missing=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "frame_energy_mJ") c = i; next }
                       c && $c == "" { n++ } END { print c ? n + 0 : -1 }' "$csv")
    if [ "$missing" = "0" ]; then
        pass "every frame has its energy ($(($(wc -l < "$csv") - 1)) frames)"
        grep -E "^  energy|^  total" "$work/run.txt" | sed 's/^/      /'
    else
        fail "frames without energy: $missing (-1: no energy column)"
    fi
fi

echo
if [ "$failures" -eq 0 ]; then echo "all checks passed"; else echo "$failures check(s) failed"; fi
[ "$failures" -eq 0 ]
