# The check table and helpers the on-board validation scripts share; they source this file.
# shellcheck shell=bash

rows=()
failures=0
# Records one check's outcome (PASS, FAIL or SKIP) for the table and prints it at once.
record() { # RESULT CHECK DETAIL
    rows+=("$(printf '%-4s  %-40s  %s' "$1" "$2" "$3")")
    [ "$1" = FAIL ] && failures=$((failures + 1))
    echo "$1  $2: $3"
}

# Prints the table and exits: 0 when no check failed, 1 otherwise.
finish() {
    echo
    echo "== results"
    printf '%s\n' "${rows[@]}"
    echo
    if [ "$failures" -eq 0 ]; then echo "all checks passed"; else echo "$failures check(s) failed"; fi
    [ "$failures" -eq 0 ]
    exit $?
}

# One value of a JSON file, by a Python expression over `j` (the document); empty when missing.
json_value() { # FILE EXPRESSION
    python3 - "$1" "$2" <<'PY' 2>/dev/null
import json, sys
with open(sys.argv[1]) as f:
    j = json.load(f)
try:
    value = eval(sys.argv[2], {"j": j})
except (KeyError, IndexError, TypeError, ValueError):
    value = None
print("" if value is None else value)
PY
}
