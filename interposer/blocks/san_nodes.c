/*
 * Graph kernel nodes' descriptors (san.h, kernels/blockrec.h).  All the
 * nodes of one kernel in a graph launch take the per-function data it
 * has when the graph is queued: on the H200 two nodes of one kernel got
 * the data the second was given, and per-launch data set in a node's
 * callback did no better (docs/results/2026-12-01-graph-nodes-noise.md).  So a
 * traced node launch's data is a table, one per graph exec and kernel,
 * in device memory: from the node's %gridid + 1, which a graph launch's
 * node launches do not share, to that launch's descriptor (NULL: it
 * records nothing).  A node's %gridid is the same at every launch of its
 * exec, so the table keeps its keys from launch to launch.
 *
 * A graph launch hands a table out (it becomes the kernel's per-function
 * data) only when one of the kernel's nodes is traced in it; the other
 * launches leave it alone, and their nodes of the kernel find no data.
 * Entries are copied on the launch's stream, and that copy is not ordered
 * after the exec's last launch, which may still read them: on the H200,
 * rewriting entries while it ran gave 51 of its 100 launches of one node
 * records of no warps (session 10, run 5).  So the first time a launch
 * hands out a table that still holds descriptors of an earlier launch, it
 * waits for its stream (once per graph launch), then empties every entry
 * (a node not traced in this launch must find none), then files its
 * node's.  The exec's launches run one after another, so waiting for the
 * stream waits for the last one only when it was on the same stream: the
 * caller does not trace the nodes of a launch on another stream than the
 * exec's last.  Launches that trace nothing never wait.
 *
 * Called by the one thread that traces graph nodes at a time (the
 * backend's graph_lock); the mutex guards the tables against
 * nt_san_nodes_forget and is not held while waiting for the stream.  A
 * table grows (doubles, half full at most) into a new block; the old one
 * may still be read by a launch on the GPU, so it is freed only with its
 * context.
 */
#include "san.h"

#include <stdlib.h>
#include <string.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "kernels/blockrec.h"

struct table_key {
	CUgraphExec exec;
	CUfunction f;
};

/* A device block: the table's descriptor, then its entries. */
struct block {
	CUcontext ctx;
	void *dev;
	size_t size;
	struct block *next;
};

struct table {
	struct table_key key;
	CUcontext ctx;
	uint32_t launch;	/* the exec's launch that last handed it out */
	int handed;		/* ... and set it as per-function data */
	unsigned bits, n;	/* 2^bits entries, n keys */
	unsigned live;		/* entries with a descriptor */
	struct nt_node_entry *host;	/* what the device block holds */
	struct nt_launch_desc *dev;	/* NULL: none yet */
	UT_hash_handle hh;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct table *tables;
static struct block *blocks;	/* every device block made, for nt_san_nodes_forget */
static size_t bytes;		/* ... their size together (NUCATRACE_GRAPH_TABLES) */

static struct nt_node_entry *entries(struct nt_launch_desc *dev)
{
	return (struct nt_node_entry *)(dev + 1);
}

/* The slot of key in host (2^bits entries): its own, or the empty one
 * where it goes. */
static unsigned find(const struct nt_node_entry *host, unsigned bits, uint64_t key)
{
	unsigned mask = (1u << bits) - 1, i = nt_node_slot(key, 64 - bits);

	while (host[i].key && host[i].key != key)
		i = (i + 1) & mask;
	return i;
}

/* A new device block of 2^bits entries holding t's keys and entries;
 * copied on stream.  0, or -1 with *why set. */
static int grow(struct table *t, unsigned bits, nt_san_stream stream, const char **why)
{
	size_t n = (size_t)1 << bits, size = sizeof(struct nt_launch_desc) + n * sizeof(struct nt_node_entry);
	struct nt_launch_desc *img = NULL, *dev = NULL;
	struct nt_node_entry *host = NULL;
	struct block *b = NULL;

	*why = "out of memory";
	if (bytes + size > (size_t)nt_san.cfg.graph_tables_mib << 20) {
		*why = "graph node tables full (NUCATRACE_GRAPH_TABLES MiB; those of destroyed graph execs "
		       "are kept until their context goes)";
		return -1;
	}
	if (!(img = calloc(1, size)) || !(host = calloc(n, sizeof(*host))) || !(b = calloc(1, sizeof(*b))) ||
	    nt_san.sanitizerAlloc(t->ctx, (void **)&dev, size))
		goto fail;
	for (unsigned i = 0; t->host && i < 1u << t->bits; i++)
		if (t->host[i].key)
			host[find(host, bits, t->host[i].key)] = t->host[i];
	img->node_shift = 64 - bits;
	img->nodes = entries(dev);
	memcpy(entries(img), host, n * sizeof(*host));
	if (nt_san.sanitizerMemcpyHostToDeviceAsync(dev, img, size, stream)) {
		nt_san.sanitizerFree(t->ctx, dev);
		goto fail;
	}
	free(img);
	free(t->host);
	t->host = host;
	t->bits = bits;
	t->dev = dev;
	b->ctx = t->ctx;
	b->dev = dev;
	b->size = size;
	b->next = blocks;
	blocks = b;
	bytes += size;
	return 0;
fail:
	free(img);
	free(host);
	free(b);
	return -1;
}

/* t of key k, made when missing (mutex held); NULL: out of memory. */
static struct table *table_of(const struct table_key *k, CUcontext ctx)
{
	struct table *t;

