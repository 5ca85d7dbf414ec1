/*
 * inflight.h - when a sampling window may close, decided without ever
 * waiting for another thread.
 *
 * A switch (patching a module, or unpatching every module when a window
 * closes) must not overlap another thread's launch: a traced launch
 * between its decision and the moment the driver queues it would run
 * unpatched code, and on the H200 patching a module while other threads
 * were inside their launch callbacks, calling the sanitizer, hung the
 * process (8 threads x 4 streams).  So launches are counted from the
 * sanitizer's begin callback to its end callback, and a switch happens
 * only when no other launch is in flight.  Nothing here waits: the driver
 * may hold its own locks while it calls us, and a callback that waited
 * for another thread's could wait for ever.  A close that cannot happen
 * now stays pending and is tried again at the next launch; a patch that
 * cannot, leaves its launch untraced; a launch that begins while a switch
 * is under way makes no sanitizer call at all.
 *
 * The order of the two atomic steps on each side (enter: count, then look
 * for a close; close: mark, then count) makes sure one of the two sees
 * the other.
 */
#ifndef NT_INFLIGHT_H
#define NT_INFLIGHT_H

struct nt_inflight {
	int n;		/* launches between begin and end */
	int closing;	/* a switch is under way */
	int pending;	/* a close is wanted */
};

/* A launch begins; 1 when a switch is under way (call nothing). */
int nt_inflight_enter(struct nt_inflight *f);
void nt_inflight_leave(struct nt_inflight *f);
void nt_inflight_want_close(struct nt_inflight *f);
/* 1 when a close is wanted (a hint: try_close decides). */
int nt_inflight_close_wanted(struct nt_inflight *f);
/* 1 when the caller may switch now: no launch but the caller's own
 * (mine: 1 when the caller is in flight, else 0) is in flight.  It then
 * switches and calls nt_inflight_closed(). */
int nt_inflight_try_switch(struct nt_inflight *f, int mine);
/* The same, when a close is wanted; the want is then taken. */
int nt_inflight_try_close(struct nt_inflight *f, int mine);
void nt_inflight_closed(struct nt_inflight *f);

#endif
