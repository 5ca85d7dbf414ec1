/*
 * Unit tests for core/trace/cubin.c on the cubins nvcc builds from
 * tests/unit/cubins/kernels.cu ($NT_TEST_CUBIN_DIR/kernels_sm{80,90}.cubin).
 *
 * Register counts and sizes are those of CUDA 13.0's nvcc: ptxas -v
 * printed them, and on an H200 (driver 580) cuFuncGetAttribute agreed
 * for sm_90 (NUM_REGS, SHARED_SIZE_BYTES, LOCAL_SIZE_BYTES,
 * MAX_THREADS_PER_BLOCK, REQUIRED_CLUSTER_*).  Another nvcc may allocate
 * registers differently: then update the table below from
 * `nvcc -cubin -arch=sm_XX -Xptxas -v tests/unit/cubins/kernels.cu`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testrng.h"
#include "trace/cubin.h"
#include "gpu/occupancy.h"

struct image {
	unsigned char *b;
	size_t n;
};

static struct image load(const char *arch)
{
	const char *dir = getenv("NT_TEST_CUBIN_DIR");
	struct image im = { 0 };
	char path[1024];
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kernels_%s.cubin", dir ? dir : "build/tests", arch);
	if (!(f = fopen(path, "rb")))
		fail_msg("cannot open '%s' (make builds it; NT_TEST_CUBIN_DIR names its folder)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	im.b = malloc(n);
	im.n = (size_t)n;
	assert_non_null(im.b);
	assert_int_equal(fread(im.b, 1, im.n, f), im.n);
	fclose(f);
	return im;
}

static struct nt_cubin *parse_ok(const struct image *im)
{
	struct nt_cubin *c = NULL;
	struct nt_err err = { "" };

	if (nt_cubin_parse(im->b, im->n, &c, &err))
		fail_msg("parse: %s", err.msg);
	return c;
}

struct want {
	const char *name;
	int regs;
	int64_t smem, local;
	int max_threads, cluster_x, barriers;
};

static void check(const struct nt_cubin *c, const struct want *w, size_t n)
{
	assert_int_equal(nt_cubin_count(c), n);
	for (size_t i = 0; i < n; i++) {
		const struct nt_cubin_kernel *k = nt_cubin_find(c, w[i].name);

		if (!k)
			fail_msg("kernel '%s' not found", w[i].name);
		assert_string_equal(k->name, w[i].name);
		assert_int_equal(k->registers, w[i].regs);
		assert_int_equal(k->static_smem, w[i].smem);
		assert_int_equal(k->local_bytes, w[i].local);
		assert_int_equal(k->max_threads, w[i].max_threads);
		assert_int_equal(k->cluster[0], w[i].cluster_x);
		assert_int_equal(k->cluster[1], w[i].cluster_x ? 1 : 0);
		assert_int_equal(k->cluster[2], w[i].cluster_x ? 1 : 0);
		assert_int_equal(k->barriers, w[i].barriers);
		assert_true(k->const0_bytes > 0);
	}
	/* sorted by name, and nt_cubin_kernel() walks them all */
	for (size_t i = 1; i < n; i++)
		assert_true(strcmp(nt_cubin_kernel(c, i - 1)->name, nt_cubin_kernel(c, i)->name) < 0);
	assert_null(nt_cubin_kernel(c, n));
	/* 160 bytes more of parameters, 160 bytes more of bank 0 */
	assert_int_equal(nt_cubin_find(c, "_Z7mangled6paramsPi")->const0_bytes -
			 nt_cubin_find(c, "bounded")->const0_bytes, 160);
}

static void test_sm90(void **state)
{
	static const struct want w[] = {
		{ "_Z7mangled6paramsPi", 10, 0, 0, 0, 0, 0 },
		{ "bounded", 10, 0, 0, 128, 0, 0 },
		{ "cluster2", 8, 0, 0, 0, 2, 0 },
		{ "manyregs", 80, 0, 0, 0, 0, 0 },
		{ "smem4k", 10, 4096, 0, 0, 0, 1 },
		{ "stack", 250, 0, 1024, 0, 0, 0 },
	};
	struct image im = load("sm90");
	struct nt_cubin *c = parse_ok(&im);

	assert_int_equal(nt_cubin_arch(c), 90);
	assert_int_equal(nt_cubin_device_launches(c), 0);
	check(c, w, sizeof(w) / sizeof(w[0]));
	assert_int_equal(nt_cubin_find(c, "bounded")->const0_bytes, 0x218);
	nt_cubin_free(c);
	free(im.b);
}

