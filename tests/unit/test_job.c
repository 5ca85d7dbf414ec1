/* job.h: which kernels are collectives, by the names NCCL gives them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/report.h"

static void test_collective_names(void **state)
{
	(void)state;
	/* NCCL 2.19 on, mangled and demangled */
	assert_true(nt_report_is_collective(
		"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE", NULL));
	assert_true(nt_report_is_collective("x", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
	assert_true(nt_report_is_collective("_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE", NULL));
	/* 2.12 to 2.18, and older */
	assert_true(nt_report_is_collective("_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork",
					    NULL));
	assert_true(nt_report_is_collective(NULL, "void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"));
	assert_true(nt_report_is_collective("ncclAllReduceRingLLKernel_sum_f32", NULL));
	/* not collectives: other kernels, "Kernel" only after the identifier,
	 * a length that runs past the name */
	assert_false(nt_report_is_collective("_Z4gemmPKfS0_Pfi", "gemm(float const*, float const*, float*, int)"));
	assert_false(nt_report_is_collective("_Z8ncclCopyP6Kernel", NULL));
	assert_false(nt_report_is_collective(NULL, "ncclCopy(Kernel*)"));
	assert_false(nt_report_is_collective("_Z99ncclDevKernel", NULL));
	assert_false(nt_report_is_collective("_Z4ncclv", NULL));
	assert_false(nt_report_is_collective("", ""));
	assert_false(nt_report_is_collective(NULL, NULL));
	assert_false(nt_report_is_collective("void at::native::vectorized_elementwise_kernel<4, ncclKernel>", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collective_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
