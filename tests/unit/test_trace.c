/* trace.h: every table round trips, new files only, other files left
 * alone byte for byte, and a crashed writer's committed rows survive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace/trace.h"
#include "maptest.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

static struct nt_trace *create_ok(const char *path)
{
	struct nt_trace *t = NULL;
	struct nt_err err = { "" };

	if (nt_trace_create(path, &t, &err))
		fail_msg("create '%s': %s", path, err.msg);
	return t;
}

static struct nt_trace *open_ok(const char *path)
{
	struct nt_trace *t = NULL;
	struct nt_err err = { "" };

	if (nt_trace_open(path, &t, &err))
		fail_msg("open '%s': %s", path, err.msg);
	return t;
}

static int exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

static int side_file(const char *path, const char *suffix)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return exists(p);
}

/* Open must fail naming path and saying want, and leave its bytes be. */
static void open_refused(const char *path, const char *want)
{
	struct nt_trace *t = (struct nt_trace *)1;
	struct nt_err err = { "" };
	size_t len_before, len_after;
	char *before = slurp(path, &len_before), *after;

	assert_int_equal(nt_trace_open(path, &t, &err), -1);
	assert_null(t);
	if (!strstr(err.msg, path) || !strstr(err.msg, want))
		fail_msg("'%s' does not name '%s' and say '%s'", err.msg, path, want);
	after = slurp(path, &len_after);
	assert_int_equal(len_before, len_after);
	assert_memory_equal(before, after, len_before);
	assert_false(side_file(path, "-wal"));
	assert_false(side_file(path, "-shm"));
	free(before);
	free(after);
}

/* ---- the sample trace ---- */

#define LONG_NAME_LEN 3000

static const struct nt_trace_device dev[2] = {
	{ 0, "GPU-0000aaaa-1c2d-3e4f-5a6b-7c8d9e0f1a2b", "NVIDIA H200", 132, 9, 0, 62914560, 1980000,
	  2048, 32, 65536, 233472 },
	{ 3, "GPU-3333bbbb-1c2d-3e4f-5a6b-7c8d9e0f1a2b", "NVIDIA \"odd\" \xc3\xbc", 8, 7, 5, 4194304, 0,
	  1024, 16, 65536, 65536 },
};

static char long_name[LONG_NAME_LEN + 1];

static struct nt_trace_kernel kern(int i)
{
	struct nt_trace_kernel k = { 0, "_Z4gemmPfS_i", "gemm(float*, float*, int)", 0x7f0012345678ULL,
				     168, 4096, 360, 0, 1024 };

	if (i == 1) {	/* everything unknown but the name */
		k = (struct nt_trace_kernel){ 0, long_name, NULL, UINT64_MAX, -1, -1, -1, -1, -1 };
	}
	return k;
}

static struct nt_trace_launch launch(int64_t id, int64_t kernel, int traced, int64_t blocks)
{
	return (struct nt_trace_launch){
		.launch = id, .kernel = kernel, .device = id % 2 ? 3 : 0,
		.context = 0xdeadbeef00ULL, .stream = id == 2 ? UINT64_MAX : 0,
		.grid_x = 2147483647, .grid_y = 3, .grid_z = 65535, .block_x = 256, .block_y = 1, .block_z = 1,
		.cluster_x = id == 1 ? 2 : 0, .cluster_y = id == 1 ? 1 : 0, .cluster_z = id == 1 ? 1 : 0,
		.dyn_smem = 49152, .max_blocks_per_sm = id == 3 ? -1 : 8, .traced = traced, .blocks = blocks,
		.t_start_ns = id == 3 ? -1 : 1764461400000000000LL + id * 1000,
		.t_end_ns = id == 3 ? -1 : 1764461400000000000LL + id * 1000 + 999,
		.correlation = id == 2 ? -1 : id + 100, .graph = id == 1 ? 7 : -1, .graph_node = id == 1 ? 1LL << 40 : -1,
		.graph_launch = id == 1 ? 12 : -1, .entry_only = id == 1 ? 1 : id == 2 ? 0 : -1,
	};
}

static struct nt_trace_block block(int64_t launch_id, int64_t i)
{
	return (struct nt_trace_block){
		.launch = 999,	/* ignored by add_blocks */
		.block = i, .sm = (int32_t)(i % 132), .warps = 8,
		.t_start_ns = 1764461400000000000LL + i * 10, .t_end_ns = 1764461400000000000LL + i * 10 + 5,
		.c_start = (1LL << 40) + i * 100 + launch_id, .c_end = (1LL << 40) + i * 100 + 77,
	};
}

