/* Closing windows without waiting (inflight.h). */
#include "inflight.h"

int nt_inflight_enter(struct nt_inflight *f)
{
	__atomic_add_fetch(&f->n, 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&f->closing, __ATOMIC_SEQ_CST);
}

void nt_inflight_leave(struct nt_inflight *f)
{
	__atomic_sub_fetch(&f->n, 1, __ATOMIC_SEQ_CST);
}

void nt_inflight_want_close(struct nt_inflight *f)
{
	__atomic_store_n(&f->pending, 1, __ATOMIC_SEQ_CST);
}

int nt_inflight_close_wanted(struct nt_inflight *f)
{
	return __atomic_load_n(&f->pending, __ATOMIC_SEQ_CST);
}

int nt_inflight_try_switch(struct nt_inflight *f, int mine)
{
	int zero = 0;

	/* Most tries fail here, without a mark: a launch that begins while a
	 * switch is marked makes no sanitizer call at all. */
	if (__atomic_load_n(&f->n, __ATOMIC_SEQ_CST) != mine)
		return 0;
	if (!__atomic_compare_exchange_n(&f->closing, &zero, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return 0;
	if (__atomic_load_n(&f->n, __ATOMIC_SEQ_CST) == mine)
		return 1;
	__atomic_store_n(&f->closing, 0, __ATOMIC_SEQ_CST);
	return 0;
}

int nt_inflight_try_close(struct nt_inflight *f, int mine)
{
	if (!__atomic_load_n(&f->pending, __ATOMIC_SEQ_CST) || !nt_inflight_try_switch(f, mine))
		return 0;
	__atomic_store_n(&f->pending, 0, __ATOMIC_SEQ_CST);
	return 1;
}

void nt_inflight_closed(struct nt_inflight *f)
{
	__atomic_store_n(&f->closing, 0, __ATOMIC_SEQ_CST);
}
