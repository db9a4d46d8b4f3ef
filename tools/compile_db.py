#!/usr/bin/env python3
"""A build's compile_commands.json with one entry per source, for clang-tidy.

Usage: tools/compile_db.py BUILD/compile_commands.json OUT/compile_commands.json [--without-pch]

In a unity build (JETAGENT_UNITY_BUILD, cmake/unity_build.cmake) CMake's database names the batch
files it generates (CMakeFiles/<target>.dir/Unity/unity_N_cxx.cxx), each of which only includes
the target's sources; clang-tidy, which checks the files its database names, would then check
none of ours. Each batch entry becomes one entry per source it includes, with the batch's command
(a target's sources share their flags: CMake compiles a source with flags of its own alone) and
that source in place of the batch file. Other entries are copied as they are. Every entry loses
-Wno-subobject-linkage, which GCC needs in batched targets only (cmake/unity_build.cmake) and
which clang does not know.

--without-pch leaves out the test programs' precompiled headers (GCC's, which clang cannot read),
for `tools/dev.sh tidy`, which checks the tests too.
"""
import json
import re
import shlex
import sys

_INCLUDE = re.compile(r'^#include "(.+)"$')
_BATCH_ONLY_FLAGS = {"-Wno-subobject-linkage"}


def batch_sources(path):
    """The sources a CMake unity batch file includes, in order."""
    sources = []
    with open(path, encoding="utf-8") as batch:
        for line in batch:
            match = _INCLUDE.match(line.strip())
            if match:
                sources.append(match.group(1))
    return sources


def expand(entry):
    """The entries for one database entry: itself, or one per source of a unity batch."""
    path = entry["file"]
    if "/Unity/unity_" not in path:
        return [entry]
    entries = []
    for source in batch_sources(path):
        one = dict(entry)
        one["file"] = source
        if "arguments" in entry:
            one["arguments"] = [source if a == path else a for a in entry["arguments"]]
        else:
            words = shlex.split(entry["command"])
            one["command"] = shlex.join(source if w == path else w for w in words)
        entries.append(one)
    return entries


def for_clang(entry):
    """The entry without the flags of GCC's that unity builds add."""
    one = dict(entry)
    if "arguments" in one:
        one["arguments"] = [a for a in one["arguments"] if a not in _BATCH_ONLY_FLAGS]
    else:
        words = shlex.split(one["command"])
        one["command"] = shlex.join(w for w in words if w not in _BATCH_ONLY_FLAGS)
    return one


def without_pch(entry):
    """The entry without the precompiled header's flags."""
    one = dict(entry)
    if "command" in one:
        one["command"] = re.sub(r" -Winvalid-pch| -include \S*cmake_pch\.hxx", "", one["command"])
    return one


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--without-pch"):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as db:
        entries = json.load(db)
    out = [for_clang(e) for entry in entries for e in expand(entry)]
    if len(argv) == 4:
        out = [without_pch(e) for e in out]
    with open(argv[2], "w", encoding="utf-8") as db:
        json.dump(out, db, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