static void add_blocks(struct nt_trace *t, int64_t launch_id, int n)
{
	struct nt_trace_block *b = calloc(n, sizeof(*b));
	struct nt_err err = { "" };

	assert_non_null(b);
	for (int i = 0; i < n; i++)
		b[i] = block(launch_id, n - 1 - i);	/* out of order: the reader sorts */
	if (nt_trace_add_blocks(t, launch_id, b, n, &err))
		fail_msg("%s", err.msg);
	free(b);
}

static const struct nt_trace_drop drops[2] = {
	{ 2, 1, "no-buffer", 1 },
	{ -1, -1, "queue-full", 12345678901LL },
};

static struct nt_map *sample_trace(const char *path)
{
	struct nt_trace *t = create_ok(path);
	struct nt_map *m = sample_map(4, 3, NT_MAP_NOISE | NT_MAP_LINES | NT_MAP_FIRST_TOUCH, 5);
	struct nt_err err = { "" };
	struct nt_trace_kernel k0 = kern(0), k1 = kern(1);
	struct nt_trace_launch l;
	int64_t id[4];

	memset(long_name, 'x', LONG_NAME_LEN);
	strcpy(m->gpu.uuid, dev[0].uuid);
	assert_int_equal(nt_trace_set_meta(t, "backend", "blocks", &err), 0);
	assert_int_equal(nt_trace_begin(t, &err), 0);
	assert_int_equal(nt_trace_set_meta(t, "sampling", "first=8,every=1000", &err), 0);
	assert_int_equal(nt_trace_add_device(t, &dev[1], &err), 0);
	assert_int_equal(nt_trace_add_device(t, &dev[0], &err), 0);
	assert_int_equal(nt_trace_add_map(t, m, &err), 0);
	assert_int_equal(nt_trace_add_kernel(t, &k0, &id[0], &err), 0);
	assert_int_equal(nt_trace_add_kernel(t, &k1, &id[1], &err), 0);
	assert_int_equal(nt_trace_add_kernel(t, &k0, &id[2], &err), 0);	/* again: same id */
	assert_int_equal(id[2], id[0]);
	k0.module++;
	assert_int_equal(nt_trace_add_kernel(t, &k0, &id[3], &err), 0);	/* other module: new */
	assert_true(id[0] != id[1] && id[3] != id[0] && id[3] != id[1]);
	assert_int_equal(id[0], 1);
	assert_int_equal(id[1], 2);
	l = launch(1, id[0], 1, 5);
	assert_int_equal(nt_trace_add_launch(t, &l, &err), 0);
	add_blocks(t, 1, 5);
	l = launch(2, id[1], 1, 300);
	assert_int_equal(nt_trace_add_launch(t, &l, &err), 0);
	add_blocks(t, 2, 300);
	assert_int_equal(nt_trace_commit(t, &err), 0);
	l = launch(3, id[0], 0, 0);	/* not traced, its own transaction */
	assert_int_equal(nt_trace_add_launch(t, &l, &err), 0);
	assert_int_equal(nt_trace_add_drop(t, &drops[0], &err), 0);
	assert_int_equal(nt_trace_add_drop(t, &drops[1], &err), 0);
	for (int i = 0; i < 2; i++) {
		struct nt_trace_native n = { .launch = 10 + i, .kernel = id[0], .device = 0, .grid_x = 2,
					     .grid_y = 1, .grid_z = 1, .block_x = 256, .block_y = 1,
					     .block_z = 1, .dyn_smem = i ? -1 : 128, .ns = 5000 + i };

		assert_int_equal(nt_trace_add_native(t, &n, &err), 0);
	}
	if (nt_trace_finish(t, &err))
		fail_msg("%s", err.msg);
	nt_trace_close(t);
	return m;
}

/* ---- walks ---- */

struct seen {
	int n, stop_at;
	struct nt_trace_device dev[4];
	struct nt_trace_launch launch[4];
	struct nt_trace_kernel kernel[4];
	char mangled[4][LONG_NAME_LEN + 1];
	int has_demangled[4];
	struct nt_trace_drop drop[4];
	char reason[4][32];
	int64_t last_block;
	struct nt_trace *t;
	int64_t nested_blocks;
};

