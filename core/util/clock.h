/*
 * clock.h - the one monotonic clock nucatrace times itself with.
 */
#ifndef NT_CLOCK_H
#define NT_CLOCK_H

/* Seconds on CLOCK_MONOTONIC: for intervals, never for dates. */
double nt_now_s(void);

#endif
