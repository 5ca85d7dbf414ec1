/* Kernel attributes by name (kattrs.h). */
#include "kattrs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

struct entry {
	struct nt_cubin_kernel k;	/* k.name owned */
	UT_hash_handle hh;
};

static struct entry *table;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* A fork() while another thread held the lock must not leave the child
 * locked out. */
static void child_unlock(void)
{
	pthread_mutex_init(&lock, NULL);
}

static void register_fork(void)
{
	pthread_atfork(NULL, NULL, child_unlock);
}

int nt_kattrs_add_module(const void *image, size_t size, int *device_launches, int (*want)(const char *mangled),
			 int *wanted, char **variable)
{
	struct nt_cubin *c;
	struct nt_err err;
	const char *first;

	*device_launches = 0;
	*wanted = 1;
	*variable = NULL;
	pthread_once(&once, register_fork);
	if (!image || nt_cubin_parse(image, size, &c, &err))
		return -1;
	*device_launches = nt_cubin_device_launches(c);
	if (nt_cubin_variables(c, &first) && !(*variable = strdup(first)))
		*variable = strdup("?");
	/* before the lock: want may take locks of its own */
	*wanted = !want;
	for (size_t i = 0; i < nt_cubin_count(c) && !*wanted; i++)
		*wanted = want(nt_cubin_kernel(c, i)->name);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nt_cubin_count(c); i++) {
		const struct nt_cubin_kernel *k = nt_cubin_kernel(c, i);
		struct entry *e;

		HASH_FIND_STR(table, k->name, e);
		if (!e) {
			e = calloc(1, sizeof(*e));
			if (!e || !(e->k.name = strdup(k->name))) {
				free(e);
				break;
			}
			HASH_ADD_KEYPTR(hh, table, e->k.name, strlen(e->k.name), e);
		}
		{
			char *name = e->k.name;

			e->k = *k;
			e->k.name = name;
		}
	}
	pthread_mutex_unlock(&lock);
	nt_cubin_free(c);
	return 0;
}

int nt_kattrs_get(const char *mangled, struct nt_cubin_kernel *out)
{
	struct entry *e;

	pthread_mutex_lock(&lock);
	HASH_FIND_STR(table, mangled, e);
	if (e) {
		*out = e->k;
		out->name = NULL;
	}
	pthread_mutex_unlock(&lock);
	return e ? 0 : -1;
}

void nt_kattrs_clear(void)
{
	struct entry *e, *tmp;

	pthread_mutex_lock(&lock);
	HASH_ITER(hh, table, e, tmp) {
		HASH_DEL(table, e);
		free(e->k.name);
		free(e);
	}
	pthread_mutex_unlock(&lock);
}