static int on_device(const struct nt_trace_device *d, void *arg)
{
	struct seen *s = arg;

	s->dev[s->n++] = *d;
	return s->n == s->stop_at ? 42 : 0;
}

static int on_block(const struct nt_trace_block *b, void *arg)
{
	struct seen *s = arg;
	struct nt_trace_block want = block(b->launch, b->block);

	want.launch = b->launch;
	assert_true(b->block > s->last_block);
	assert_memory_equal(b, &want, sizeof(want));
	s->last_block = b->block;
	s->n++;
	return s->n == s->stop_at ? 7 : 0;
}

static int count_block(const struct nt_trace_block *b, void *arg)
{
	(void)b;
	++*(int64_t *)arg;
	return 0;
}

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct seen *s = arg;
	struct nt_err err = { "" };

	assert_non_null(k);
	s->launch[s->n] = *l;
	s->kernel[s->n] = *k;
	snprintf(s->mangled[s->n], sizeof(s->mangled[0]), "%s", k->mangled);
	s->has_demangled[s->n] = k->demangled != NULL;
	s->n++;
	/* a walk inside a walk, the way a report reads a trace */
	if (nt_trace_foreach_block(s->t, l->launch, count_block, &s->nested_blocks, &err))
		fail_msg("%s", err.msg);
	return 0;
}

static int on_drop(const struct nt_trace_drop *d, void *arg)
{
	struct seen *s = arg;

	s->drop[s->n] = *d;
	snprintf(s->reason[s->n], sizeof(s->reason[0]), "%s", d->reason);
	s->n++;
	return 0;
}

static void check_meta(struct nt_trace *t, const char *key, const char *want)
{
	char buf[256];
	struct nt_err err = { "" };

	if (nt_trace_get_meta(t, key, buf, sizeof(buf), &err))
		fail_msg("meta %s: %s", key, err.msg);
	if (want)
		assert_string_equal(buf, want);
}

