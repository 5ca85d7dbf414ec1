# Sourced by the tests/cli/t/023*-sim-* cases: the blocks backend on the
# simulated GPU of tests/fault/fakesanitizer_gpu.c (fake_app drives it).
export NUCATRACE_LIBCUDA=$FAKE/libfakecuda.so FAKECUDA_GPU=1 FAKESANITIZER_GPU=1
export NUCATRACE_SANITIZER_LIB=$FAKE/libfakesanitizer.so NUCATRACE_MODE=blocks
# sim_run POLICY ARGS...: trace fake_app ARGS under POLICY into $TMP/out
sim_run() {
	s_policy=$1; shift
	rm -rf "$TMP/out" && mkdir -p "$TMP/out"
	$NT run --quiet --no-calibrate --sample "$s_policy" --output-dir "$TMP/out" -- $FAKE/fake_app "$@"
}
# sim_blocks TRACE: a copy of TRACE (its path printed) with a table blocks
# of its block records, as nucatrace export --blocks writes them (the
# trace keeps them packed), for the checks' SQL
sim_blocks() {
	s_copy=$TMP/q-$(basename "$1" .sqlite).db
	rm -f "$s_copy" && cp "$1" "$s_copy" && $NT export --blocks -o "$TMP/blocks.csv" "$1" &&
		sqlite3 "$s_copy" "create table blocks(launch integer, kernel integer, block integer, sm integer,
			t_start_ns integer, t_end_ns integer, c_start integer, c_end integer, warps integer)" \
			".import --csv --skip 1 $TMP/blocks.csv blocks" "create index blocks_by_launch on blocks(launch)" &&
		rm -f "$TMP/blocks.csv" && echo "$s_copy"
}
# sim_check: what the trace holds; every traced launch must be complete
sim_check() {
	for t in "$TMP"/out/*.sqlite; do
		sqlite3 "$(sim_blocks "$t")" "select 'launches traced', count(*), 'blocks', sum(blocks) from launches where traced = 1;
			select 'incomplete launches', count(*) from launches l where traced = 1 and
				blocks != grid_x * grid_y * grid_z or blocks != (select count(*) from blocks b where b.launch = l.launch);
			select 'drop', reason, sum(count) from drops group by reason;
			select 'native times', count(*) from native;
			select 'meta', key, value from meta where key in ('launches', 'windows', 'launches_in_windows', 'patches', 'unpatches', 'sampling') order by key;"
	done
}
