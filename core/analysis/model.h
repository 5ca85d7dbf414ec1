/*
 * model.h - fit the NUCA latency model to an SM x line matrix.
 *
 * The paper's model is additive: the latency SM `i` sees on line `j` is
 *
 *     L[i][j] = mu + a[i] + b[j]                      (additive)
 *
 * where a is the SM's distance term and b the line's (its L2 slice).  On
 * Hopper the two L2 partitions add a product term (the SM's partition
 * times the line's partition), so the fit also takes the top singular
 * triplets of what the additive model leaves:
 *
 *     L[i][j] = mu + a[i] + b[j] + sum_t sigma[t] * u[t][i] * v[t][j]
 *
 * Input: `mat` is row-major, n_sm rows (one per smid) and n_line columns;
 * NAN means "not measured".  A row that is entirely NAN (an SM that was
 * not measured) is skipped: its a[i] and u[t][i] are NAN and it counts in
 * no sum.  Any other NAN or infinite cell is an error naming the matrix
 * (`what`, e.g. "first-touch matrix"; NULL says "matrix"), the SM and the
 * line, because the least-squares terms below assume a full matrix.
 *
 * Output (struct nt_fit):
 *   - mu is the grand mean; a and b are row and column mean offsets, each
 *     summing to zero over the rows used (the least-squares solution for
 *     a complete matrix);
 *   - k <= kmax interaction terms; fewer when the residual has lower rank
 *     (sigma below 1e-6 of the data's spread).  sigma[t] >= sigma[t+1];
 *     u[t] (n_sm, unit over the rows used) and v[t] (n_line, unit) are
 *     the singular vectors.  Each sign is fixed so that u[t]'s largest
 *     |component| is positive (the first such on a tie): same data, same
 *     output.  Unused u/v pointers are NULL, unused sigma NAN;
 *   - r2[0] is the R^2 (1 - SS_res / SS_tot) of the additive model and
 *     r2[t] that with t interaction terms added, for t <= kmax; when
 *     fewer than kmax terms exist, r2[t] for k < t <= kmax repeats r2[k]
 *     (a zero term adds nothing), and r2[t] for t > kmax is NAN.  A
 *     matrix with no spread at all has r2 = 1;
 *   - rows_used counts the SMs fitted.
 *
 * Lifecycle: nt_fit_matrix() fills a caller-owned struct (previous
 * contents are ignored) and allocates its arrays; nt_fit_free() frees
 * them and zeroes the struct.  On error the struct holds nothing to free,
 * but calling nt_fit_free() on it is harmless.
 *
 * Cost: O(n_sm^2 * n_line + n_sm^3); a 132 x 256 matrix takes a few ms.
 */
#ifndef NT_MODEL_H
#define NT_MODEL_H

#include "util/err.h"

#define NT_FIT_KMAX 3

struct nt_fit {
	int n_sm, n_line, k;
	double mu;
	double *a;		/* [n_sm], NAN for skipped rows */
	double *b;		/* [n_line] */
	double r2[NT_FIT_KMAX + 1];
	double sigma[NT_FIT_KMAX];
	double *u[NT_FIT_KMAX];	/* [n_sm] unit over used rows, NAN for skipped */
	double *v[NT_FIT_KMAX];	/* [n_line] unit */
	int rows_used;
};

/* Fit mu + a + b and up to kmax (0..NT_FIT_KMAX) interaction terms.
 * 0 on success; -1 with err set, starting with what, on bad arguments,
 * a hole in a measured row, no measured row, or out of memory. */
int nt_fit_matrix(const double *mat, int n_sm, int n_line, int kmax, const char *what,
		  struct nt_fit *fit, struct nt_err *err);
void nt_fit_free(struct nt_fit *fit);

#endif