static void test_round_trip(void **state)
{
	char *path = path_in(state, "rt.sqlite");
	struct nt_map *m = sample_trace(path), *back = NULL;
	struct nt_trace *t = open_ok(path);
	struct nt_err err = { "" };
	struct seen s = { 0 };
	struct nt_trace_kernel k0 = kern(0);
	char buf[64];

	/* meta */
	check_meta(t, "format", "nucatrace-trace");
	check_meta(t, "version", "4");
	check_meta(t, "tool_version", NT_VERSION);
	check_meta(t, "backend", "blocks");
	check_meta(t, "sampling", "first=8,every=1000");
	check_meta(t, "complete", "1");
	snprintf(buf, sizeof(buf), "%ld", (long)getpid());
	check_meta(t, "pid", buf);
	snprintf(buf, sizeof(buf), "%ld", (long)getppid());
	check_meta(t, "ppid", buf);
	check_meta(t, "host", NULL);
	check_meta(t, "exe", NULL);
	check_meta(t, "cmdline", NULL);
	check_meta(t, "start_unix_ns", NULL);
	check_meta(t, "end_unix_ns", NULL);
	assert_int_equal(nt_trace_get_meta(t, "no-such-key", buf, sizeof(buf), &err), 1);
	assert_string_equal(buf, "");
	assert_int_equal(nt_trace_get_meta(t, "format", buf, 4, &err), -1);
	assert_non_null(strstr(err.msg, "format"));
	assert_string_equal(nt_trace_path_of(t), path);

	/* devices, by ordinal */
	assert_int_equal(nt_trace_foreach_device(t, on_device, &s, &err), 0);
	assert_int_equal(s.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(s.dev[i].device, dev[i].device);
		assert_string_equal(s.dev[i].uuid, dev[i].uuid);
		assert_string_equal(s.dev[i].name, dev[i].name);
		assert_int_equal(s.dev[i].sm_count, dev[i].sm_count);
		assert_int_equal(s.dev[i].cc_major, dev[i].cc_major);
		assert_int_equal(s.dev[i].cc_minor, dev[i].cc_minor);
		assert_int_equal(s.dev[i].l2_bytes, dev[i].l2_bytes);
		assert_int_equal(s.dev[i].clock_khz, dev[i].clock_khz);
		assert_int_equal(s.dev[i].max_threads_per_sm, dev[i].max_threads_per_sm);
		assert_int_equal(s.dev[i].max_blocks_per_sm, dev[i].max_blocks_per_sm);
		assert_int_equal(s.dev[i].regs_per_sm, dev[i].regs_per_sm);
		assert_int_equal(s.dev[i].smem_per_sm, dev[i].smem_per_sm);
	}
	s = (struct seen){ .stop_at = 1 };
	assert_int_equal(nt_trace_foreach_device(t, on_device, &s, &err), 42);
	assert_int_equal(s.n, 1);

	/* the map */
	if (nt_trace_get_map(t, dev[0].uuid, &back, &err))
		fail_msg("%s", err.msg);
	assert_maps_equal(m, back);
	nt_map_free(back);
	assert_int_equal(nt_trace_get_map(t, dev[1].uuid, &back, &err), -1);
	assert_null(back);
	snprintf(buf, sizeof(buf), "no map for %s in '", dev[1].uuid);
	assert_non_null(strstr(err.msg, buf));
	assert_non_null(strstr(err.msg, path));

	/* launches with their kernels, nesting block walks */
	s = (struct seen){ .t = t };
	assert_int_equal(nt_trace_foreach_launch(t, on_launch, &s, &err), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.nested_blocks, 305);
	for (int i = 0; i < 3; i++) {
		struct nt_trace_launch want = launch(i + 1, i == 1 ? 2 : 1, i < 2, i == 0 ? 5 : i == 1 ? 300 : 0);

		assert_memory_equal(&s.launch[i], &want, sizeof(want));
	}
	assert_int_equal(s.kernel[0].kernel, 1);
	assert_string_equal(s.mangled[0], k0.mangled);
	assert_true(s.has_demangled[0]);
	assert_int_equal(s.kernel[0].module, k0.module);
	assert_int_equal(s.kernel[0].registers, 168);
	assert_int_equal(s.kernel[0].static_smem, 4096);
	assert_int_equal(s.kernel[0].const_bytes, 360);
	assert_int_equal(s.kernel[0].local_bytes, 0);
	assert_int_equal(s.kernel[0].max_threads, 1024);
	assert_string_equal(s.mangled[1], long_name);
	assert_false(s.has_demangled[1]);
	assert_true(s.kernel[1].module == UINT64_MAX);
	assert_int_equal(s.kernel[1].registers, -1);
	assert_int_equal(s.kernel[1].max_threads, -1);

	/* blocks, in block order, stopping on request */
	s = (struct seen){ .last_block = -1 };
	assert_int_equal(nt_trace_foreach_block(t, 2, on_block, &s, &err), 0);
	assert_int_equal(s.n, 300);
	s = (struct seen){ .last_block = -1, .stop_at = 3 };
	assert_int_equal(nt_trace_foreach_block(t, 2, on_block, &s, &err), 7);
	s = (struct seen){ .last_block = -1 };
	assert_int_equal(nt_trace_foreach_block(t, 3, on_block, &s, &err), 0);
	assert_int_equal(s.n, 0);

	/* drops, in order added */
	s = (struct seen){ 0 };
	assert_int_equal(nt_trace_foreach_drop(t, on_drop, &s, &err), 0);
	assert_int_equal(s.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(s.drop[i].launch, drops[i].launch);
		assert_int_equal(s.drop[i].kernel, drops[i].kernel);
		assert_string_equal(s.reason[i], drops[i].reason);
		assert_int_equal(s.drop[i].count, drops[i].count);
	}
	assert_int_equal(nt_trace_finish(t, &err), -1);	/* a reader */
	nt_trace_close(t);
	nt_map_free(m);
	free(path);
}

static int count_kernel(const struct nt_trace_kernel *k, void *arg)
{
	(void)k;
	++*(int *)arg;
	return 0;
}

