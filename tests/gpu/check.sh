# Sourced by the GPU check scripts (interposer.sh, ranks.sh):
#   check NAME COMMAND...
# runs COMMAND with its output in $W/NAME.log and says ok or FAIL (with
# the log's last $CHECK_TAIL lines, default 15), counting in $pass and
# $fail; ONLY="GLOB..." runs only the checks whose names they match.
pass=0 fail=0
check() {
	name=$1; shift
	c_run=
	set -f	# ONLY's globs, not the folder's files
	for c_glob in ${ONLY:-*}; do
		case $name in $c_glob) c_run=1 ;; esac
	done
	set +f
	[ -n "$c_run" ] || return 0
	if "$@" >"$W/$name.log" 2>&1; then
		pass=$((pass + 1)); echo "ok   $name"
	else
		fail=$((fail + 1)); echo "FAIL $name"; tail -"${CHECK_TAIL:-15}" "$W/$name.log" | sed 's/^/     /'
	fi
}
