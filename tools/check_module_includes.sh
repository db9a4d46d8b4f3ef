#!/bin/sh
# Lint.ModuleIncludes: every source of a src/agent module includes, of the other modules, only
# what its CMakeLists.txt allows (MAY_INCLUDE: a module's folder name, or one header of it).
# Arguments: SRC_AGENT_DIR, then one FOLDER:ALLOWED,ALLOWED,... per module (what the build
# recorded). A module's options headers (*_options.h, tasks/task_config.h) must themselves be
# leaves: they may include no module at all.
set -eu
root=$1
shift
modules=""
for spec in "$@"; do
    modules="$modules ${spec%%:*}"
done
problems=$(for spec in "$@"; do
    folder=${spec%%:*}
    allowed=$(printf '%s' "${spec#*:}" | tr ',' ' ')
    for file in "$root/$folder"/*.h "$root/$folder"/*.cpp; do
        [ -e "$file" ] || continue
        leaf=0
        case $file in *_options.h | */tasks/task_config.h) leaf=1 ;; esac
        grep -n '^#include "' "$file" | while IFS= read -r line; do
            header=$(printf '%s' "$line" | sed 's/^[0-9]*:#include "\([^"]*\)".*/\1/')
            module=${header%%/*}
            [ "$module" != "$header" ] || continue # a header of the same folder or a generated one
            case " $modules " in *" $module "*) ;; *) continue ;; esac
            [ "$module" = "$folder" ] && [ $leaf -eq 0 ] && continue
            ok=0
            if [ $leaf -eq 0 ]; then
                for a in $allowed; do
                    [ "$a" = "$module" ] || [ "$a" = "$header" ] && ok=1
                done
            fi
            if [ $ok -eq 0 ]; then
                echo "${file#"$root"/}:${line%%:*}: includes $header, which module '$folder' may not include"
            fi
        done
    done
done)
if [ -n "$problems" ]; then
    printf '%s\n' "$problems"
    exit 1
fi
echo "every module includes only what its CMakeLists.txt allows ($# modules)"