/* Plain SQL sees what trace.h and docs/trace-format.md say. */
static void test_schema_is_plain_sql(void **state)
{
	char *path = path_in(state, "sql.sqlite");
	struct nt_map *m = sample_trace(path);
	struct nt_trace *t = open_ok(path);
	int n = 0;

	/* finished: one plain file, no -wal or -shm needed beside it */
	assert_false(side_file(path, "-wal"));
	assert_int_equal(sql_int(path, "PRAGMA application_id"), 0x4E545452);
	assert_int_equal(sql_int(path, "PRAGMA user_version"), 4);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM launches WHERE entry_only IS NULL"), 1);
	assert_int_equal(sql_int(path, "SELECT sum(blocks) FROM block_chunks WHERE launch = 2"), 300);
	/* packed: at most a few bytes a record (the sample's times are regular) */
	assert_true(sql_int(path, "SELECT sum(length(data)) FROM block_chunks") < 8 * 300);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM kernels WHERE registers IS NULL"), 1);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM launches WHERE t_start_ns IS NULL"), 1);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM launches WHERE graph IS NULL"), 2);
	assert_int_equal(sql_int(path, "SELECT stream FROM launches WHERE launch = 2"), -1);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM drops WHERE launch IS NULL"), 1);
	assert_int_equal(sql_int(path, "SELECT json_extract(json, '$.gpu.sm_count') FROM maps"), 4);
	assert_int_equal(sql_int(path, "SELECT value FROM meta WHERE key = 'complete'"), 1);
	/* docs/trace-format.md's examples */
	assert_int_equal(sql_int(path, "SELECT count(*) FROM (SELECT l.launch, k.demangled, l.grid_x * l.grid_y "
				 "* l.grid_z AS grid, l.blocks FROM launches l JOIN kernels k USING (kernel) "
				 "WHERE l.traced)"), 2);
	/* no row per block any more (its examples go through nucatrace export) */
	assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'blocks'"), 0);
	assert_int_equal(nt_trace_foreach_kernel(t, count_kernel, &n, NULL), 0);
	assert_int_equal(n, 3);
	nt_trace_close(t);
	nt_map_free(m);
	free(path);
}

static int on_native(const struct nt_trace_native *n, void *arg)
{
	struct nt_trace_native *seen = arg;

	seen[seen[0].launch++ + 1] = *n;
	return 0;
}

static int graph_launch_of_first(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	(void)k;
	*(int64_t *)arg = l->graph_launch;
	return 1;
}

static int entry_only_of_first(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	(void)k;
	*(int64_t *)arg = l->entry_only;
	return 1;
}

/* Schema 2 adds launches.graph_launch and the native table, schema 3
 * launches.entry_only; a version 1 or 2 trace (every trace before them)
 * still reads, with what is newer unknown and no native times. */
static void test_versions(void **state)
{
	char *path = path_in(state, "v.sqlite");
	struct nt_trace_native seen[4] = { { 0 } };
	struct nt_err err = { "" };
	struct nt_trace *t;
	int64_t gl = 0;

	nt_map_free(sample_trace(path));
	t = open_ok(path);
	assert_int_equal(nt_trace_foreach_native(t, on_native, seen, &err), 0);
	assert_int_equal(seen[0].launch, 2);
	assert_int_equal(seen[1].launch, 10);
	assert_int_equal(seen[1].dyn_smem, 128);
	assert_int_equal(seen[2].dyn_smem, -1);
	assert_int_equal(seen[2].ns, 5001);
	assert_int_equal(nt_trace_foreach_launch(t, graph_launch_of_first, &gl, &err), 1);
	assert_int_equal(gl, 12);
	assert_int_equal(nt_trace_foreach_launch(t, entry_only_of_first, &gl, &err), 1);
	assert_int_equal(gl, 1);
	nt_trace_close(t);
	/* ... as schema 2 wrote it */
	sql(path, "ALTER TABLE launches DROP COLUMN entry_only; PRAGMA user_version = 2");
	t = open_ok(path);
	assert_int_equal(nt_trace_foreach_launch(t, entry_only_of_first, &gl, &err), 1);
	assert_int_equal(gl, NT_TRACE_UNKNOWN);
	assert_int_equal(nt_trace_foreach_launch(t, graph_launch_of_first, &gl, &err), 1);
	assert_int_equal(gl, 12);
	nt_trace_close(t);
	/* the same file as schema 1 wrote it */
	sql(path, "DROP TABLE native; ALTER TABLE launches DROP COLUMN graph_launch; PRAGMA user_version = 1");
	t = open_ok(path);
	memset(seen, 0, sizeof(seen));
	assert_int_equal(nt_trace_foreach_native(t, on_native, seen, &err), 0);
	assert_int_equal(seen[0].launch, 0);
	assert_int_equal(nt_trace_foreach_launch(t, graph_launch_of_first, &gl, &err), 1);
	assert_int_equal(gl, NT_TRACE_UNKNOWN);
	nt_trace_close(t);
	free(path);
}