/* A kernel that launches from the device: its module is never patched
 * (interposer/blocks/san_modules.c). */
static void test_device_launches(void **state)
{
	struct image im = load("cdp_sm90");
	struct nt_cubin *c = parse_ok(&im);

	assert_int_equal(nt_cubin_device_launches(c), 1);
	assert_non_null(nt_cubin_find(c, "_Z6parentPi"));
	nt_cubin_free(c);
	free(im.b);
	/* the device runtime called, nothing launched */
	im = load("devrt_sm90");
	c = parse_ok(&im);
	assert_int_equal(nt_cubin_device_launches(c), 0);
	assert_non_null(nt_cubin_find(c, "_Z4asksPi"));
	nt_cubin_free(c);
	free(im.b);
}

/* Module-scope variables: four, of every kind, and a function's static
 * __device__ one; none in the other cubins. */
static void test_variables(void **state)
{
	struct image im = load("state_sm90");
	struct nt_cubin *c = parse_ok(&im);
	const char *first = NULL;

	(void)state;
	assert_int_equal(nt_cubin_variables(c, &first), 5);
	assert_non_null(first);
	assert_true(!strcmp(first, "table") || !strcmp(first, "counter") || !strcmp(first, "primed") ||
		    !strcmp(first, "shared_with_host") || !strcmp(first, "_ZZ6countsE5calls"));
	assert_non_null(nt_cubin_find(c, "stateless"));
	nt_cubin_free(c);
	free(im.b);
	im = load("sm90");
	c = parse_ok(&im);
	assert_int_equal(nt_cubin_variables(c, &first), 0);
	assert_null(first);
	nt_cubin_free(c);
	free(im.b);
	/* assert's and printf's strings, libcu++'s, Thrust's and CuTe's
	 * empty objects, a function's static __constant__ table, the math
	 * library's table: none */
	im = load("stateless_sm90");
	c = parse_ok(&im);
	assert_int_equal(nt_cubin_variables(c, &first), 0);
	assert_non_null(nt_cubin_find(c, "libuse"));
	assert_non_null(nt_cubin_find(c, "thrustuse"));
	assert_non_null(nt_cubin_find(c, "cuteuse"));
	nt_cubin_free(c);
	free(im.b);
}

static void test_sm80(void **state)
{
	static const struct want w[] = {
		{ "_Z7mangled6paramsPi", 8, 0, 0, 0, 0, 0 },
		{ "bounded", 8, 0, 0, 128, 0, 0 },
		{ "manyregs", 80, 0, 0, 0, 0, 0 },
		{ "smem4k", 10, 4096, 0, 0, 0, 1 },
		{ "stack", 246, 0, 1024, 0, 0, 0 },
	};
	struct image im = load("sm80");
	struct nt_cubin *c = parse_ok(&im);

	assert_int_equal(nt_cubin_arch(c), 80);
	check(c, w, sizeof(w) / sizeof(w[0]));
	/* ptxas -v: "360 bytes cmem[0]", "520 bytes cmem[0]" */
	assert_int_equal(nt_cubin_find(c, "bounded")->const0_bytes, 360);
	assert_int_equal(nt_cubin_find(c, "_Z7mangled6paramsPi")->const0_bytes, 520);
	nt_cubin_free(c);
	free(im.b);
}

static void test_find(void **state)
{
	struct image im = load("sm90");
	struct nt_cubin *c = parse_ok(&im);

	assert_null(nt_cubin_find(c, "mangled"));
	assert_null(nt_cubin_find(c, "nope"));
	assert_null(nt_cubin_find(c, NULL));
	assert_null(nt_cubin_find(NULL, "stack"));
	assert_int_equal(nt_cubin_count(NULL), 0);
	assert_int_equal(nt_cubin_arch(NULL), 0);
	nt_cubin_free(c);
	nt_cubin_free(NULL);
	free(im.b);
}

