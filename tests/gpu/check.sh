# Sourced by the GPU check scripts (interposer.sh, ranks.sh):
#   check NAME COMMAND...
# runs COMMAND with its output in $W/NAME.log and says ok or FAIL (with
# the log's last $CHECK_TAIL lines, default 15), counting in $pass and
# $fail; ONLY="GLOB..." runs only the checks whose names they match.
# CHECK_LIMIT=S stops a check that runs longer than S seconds, after
# writing to its log what each of its processes is waiting in (threads'
# kernel wait channels and, where gdb is installed, their stacks).
pass=0 fail=0
# The process $1 and all its descendants.
tree() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1 }
		END { todo = root; while (todo != "") {
			n = split(todo, q, " "); todo = ""
			for (i = 1; i <= n; i++) { print q[i]; todo = todo " " kids[q[i]] } } }'
}
limited() {
	[ -n "${CHECK_LIMIT:-}" ] || { "$@"; return; }
	"$@" &
	l_pid=$!
	(
		l_s=0
		while kill -0 "$l_pid" 2>/dev/null; do
			sleep 1; l_s=$((l_s + 1))
			[ "$l_s" -ge "$CHECK_LIMIT" ] || continue
			echo "check still running after $CHECK_LIMIT s: what its processes wait in"
			l_all=$(tree "$l_pid")
			for l_p in $l_all; do
				echo "== $l_p: $(tr '\0' ' ' </proc/$l_p/cmdline 2>/dev/null)"
				for l_t in /proc/$l_p/task/*; do
					echo "   ${l_t##*/} $(cat $l_t/comm 2>/dev/null) wchan=$(cat $l_t/wchan 2>/dev/null) syscall=$(cut -d' ' -f1 $l_t/syscall 2>/dev/null)"
				done
				case $(cat /proc/$l_p/comm 2>/dev/null) in sh|dash|bash|timeout) continue ;; esac
				! command -v gdb >/dev/null || timeout 60 gdb -p "$l_p" -batch -ex "thread apply all bt 12" 2>&1 | grep -E '^(Thread|#)'
			done
			kill -KILL $l_all 2>/dev/null
			break
		done
	) &
	wait "$l_pid"; l_rc=$?
	wait $!
	return $l_rc
}
check() {
	name=$1; shift
	c_run=
	set -f	# ONLY's globs, not the folder's files
	for c_glob in ${ONLY:-*}; do
		case $name in $c_glob) c_run=1 ;; esac
	done
	set +f
	[ -n "$c_run" ] || return 0
	if limited "$@" >"$W/$name.log" 2>&1; then
		pass=$((pass + 1)); echo "ok   $name"
	else
		fail=$((fail + 1)); echo "FAIL $name"; tail -"${CHECK_TAIL:-15}" "$W/$name.log" | sed 's/^/     /'
	fi
}