static void test_refuses_existing_and_symlinks(void **state)
{
	char *path = path_in(state, "old.sqlite"), *link = path_in(state, "link.sqlite");
	char *target = path_in(state, "target"), *dangling = path_in(state, "dangling.sqlite");
	char *missing = path_in(state, "nowhere/t.sqlite");
	struct nt_trace *t = (struct nt_trace *)1;
	struct nt_err err = { "" };
	char *back;

	write_file(path, "keep me", 7);
	assert_int_equal(nt_trace_create(path, &t, &err), -1);
	assert_null(t);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "already exists"));
	back = slurp(path, NULL);
	assert_string_equal(back, "keep me");
	free(back);

	write_file(target, "target", 6);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(nt_trace_create(link, &t, &err), -1);
	assert_non_null(strstr(err.msg, link));
	assert_non_null(strstr(err.msg, "symbolic link"));
	back = slurp(target, NULL);
	assert_string_equal(back, "target");
	free(back);

	assert_int_equal(symlink(missing, dangling), 0);	/* would create its target */
	assert_int_equal(nt_trace_create(dangling, &t, &err), -1);
	assert_non_null(strstr(err.msg, "symbolic link"));
	assert_false(exists(missing));

	assert_int_equal(nt_trace_create(missing, &t, &err), -1);
	assert_non_null(strstr(err.msg, missing));
	assert_int_equal(nt_trace_open(missing, &t, &err), -1);
	assert_non_null(strstr(err.msg, missing));
	assert_int_equal(nt_trace_open((char *)*state, &t, &err), -1);
	assert_non_null(strstr(err.msg, "directory"));
	free(path);
	free(link);
	free(target);
	free(dangling);
	free(missing);
}

static void test_refuses_other_files(void **state)
{
	char *path = path_in(state, "x.sqlite");
	char junk[8192];
	char *good;
	size_t len, page;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 7 + 3);
	write_file(path, junk, sizeof(junk));
	open_refused(path, "not a database");
	write_file(path, "hello, world\n", 13);
	open_refused(path, "not a database");
	write_file(path, "", 0);
	open_refused(path, "empty");
	remove(path);
	sql(path, "PRAGMA application_id = 42; CREATE TABLE t(x); INSERT INTO t VALUES(1)");
	open_refused(path, "another application");
	remove(path);
	sql(path, "CREATE TABLE t(x)");
	open_refused(path, "another application");
	remove(path);
	/* ours by id but not by its meta */
	sql(path, "PRAGMA application_id = 1314149458; PRAGMA user_version = 1; "
	    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)");
	open_refused(path, "meta format");
	remove(path);
	nt_map_free(sample_trace(path));
	sql(path, "PRAGMA user_version = 5");
	open_refused(path, "schema version 5");
	remove(path);
	nt_map_free(sample_trace(path));
	sql(path, "PRAGMA user_version = 0");
	open_refused(path, "schema version 0");
	remove(path);

	/* a good trace, cut short or with its pages overwritten */
	nt_map_free(sample_trace(path));
	good = slurp(path, &len);
	/* its page size from the header (big-endian at 16; 1 is 65536) */
	page = (size_t)(unsigned char)good[16] << 8 | (unsigned char)good[17];
	page = page == 1 ? 65536 : page;
	assert_true(len > 4 * page);
	write_file(path, good, len / 2);
	open_refused(path, "damaged");
	memcpy(good + page, junk, sizeof(junk));	/* the second page's start */
	write_file(path, good, len);
	open_refused(path, "damaged");
	memcpy(good, junk, 100);	/* the header */
	write_file(path, good, len);
	open_refused(path, "not a database");
	free(good);
	free(path);
}

static int on_any_block(const struct nt_trace_block *b, void *arg)
{
	return 0;
}

