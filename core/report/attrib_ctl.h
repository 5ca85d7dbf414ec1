/*
 * attrib_ctl.h - the controlled fit of attrib.h, inside the core only.
 *
 * Least squares of block duration on an intercept, the SM's latency, the
 * block's co-residency and its wave (attrib.h says what the result
 * means).  Split from attrib.c because it is a separate estimator: the
 * per-block regression with a greedy drop of regressors that do not vary
 * (or that earlier ones determine) and SM-clustered standard errors.
 */
#ifndef NT_ATTRIB_CTL_H
#define NT_ATTRIB_CTL_H

#include "report/attrib.h"

/* Not fitted, every number NAN. */
void nt_attrib_ctl_init(struct nt_attrib_ols *o);

/* Fit over the blocks b[0..n-1], which must be grouped by SM
 * (the clusters of se_sm: a new cluster wherever sm changes) and have a
 * finite lat[sm]; y is cycles when `cycles`, else ns.  Fills *o; not
 * fitted (and no error) with n <= the terms estimated.  Never fails. */
void nt_attrib_ctl_fit(const struct nt_attrib_block *b, size_t n, const double *lat, int cycles,
		       struct nt_attrib_ols *o);

#endif