	HASH_FIND(hh, tables, k, sizeof(*k), t);
	if (t && t->ctx != ctx) {	/* an exec handle reused in another context */
		HASH_DEL(tables, t);
		free(t->host);
		free(t);
		t = NULL;
	}
	if (!t && (t = calloc(1, sizeof(*t)))) {
		t->key = *k;
		t->ctx = ctx;
		HASH_ADD(hh, tables, key, sizeof(*k), t);
	}
	return t;
}

/* Write entry i of t (mutex held): 0, or -1 with nothing changed. */
static int put(struct table *t, unsigned i, struct nt_node_entry e, nt_san_stream stream)
{
	if (nt_san.sanitizerMemcpyHostToDeviceAsync(entries(t->dev) + i, &e, sizeof(e), stream))
		return -1;
	t->n += !t->host[i].key;
	t->live += (e.desc != NULL) - (t->host[i].desc != NULL);
	t->host[i] = e;
	return 0;
}

/* Every entry of t without its descriptor (mutex held): 0 or -1. */
static int empty(struct table *t, nt_san_stream stream)
{
	size_t n = (size_t)1 << t->bits;
	struct nt_node_entry *img = malloc(n * sizeof(*img));

	if (!img)
		return -1;
	/* keys too: node grid ids an exec update replaced would fill it */
	memset(img, 0, n * sizeof(*img));
	if (nt_san.sanitizerMemcpyHostToDeviceAsync(entries(t->dev), img, n * sizeof(*img), stream)) {
		free(img);
		return -1;
	}
	free(t->host);
	t->host = img;
	t->live = t->n = 0;
	return 0;
}

const void *nt_san_node_file(CUcontext ctx, CUgraphExec exec, uint32_t launch, CUfunction f,
			     nt_san_stream stream, uint64_t gridid, const void *desc, int *synced, int *set,
			     const char **why)
{
	struct table_key k = { exec, f };
	struct nt_node_entry e = { gridid + 1, desc };
	const void *data = NULL;
	struct table *t;
	unsigned i;

	*set = 0;
	*why = "out of memory";
	if (!e.key) {
		*why = "its grid id is out of range";
		return NULL;
	}
	pthread_mutex_lock(&lock);
	if (!(t = table_of(&k, ctx)))
		goto out;
	if (t->dev && t->launch != launch && (t->live || t->handed) && !*synced) {
		/* The exec's last launch may still read the entries (also when
		 * its descriptors were taken back: it has the table). */
		pthread_mutex_unlock(&lock);
		if (nt_san.sanitizerStreamSynchronize(stream)) {
			*why = "cannot wait for its graph exec's last launch";
			return NULL;
		}
		*synced = 1;
		pthread_mutex_lock(&lock);
		if (!(t = table_of(&k, ctx)))	/* forgotten meanwhile: made again */
			goto out;
	}
	if (t->dev && t->launch != launch) {	/* its first handout in this launch */
		if ((t->live || t->n) && empty(t, stream)) {
			*why = "cannot pass the record buffer to the launch";
			goto out;
		}
		t->launch = launch;
		t->handed = 0;
	}
	i = t->dev ? find(t->host, t->bits, e.key) : 0;
	if (!t->dev || (!t->host[i].key && 2 * (t->n + 1) > 1u << t->bits)) {
		if (grow(t, t->dev ? t->bits + 1 : 3, stream, why))
			goto out;
		t->launch = launch;
		t->handed = 0;	/* a new block: set it again */
		i = find(t->host, t->bits, e.key);
	}
	if (put(t, i, e, stream)) {
		*why = "cannot pass the record buffer to the launch";
		goto out;
	}
	*set = !t->handed;
	t->handed = 1;
	data = t->dev;
out:
	pthread_mutex_unlock(&lock);
	return data;
}

int nt_san_node_unfile(CUgraphExec exec, uint32_t launch, CUfunction f, nt_san_stream stream,
		       uint64_t gridid, int unhand)
{
	struct table_key k = { exec, f };
	struct table *t;
	int ret = 0;

	pthread_mutex_lock(&lock);
	HASH_FIND(hh, tables, &k, sizeof(k), t);
	if (t && t->dev && t->launch == launch) {
		unsigned i = find(t->host, t->bits, gridid + 1);

		if (t->host[i].desc)
			ret = put(t, i, (struct nt_node_entry){ gridid + 1, NULL }, stream);
		if (unhand)
			t->handed = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void nt_san_nodes_forget(CUcontext ctx)
{
	struct table *t, *tmp;
	struct block **p = &blocks;

	pthread_mutex_lock(&lock);
	HASH_ITER(hh, tables, t, tmp) {
		if (t->ctx == ctx) {
			HASH_DEL(tables, t);
			free(t->host);
			free(t);
		}
	}
	while (*p) {
		struct block *b = *p;

		if (b->ctx == ctx) {
			*p = b->next;
			nt_san.sanitizerFree(ctx, b->dev);
			bytes -= b->size;
			free(b);
		} else {
			p = &b->next;
		}
	}
	pthread_mutex_unlock(&lock);
}

void nt_san_nodes_forget_exec(CUgraphExec exec)
{
	struct table *t, *tmp;

	pthread_mutex_lock(&lock);
	HASH_ITER(hh, tables, t, tmp) {
		if (t->key.exec == exec) {
			HASH_DEL(tables, t);
			free(t->host);
			free(t);
		}
	}
	pthread_mutex_unlock(&lock);
}

void nt_san_nodes_reset(void)
{
	pthread_mutex_init(&lock, NULL);
}