static void test_bad_rows(void **state)
{
	char *path = path_in(state, "bad.sqlite");
	struct nt_trace *t = create_ok(path);
	struct nt_err err = { "" };
	struct nt_trace_kernel k = kern(0);
	struct nt_trace_launch l;
	struct nt_trace_block b[2] = { block(1, 5), block(1, 5) };
	struct nt_trace_drop d = { 1, 1, NULL, 1 };
	struct nt_map *m = sample_map(3, 0, 0, 1);
	double *chain = m->chain;
	int64_t id;

	assert_int_equal(nt_trace_add_kernel(t, &k, &id, &err), 0);
	l = launch(1, id, 1, 2);
	assert_int_equal(nt_trace_add_launch(t, &l, &err), 0);
	assert_int_equal(nt_trace_add_launch(t, &l, &err), -1);	/* same launch number */
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "launch 1"));
	/* a chunk that is not one: the reader names the trace and the launch */
	assert_int_equal(nt_trace_add_blocks(t, 1, b, 2, &err), 0);
	assert_int_equal(nt_trace_add_chunk(t, 2, 10, "not zstd", 8, &err), 0);
	assert_int_equal(nt_trace_add_drop(t, &d, &err), -1);
	k.mangled = NULL;
	assert_int_equal(nt_trace_add_kernel(t, &k, &id, &err), -1);
	m->chain = NULL;	/* not a valid map */
	assert_int_equal(nt_trace_add_map(t, m, &err), -1);
	assert_non_null(strstr(err.msg, m->gpu.uuid));
	nt_trace_close(t);	/* not finished */
	t = open_ok(path);
	check_meta(t, "complete", "0");
	assert_int_equal(nt_trace_get_meta(t, "end_unix_ns", (char[8]){ 0 }, 8, &err), 1);
	nt_trace_close(t);
	/* each add its own transaction: what went in before the failures stays */
	assert_int_equal(sql_int(path, "SELECT sum(blocks) FROM block_chunks WHERE launch = 1"), 2);
	t = open_ok(path);
	assert_int_equal(nt_trace_foreach_block(t, 2, on_any_block, NULL, &err), -1);
	if (!strstr(err.msg, path) || !strstr(err.msg, "launch 2") || !strstr(err.msg, "not a zstd frame"))
		fail_msg("unclear: %s", err.msg);
	nt_trace_close(t);
	sql(path, "UPDATE block_chunks SET blocks = 1 WHERE launch = 1");
	t = open_ok(path);
	assert_int_equal(nt_trace_foreach_block(t, 1, on_any_block, NULL, &err), -1);
	if (!strstr(err.msg, "launch 1") || !strstr(err.msg, "more records than its row says"))
		fail_msg("unclear: %s", err.msg);
	nt_trace_close(t);
	m->chain = chain;
	nt_map_free(m);
	free(path);
}

/* A writer that dies without finish: what it committed reads back. */
static void test_crash_keeps_committed(void **state)
{
	char *path = path_in(state, "crash.sqlite");
	struct nt_trace *t;
	struct nt_err err = { "" };
	struct seen s = { .last_block = -1 };
	int status;
	char *before, *after;
	size_t len_before, len_after;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		struct nt_trace_kernel k = kern(0);
		struct nt_trace_launch l;
		int64_t id = -1;
		int bad;

		bad = nt_trace_create(path, &t, NULL) || nt_trace_begin(t, NULL) ||
		      nt_trace_add_kernel(t, &k, &id, NULL);
		l = launch(1, id, 1, 1000);
		bad = bad || nt_trace_add_launch(t, &l, NULL);
		for (int i = 0; !bad && i < 1000; i++) {
			struct nt_trace_block b = block(1, i);

			bad = nt_trace_add_blocks(t, 1, &b, 1, NULL);
		}
		bad = bad || nt_trace_commit(t, NULL) || nt_trace_begin(t, NULL);
		l = launch(2, id, 0, 0);
		bad = bad || nt_trace_add_launch(t, &l, NULL);	/* never committed */
		_exit(bad ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(side_file(path, "-wal"));
	before = slurp(path, &len_before);
	t = open_ok(path);
	check_meta(t, "complete", "0");
	s.t = t;
	assert_int_equal(nt_trace_foreach_launch(t, on_launch, &s, &err), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.nested_blocks, 1000);
	s = (struct seen){ .last_block = -1 };
	assert_int_equal(nt_trace_foreach_block(t, 1, on_block, &s, &err), 0);
	assert_int_equal(s.n, 1000);
	nt_trace_close(t);
	after = slurp(path, &len_after);	/* the reader wrote nothing into it */
	assert_int_equal(len_before, len_after);
	assert_memory_equal(before, after, len_before);
	free(before);
	free(after);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_is_plain_sql, setup, teardown),
		cmocka_unit_test_setup_teardown(test_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_existing_and_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_other_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_keeps_committed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
