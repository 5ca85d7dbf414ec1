/*
 * inflight.h - when a sampling window may close, decided without ever
 * waiting for another thread.
 *
 * Closing a window unpatches modules.  A traced launch of another thread
 * that is between its decision (its module patched, its record buffer
 * given) and the moment the driver queues it would then run unpatched
 * and record nothing.  So launches are counted from the sanitizer's
 * begin callback to its end callback, and a window closes only when no
 * other launch is in flight.  Nothing here waits: the driver may hold its
 * own locks while it calls us, and a callback that waited for another
 * thread's could wait for ever.  A close that cannot happen now stays
 * pending and is tried again at the next launch; a launch that begins
 * while a close is under way traces nothing.
 *
 * The order of the two atomic steps on each side (enter: count, then look
 * for a close; close: mark, then count) makes sure one of the two sees
 * the other.
 */
#ifndef NT_INFLIGHT_H
#define NT_INFLIGHT_H

struct nt_inflight {
	int n;		/* launches between begin and end */
	int closing;	/* a close is under way */
	int pending;	/* a close is wanted */
};

/* A launch begins; 1 when a close is under way (trace nothing). */
int nt_inflight_enter(struct nt_inflight *f);
void nt_inflight_leave(struct nt_inflight *f);
void nt_inflight_want_close(struct nt_inflight *f);
/* 1 when the caller may close now: a close is wanted and no launch but
 * the caller's own (mine: 1 when the caller is in flight, else 0) is in
 * flight.  It then unpatches and calls nt_inflight_closed(). */
int nt_inflight_try_close(struct nt_inflight *f, int mine);
void nt_inflight_closed(struct nt_inflight *f);

#endif