/* Returns the parse's result and leaves its message in `msg`. */
static int try_parse(const void *b, size_t n, char *msg, size_t msgn)
{
	struct nt_cubin *c = (struct nt_cubin *)1;
	struct nt_err err = { "" };
	int rc = nt_cubin_parse(b, n, &c, &err);

	if (rc) {
		assert_null(c);
		assert_true(err.msg[0]);
	} else {
		assert_non_null(c);
		nt_cubin_free(c);
	}
	if (msg)
		snprintf(msg, msgn, "%s", err.msg);
	return rc;
}

static void expect_error(const void *b, size_t n, const char *want)
{
	char msg[512];

	assert_int_equal(try_parse(b, n, msg, sizeof(msg)), -1);
	if (!strstr(msg, want))
		fail_msg("message '%s' lacks '%s'", msg, want);
}

static void test_not_cubin(void **state)
{
	static const unsigned char fatbin[16] = { 0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0 };
	static const char text[] = "#!/bin/sh\necho this is not an ELF file\n";
	struct image im = load("sm90");
	struct nt_err err = { "" };
	struct nt_cubin *c;

	expect_error(text, sizeof(text), "not an ELF image");
	expect_error(text, 0, "not an ELF image");
	expect_error(fatbin, sizeof(fatbin), "fatbin");
	assert_int_equal(nt_cubin_parse(NULL, 10, &c, &err), -1);
	assert_non_null(strstr(err.msg, "no image"));
	assert_int_equal(nt_cubin_parse(text, sizeof(text), &c, NULL), -1);

	expect_error(im.b, 40, "truncated ELF header");
	im.b[18] = 62;	/* e_machine: x86-64 */
	expect_error(im.b, im.n, "EM_CUDA");
	im.b[18] = 190;
	im.b[4] = 1;	/* ELFCLASS32 */
	expect_error(im.b, im.n, "64-bit");
	im.b[4] = 2;
	im.b[0x30] = im.b[0x31] = 0;	/* e_flags without an arch */
	expect_error(im.b, im.n, "e_flags");
	free(im.b);
}

/* Offset of the first .nv.info record {SVAL, attr, size 8}; the global
 * .nv.info comes before any code in nvcc's layout. */
static size_t find_record(const struct image *im, int attr)
{
	const unsigned char rec[4] = { 4, (unsigned char)attr, 8, 0 };

	for (size_t i = 0; i + 4 <= im->n; i++)
		if (!memcmp(im->b + i, rec, 4))
			return i;
	fail_msg("no record of attribute 0x%x", attr);
	return 0;
}

static void test_bad_nvinfo(void **state)
{
	struct image im = load("sm90");
	size_t at = find_record(&im, 0x2f);

	im.b[at + 2] = 0xf0;
	im.b[at + 3] = 0xff;
	expect_error(im.b, im.n, "runs past the end");
	im.b[at + 2] = 8;
	im.b[at + 3] = 0;
	im.b[at] = 9;
	expect_error(im.b, im.n, "unknown record format 9");
	free(im.b);
}

/* Without EIATTR_REGCOUNT, sm_80 cubins still say it in sh_info; sm_90
 * ones do not, and the count is unknown. */
static void test_regcount_fallback(void **state)
{
	static const char *archs[] = { "sm80", "sm90" };

	for (int a = 0; a < 2; a++) {
		struct image im = load(archs[a]);
		struct nt_cubin *c;

		for (size_t i = 0; i + 4 <= im.n; i++)
			if (im.b[i] == 4 && im.b[i + 1] == 0x2f && im.b[i + 2] == 8 && im.b[i + 3] == 0)
				im.b[i + 1] = 0x7e;	/* an attribute nobody reads */
		c = parse_ok(&im);
		assert_int_equal(nt_cubin_find(c, "manyregs")->registers, a ? -1 : 80);
		assert_int_equal(nt_cubin_find(c, "stack")->local_bytes, 1024);
		nt_cubin_free(c);
		free(im.b);
	}
}

