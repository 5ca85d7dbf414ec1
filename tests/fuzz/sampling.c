/*
 * Fuzz target: a sampling policy (sampling.h), as --sample and
 * NUCATRACE_SAMPLE give one (fuzz.h, docs/fuzzing.md).  A policy the
 * parser accepts decides launches, and its canonical form parses to
 * itself (sampling.h: the same policy always gives the same string).  A
 * kernel the policy says it may never trace (a module of only such
 * kernels is never instrumented) is never picked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trace/sampling.h"

static const char *const kernels[] = {
	"_Z4gemmPfS_S_i", "_Z5chasePi", "ampere_sgemm_128x64_nn", "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *policy = fuzz_string(data, size), *canon = NULL;
	struct nt_sampling *s = NULL, *again = NULL;
	struct nt_err err;

	if (nt_sampling_parse(policy, &s, &err))
		goto out;
	for (int i = 0; i < 64; i++) {
		const char *k = kernels[i % 4], *dm = NULL;
		int d, may;

		if (nt_sampling_needs_demangled(s, k) && i % 3)
			dm = "gemm(float*, float*, float*, int)";
		may = nt_sampling_may_trace(s, k, dm);
		d = nt_sampling_decide(s, k, dm, i * 1e-3);
		if ((d & NT_SAMPLE_TRACE) && !may) {
			fprintf(stderr, "policy '%s' picked '%s', which it said it may never trace\n", policy, k);
			abort();
		}
		if (d & NT_SAMPLE_TRACE) {	/* its grid, for blocks=, and its GPU time, for gpu= */
			nt_sampling_blocks(s, 1 + i % 5 * 300);
			nt_sampling_gpu_time(s, nt_sampling_phase_id(s) - i % 2, i % 7 * 1e-3);
		}
		if (d & NT_SAMPLE_CLOSE)	/* the modules unpatched: budget= counts it */
			nt_sampling_window_done(s, i * 1e-3 + 5e-4);
	}
	if (!(canon = strdup(nt_sampling_string(s))))
		abort();
	if (nt_sampling_parse(canon, &again, &err)) {
		fprintf(stderr, "canonical form '%s' does not parse: %s\n", canon, err.msg);
		abort();
	}
	if (strcmp(canon, nt_sampling_string(again))) {
		fprintf(stderr, "canonical form '%s' parses to '%s'\n", canon, nt_sampling_string(again));
		abort();
	}
out:
	nt_sampling_free(s);
	nt_sampling_free(again);
	free(canon);
	free(policy);
	return 0;
}
