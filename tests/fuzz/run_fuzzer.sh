#!/usr/bin/env bash
# Runs one libFuzzer target for a while and says what it did: executions, coverage, corpus growth
# and findings. New corpus entries go to WORKDIR/corpus, never into the repository's seed folders;
# a crash, leak, timeout or out-of-memory input goes to WORKDIR/findings and fails the run.
# A target with a dictionary (dictionaries/NAME.dict) is run with it.
# Used by the smoke tests (label fuzz) and by `tools/dev.sh fuzz SECONDS`.
#
# usage: run_fuzzer.sh BINARY NAME SECONDS WORKDIR [INPUT_DIR...]
set -uo pipefail

if [ $# -lt 4 ]; then
    echo "usage: $0 BINARY NAME SECONDS WORKDIR [INPUT_DIR...]" >&2
    exit 2
fi
binary=$1 name=$2 seconds=$3 work=$4
shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

mkdir -p "$work/corpus" "$work/tmp"
rm -rf "$work/findings"
mkdir -p "$work/findings"

# The sanitizers as CI runs them, unless the caller set its own. GLib's constructor allocation
# is not ours (tests/lsan.supp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/../lsan.supp:fast_unwind_on_malloc=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The harnesses' scratch files.
export TMPDIR=$work/tmp

# A target's dictionary of tokens worth inserting whole (dictionaries/NAME.dict), if it has one.
dictionary=()
if [ -f "$here/dictionaries/$name.dict" ]; then
    dictionary=(-dict="$here/dictionaries/$name.dict")
fi

# -timeout: one input taking this long is a finding (a harness aims at milliseconds);
# -rss_limit_mb: so is a process that grows past this (and a single allocation as large).
"$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "${dictionary[@]}" -artifact_prefix="$work/findings/" "$work/corpus" "$@" >"$work/log" 2>&1
rc=$?

stat() { sed -n "s/^stat::$1: *//p" "$work/log" | tail -1; }
executions=$(stat number_of_executed_units)
rate=$(stat average_exec_per_sec)
rss=$(stat peak_rss_mb)
coverage=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$work/log" | tail -1)
corpus=$(find "$work/corpus" -type f | wc -l)
findings=$(find "$work/findings" -type f | wc -l)
# WORKDIR/summary: this line; WORKDIR/result: ok or failed; WORKDIR/report: what went wrong.
printf '%-16s %10s executions (%s/s), %s, corpus +%d, peak RSS %s MB, %d finding(s)\n' \
    "$name" "${executions:-?}" "${rate:-?}" "${coverage:-cov: ?}" "$corpus" "${rss:-?}" \
    "$findings" | tee "$work/summary"
if [ $rc -eq 0 ] && [ "$findings" -eq 0 ]; then
    echo ok >"$work/result"
    exit 0
fi
echo failed >"$work/result"
{
    echo "$name: libFuzzer exited with $rc; findings:"
    find "$work/findings" -type f
    # The end of the log: the harness's message, then the sanitizer's or libFuzzer's report.
    tail -n 60 "$work/log"
} >"$work/report"
cat "$work/report" >&2
exit 1
