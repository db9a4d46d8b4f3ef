#!/bin/sh
# The web pages' scripts parse (CTest WebScripts.NodeCheck): `node --check` on every .js file under
# web/, each on its own, since node checks only the first file it is given.
#
#   check_web_scripts.sh SOURCE_DIR
#
# Exit 0 when every script parses; 1 when one does not, when none is found, or when node is
# missing (Debian's nodejs: tools/dev.sh installs it with the test packages), so a machine without
# it cannot pass the check by skipping it.
set -eu
web=$1/web
if ! command -v node >/dev/null 2>&1; then
    echo "node is missing, so the scripts under $web cannot be checked: apt install nodejs" >&2
    exit 1
fi
scripts=$(find "$web" -name '*.js' | wc -l)
if [ "$scripts" -eq 0 ]; then
    echo "no .js file under $web" >&2
    exit 1
fi
failed=$(find "$web" -name '*.js' -exec sh -c 'node --check "$1" >&2 || echo "$1"' sh {} \;)
if [ -n "$failed" ]; then
    echo "node --check failed on:" >&2
    echo "$failed" >&2
    exit 1
fi
echo "$scripts scripts under $web parse (node --check)"