/* Every prefix of a real cubin: an error or a parse, never a crash.
 * Each copy is exactly as long as claimed, so ASan sees any over-read. */
static void test_truncated(void **state)
{
	struct image im = load("sm90");
	int fails = 0;

	for (size_t n = 0; n < im.n; n += n < 4096 ? 1 : 7) {
		unsigned char *b = malloc(n ? n : 1);

		memcpy(b, im.b, n);
		fails += try_parse(b, n, NULL, 0) != 0;
		free(b);
	}
	assert_true(fails > 0);
	free(im.b);
}


/* Bytes of the ELF and section headers set to edge values, then random
 * bytes anywhere: the parse may fail or not, but must stay in bounds. */
static void test_corrupt(void **state)
{
	static const int vals[] = { 0x00, 0xff, 0x7f, 0x80, 0x01 };
	struct image im = load("sm90");
	unsigned char *b = malloc(im.n);
	uint64_t shoff;
	size_t hot = 0;
	size_t spots[64 + 32 * 64];

	memcpy(&shoff, im.b + 0x28, 8);
	for (size_t i = 0; i < 64; i++)
		spots[hot++] = i;
	for (size_t i = 0; i < 32 * 64 && shoff + i < im.n; i++)
		spots[hot++] = shoff + i;
	for (size_t s = 0; s < hot; s++)
		for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++) {
			memcpy(b, im.b, im.n);
			b[spots[s]] = (unsigned char)vals[v];
			try_parse(b, im.n, NULL, 0);
		}
	for (int t = 0; t < 20000; t++) {
		memcpy(b, im.b, im.n);
		for (int k = 0; k < 1 + (int)(next() % 4); k++)
			b[next() % im.n] = (unsigned char)next();
		try_parse(b, im.n, NULL, 0);
	}
	free(b);
	free(im.b);
}

/* The parsed attributes give the occupancy the H200's driver gave for
 * these kernels (cuOccupancyMaxActiveBlocksPerMultiprocessor). */
static void test_occupancy_h200(void **state)
{
	static const struct {
		const char *name;
		int threads, dyn, blocks;
	} c[] = {
		{ "smem4k", 96, 0, 21 },
		{ "smem4k", 64, 8192, 17 },
		{ "manyregs", 96, 0, 8 },
		{ "stack", 32, 0, 8 },
		{ "_Z7mangled6paramsPi", 1024, 0, 2 },
	};
	struct image im = load("sm90");
	struct nt_cubin *cu = parse_ok(&im);
	struct nt_sm_limits l;
	struct nt_occupancy o;

	assert_int_equal(nt_sm_limits_for(9, 0, &l, NULL), 0);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const struct nt_cubin_kernel *k = nt_cubin_find(cu, c[i].name);
		struct nt_launch_res r = { c[i].threads, k->registers, k->static_smem, c[i].dyn };

		assert_int_equal(nt_occupancy(&l, &r, &o, NULL), 0);
		assert_int_equal(o.blocks, c[i].blocks);
	}
	nt_cubin_free(cu);
	free(im.b);
}

static void *parse_many(void *arg)
{
	const struct image *im = arg;

	for (int i = 0; i < 200; i++) {
		struct nt_cubin *c = NULL;

		if (nt_cubin_parse(im->b, im->n, &c, NULL) || nt_cubin_find(c, "stack")->registers != 250)
			return (void *)1;
		nt_cubin_free(c);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct image im = load("sm90");
	pthread_t t[4];
	void *r;

	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, parse_many, &im), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], &r), 0);
		assert_null(r);
	}
	free(im.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sm90),
		cmocka_unit_test(test_device_launches),
		cmocka_unit_test(test_variables),
		cmocka_unit_test(test_sm80),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_not_cubin),
		cmocka_unit_test(test_bad_nvinfo),
		cmocka_unit_test(test_regcount_fallback),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_occupancy_h200),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
