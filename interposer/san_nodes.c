/*
 * Graph kernel nodes' descriptors (san.h, kernels/blockrec.h).  All the
 * nodes of one kernel in a graph launch take the per-function data it
 * has when the graph is queued: on the H200 two nodes of one kernel got
 * the data the second was given, and per-launch data set in a node's
 * callback did no better (docs/results/2026-12-01-session10.md).  So a
 * node launch's data is a table, one per graph exec and kernel, in device
 * memory: from the node's %gridid + 1, which a graph launch's node
 * launches do not share, to that launch's descriptor (NULL: it records
 * nothing).  A node's %gridid is the same at every launch of its exec,
 * so the table keeps its keys from launch to launch, and each node's
 * entry is written again at each launch, on the launch's stream, before
 * the graph.  The copy is not ordered after the exec's last launch: on
 * the H200, rewriting the entries while it ran gave 51 of its 100 launches
 * of one node records of no warps (session 10, run 5).  So before a
 * launch's first rewrite the stream is waited for (once per graph launch:
 * a traced graph launch waits for the work queued before it).  A launch
 * on another stream than the exec's last one could still overlap it: its
 * nodes are not traced (the next launch on that stream is).
 *
 * A table grows (doubles, half full at most) into a new block; the old
 * one may still be read by a launch on the GPU, so it is freed only with
 * its context.  One mutex covers the tables and their copies.
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
	struct block *next;
};

struct table {
	struct table_key key;
	CUcontext ctx;
	nt_san_stream stream;	/* of the exec's launch that last wrote it */
	uint32_t launch;	/* ... its launchId */
	int refuse;		/* ... on another stream than the one before */
	unsigned bits, n;	/* 2^bits entries, n in use */
	struct nt_node_entry *host;	/* what the device block holds */
	struct nt_launch_desc *dev;	/* NULL: none yet */
	UT_hash_handle hh;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct table *tables;
static struct block *blocks;	/* every device block made, for nt_san_nodes_forget */

static unsigned slot_of(uint64_t key, unsigned bits)
{
	return (unsigned)((key * NT_NODE_HASH) >> (64 - bits));
}

static struct nt_node_entry *entries(struct nt_launch_desc *dev)
{
	return (struct nt_node_entry *)(dev + 1);
}

/* The slot of key in host (2^bits entries): its own, or the empty one
 * where it goes. */
static unsigned find(const struct nt_node_entry *host, unsigned bits, uint64_t key)
{
	unsigned mask = (1u << bits) - 1, i = slot_of(key, bits);

	while (host[i].key && host[i].key != key)
		i = (i + 1) & mask;
	return i;
}

/* A new device block of 2^bits entries holding t's keys and entries;
 * copied on stream. */
static int grow(struct table *t, unsigned bits, nt_san_stream stream)
{
	size_t n = (size_t)1 << bits, size = sizeof(struct nt_launch_desc) + n * sizeof(struct nt_node_entry);
	struct nt_launch_desc *img = calloc(1, size), *dev = NULL;
	struct nt_node_entry *host = calloc(n, sizeof(*host));
	struct block *b = calloc(1, sizeof(*b));

	if (!img || !host || !b || nt_san.sanitizerAlloc(t->ctx, (void **)&dev, size))
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
	b->next = blocks;
	blocks = b;
	return 0;
fail:
	free(img);
	free(host);
	free(b);
	return -1;
}

const void *nt_san_node_data(CUcontext ctx, CUgraphExec exec, uint32_t launch, CUfunction f,
			     nt_san_stream stream, uint64_t gridid, const void *desc, int *synced,
			     const char **why)
{
	struct table_key k = { exec, f };
	struct nt_node_entry e = { gridid + 1, desc };
	const void *data = NULL;
	struct table *t;
	unsigned i;

	*why = "out of memory";
	if (!e.key)
		return NULL;
	pthread_mutex_lock(&lock);
	HASH_FIND(hh, tables, &k, sizeof(k), t);
	if (t && t->ctx != ctx) {	/* an exec handle reused in another context */
		HASH_DEL(tables, t);
		free(t->host);
		free(t);
		t = NULL;
	}
	if (!t) {
		if (!(t = calloc(1, sizeof(*t))))
			goto out;
		t->key = k;
		t->ctx = ctx;
		HASH_ADD(hh, tables, key, sizeof(k), t);
	}
	if (t->dev && t->launch != launch) {	/* the first node of this launch */
		if (!*synced) {
			/* The exec's last launch may still read the entries. */
			if (nt_san.sanitizerStreamSynchronize(stream)) {
				*why = "cannot wait for the graph exec's last launch";
				goto out;
			}
			*synced = 1;
		}
		t->refuse = t->stream != stream;
		t->stream = stream;
		t->launch = launch;
	}
	if (desc && t->refuse) {
		/* the caller writes this node's entry empty */
		*why = "its graph exec was launched on another stream than at its last launch "
		       "(the two launches' node records could mix)";
		goto out;
	}
	i = t->dev ? find(t->host, t->bits, e.key) : 0;
	if (!t->dev || (!t->host[i].key && 2 * (t->n + 1) > 1u << t->bits)) {
		if (grow(t, t->dev ? t->bits + 1 : 3, stream))
			goto out;
		i = find(t->host, t->bits, e.key);
	}
	t->n += !t->host[i].key;
	t->host[i] = e;
	if (nt_san.sanitizerMemcpyHostToDeviceAsync(entries(t->dev) + i, &e, sizeof(e), stream)) {
		*why = "cannot pass the record buffer to the launch";
		goto out;
	}
	t->stream = stream;
	t->launch = launch;
	data = t->dev;
out:
	pthread_mutex_unlock(&lock);
	return data;
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
			free(b);
		} else {
			p = &b->next;
		}
	}
	pthread_mutex_unlock(&lock);
}

void nt_san_nodes_reset(void)
{
	pthread_mutex_init(&lock, NULL);
}
