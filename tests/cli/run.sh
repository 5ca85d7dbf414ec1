#!/bin/sh
# Golden-file tests of the nucatrace CLI.  Each tests/cli/t/NNNN-name/
# holds `cmd`, a shell snippet run with $NT (the binary), $DATA
# (tests/data), $FAKE (fault-injection libraries), $GEN (the synthetic
# trace generator, tests/bench/gen_trace.c) and a fresh $TMP as the
# working folder, and `expected`: its stdout and stderr together,
# followed by a line "exit N".  Output is compared byte for byte.  CUPTI is
# pointed at a missing file so that the interposer tests do not depend on
# whether this machine has one.
# UPDATE=1 rewrites `expected` from the current output instead.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
NT=$(cd "$(dirname "${NUCATRACE:?set NUCATRACE to the binary}")" && pwd)/$(basename "$NUCATRACE")
FAKE=$(cd "${FAKECUDA_DIR:-$root/build/tests}" && pwd)
LIB=$(dirname "$NT")/libnucatrace.so
GEN=$FAKE/gen_trace
DATA=$root/tests/data
CLI=$here
export NT FAKE DATA LIB CLI GEN
pass=0 fail=0
for dir in "$here"/t/*/; do
	name=$(basename "$dir")
	case "${1:-}" in "" | "$name") ;; *) continue ;; esac
	TMP=$(mktemp -d)
	export TMP
	out=$(cd "$TMP" && env -u NUCATRACE_STORE HOME="$TMP/home" XDG_DATA_HOME= \
		NUCATRACE_CUPTI_LIB=/nonexistent/libcupti.so.13 \
		NUCATRACE_PROGRESS=0 sh -e "$dir/cmd" 2>&1; echo "exit $?")
	out=$(printf '%s\n' "$out" | sed -e "s|$DATA|DATA|g" -e "s|$LIB|LIB|g" -e "s|$FAKE/\(lib[a-z-]*\.so\)|FAKE/\1|g")
	if [ "${UPDATE:-}" = 1 ]; then
		printf '%s\n' "$out" >"$dir/expected"
	fi
	if printf '%s\n' "$out" | cmp -s - "$dir/expected"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $name"
		printf '%s\n' "$out" | diff -u "$dir/expected" - | head -40
	fi
	rm -rf "$TMP"
done
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
