#!/bin/sh
# Linker wrapper (see .cargo/config.toml). When rustc links libcugmp.so it passes
# -Wl,--version-script=FILE listing what Rust defines; build.rs names GMP's data
# symbols in $CUGMP_DATA_EXPORTS, and they are added to FILE's global list so the
# program and the embedded GMP share one definition of each. The hooks into
# the embedded GMP (src/abi/hooks.rs, `__wrap_` names) are internal: they are
# taken out of the list.
if [ -n "${CUGMP_DATA_EXPORTS:-}" ] && [ -f "$CUGMP_DATA_EXPORTS" ]; then
    for arg in "$@"; do
        case "$arg" in
            -Wl,--version-script=*)
                script=${arg#-Wl,--version-script=}
                if [ -f "$script" ] && grep -q 'global:' "$script"; then
                    list=$(mktemp) || exit 1
                    sed 's/^\(.*\)$/    \1;/' "$CUGMP_DATA_EXPORTS" > "$list"
                    sed -i "/global:/r $list" "$script" || exit 1
                    sed -i '/__wrap_/d' "$script" || exit 1
                    rm -f "$list"
                fi
                ;;
        esac
    done
fi
exec "${CUGMP_LINKER_CC:-cc}" "$@"
