/*
 * The program's modules and their patching (san.h).  A module is
 * patched (the block callbacks of kernels/patch.cu inserted) when a
 * traced launch first needs it in a window, and every patched module is
 * unpatched when the window closes: between windows the program runs its
 * own code.  Where and when a switch may happen is backend_sanitizer.c's
 * to decide; the patches themselves go into a context as its modules load.
 */
#include "san.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "gpu/cudrv.h"
#include "interposer/collector.h"
#include "util/clock.h"

extern const unsigned char nt_patch_fatbin[];

struct mod_state {
	CUmodule mod;
	CUcontext ctx;
	int patched;		/* now */
	int entry_only;		/* ... with the block entry site alone */
	int broken;		/* patching failed: never again */
	int device_launches;	/* launches grids from the device: never patched */
	int twin;		/* an instrumented twin (san_twins.c): no program exec runs it */
	int wanted;		/* to be patched before the next launch */
	UT_hash_handle hh;
};

struct ctx_patches {
	CUcontext ctx;
	int added;		/* sanitizerAddPatches done */
	int adding;		/* ... under way */
	UT_hash_handle hh;
};

#define BUSY "another thread was patching a module"
#define DEVICE_LAUNCHES                                                                                   \
	"its module launches kernels from the device (dynamic parallelism or device graph launch), which run " \
	"patched code with data the Sanitizer does not pass: never instrumented"

static struct mod_state *modules;
static struct ctx_patches *contexts;
static int n_patched, n_wanted;
/* One patching at a time (the API wants them serialised), never waited
 * for: a launch that finds another thread patching does without. */
static pthread_mutex_t patching = PTHREAD_MUTEX_INITIALIZER;

/* ms is gone (nt_san.lock held). */
static void module_gone(struct mod_state *ms)
{
	n_patched -= ms->patched;
	__atomic_sub_fetch(&n_wanted, ms->wanted, __ATOMIC_RELAXED);
	HASH_DEL(modules, ms);
	free(ms);
}

void nt_san_module_loaded(CUcontext ctx, CUmodule mod, int device_launches)
{
	struct mod_state *ms;

	/* A handle seen before in another context is a new module now (its
	 * context went without unload callbacks, and the driver gave the
	 * handle again), unpatched.  In the same context it is the same
	 * module, seen loading again. */
	HASH_FIND_PTR(modules, &mod, ms);
	if (ms && ms->ctx == ctx)
		return;
	if (ms)
		module_gone(ms);
	if (!(ms = calloc(1, sizeof(*ms))))
		return;
	ms->mod = mod;
	ms->ctx = ctx;
	ms->device_launches = device_launches;
	ms->twin = nt_san_twin_own();
	HASH_ADD_PTR(modules, mod, ms);
}

void nt_san_module_unloading(CUmodule mod)
{
	struct mod_state *ms;

	HASH_FIND_PTR(modules, &mod, ms);
	if (ms)
		module_gone(ms);
}

int nt_san_module_patched(CUmodule mod)
{
	struct mod_state *ms;

	HASH_FIND_PTR(modules, &mod, ms);
	return ms && ms->patched;
}

int nt_san_module_entry_only(CUmodule mod)
{
	struct mod_state *ms;

	HASH_FIND_PTR(modules, &mod, ms);
	return ms && ms->patched && ms->entry_only;
}

int nt_san_any_patched(void)
{
	return n_patched > 0;
}

static int context_ready(CUcontext ctx);

/* Why ms (NULL: not seen loading) can never be patched, or NULL
 * (nt_san.lock held). */
static const char *unpatchable(const struct mod_state *ms)
{
	if (!ms)
		return "module not seen loading";
	if (ms->device_launches)
		return DEVICE_LAUNCHES;
	if (ms->broken)
		return "module cannot be instrumented";
	if (!context_ready(ms->ctx))
		return "the block callbacks could not be loaded into the context";
	return NULL;
}

/* Why ms cannot be patched now, or NULL: never (unpatchable), or while a
 * live graph exec runs it (san_execs.c), unless it already is.  A twin
 * runs in no exec of the program's (only in those pointed at it, and
 * they are pointed back before it is unpatched). */
static const char *not_now(const struct mod_state *ms)
{
	const char *why = unpatchable(ms);

	return why || ms->patched || ms->twin ? why : nt_san_exec_holds(ms->mod, ms->ctx);
}

const char *nt_san_want(CUmodule mod)
{
	struct mod_state *ms;
	const char *why;

	HASH_FIND_PTR(modules, &mod, ms);
	if ((why = not_now(ms)))
		return why;
	if (!ms->wanted && !ms->patched) {
		ms->wanted = 1;
		__atomic_add_fetch(&n_wanted, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

const char *nt_san_unpatchable(CUmodule mod)
{
	struct mod_state *ms;

	HASH_FIND_PTR(modules, &mod, ms);
	return unpatchable(ms);
}

int nt_san_any_wanted(void)
{
	return __atomic_load_n(&n_wanted, __ATOMIC_RELAXED) > 0;
}

/* Room for a batch of n modules to switch and their contexts: 0, or -1
 * with neither (nothing is switched without its wait). */
static int batch_alloc(int n, CUmodule **mods, CUcontext **ctxs)
{
	*mods = n > 0 ? malloc((size_t)n * sizeof(**mods)) : NULL;
	*ctxs = *mods ? malloc((size_t)n * sizeof(**ctxs)) : NULL;
	if (*ctxs)
		return 0;
	free(*mods);
	*mods = NULL;
	return -1;
}

/* Wait for the GPU work of the contexts whose modules are about to be
 * patched or unpatched (the caller's capture mode relaxed, no launch in
 * flight), once per batch of modules: a launch queued or running while
 * its module is switched under it is not known to be safe.  PyTorch's
 * captured training step with a window ran into "misaligned address",
 * the first failed copy just after a patch under queued launches of the
 * same module or a phase's switch, in 7 of 41 runs without this wait and
 * 1 of 29 with it (H100s; the cause is still open:
 * docs/results/2026-12-06-switch-settle.md).  It costs 2-4 ms a window
 * there.  Graph node tables retired before it are then freed
 * (san_nodes.c). */
static void settle(const CUcontext *ctxs, int n)
{
	const struct nt_cuda *cu = nt_san_cuda();
	CUcontext cur = NULL;
	double t0 = nt_now_s();
	uint64_t mark;

	if (!cu || !n || cu->cuCtxGetCurrent(&cur))
		return;
	mark = nt_san_nodes_mark();	/* before the waits */
	for (int i = 0; i < n; i++) {
		if (ctxs[i] != cur && cu->cuCtxSetCurrent(ctxs[i]))
			continue;
		/* an error here is the program's: its next call sees it */
		if (!cu->cuCtxSynchronize())
			nt_san_nodes_reclaim(ctxs[i], mark);	/* node tables no launch reads now */
	}
	if (n > 1 || ctxs[0] != cur)
		cu->cuCtxSetCurrent(cur);
	nt_collector_settled(nt_now_s() - t0);
}

/* mod's functions (CUDA 12.4's cuModuleEnumerateFunctions, whose handles
 * may be of functions not loaded yet: its documentation), in *fs (to be
 * freed; NULL where fewer came than counted) and *n: 0, a driver error,
 * or CUDA_ERROR_NOT_SUPPORTED without the calls. */
static CUresult module_functions(CUmodule mod, CUfunction **fs, unsigned *n)
{
	static int want = -1;
	static CUresult (*count_fn)(unsigned *, CUmodule);
	static CUresult (*list_fn)(CUfunction *, unsigned, CUmodule);
	const struct nt_cuda *cu;
	CUresult r;

	if (want < 0)
		want = (cu = nt_san_cuda()) &&
		       (*(void **)&count_fn = dlsym(cu->handle, "cuModuleGetFunctionCount")) &&
		       (*(void **)&list_fn = dlsym(cu->handle, "cuModuleEnumerateFunctions"));
	if (!want)
		return CUDA_ERROR_NOT_SUPPORTED;
	*fs = NULL;
	if ((r = count_fn(n, mod)) || !*n)
		return r;
	if (!(*fs = calloc(*n, sizeof(**fs))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = list_fn(*fs, *n, mod))) {
		free(*fs);
		*fs = NULL;
	}
	return r;
}

/* NUCATRACE_LOAD_BEFORE_PATCH=1 (an experiment, issue 33): every
 * function of a module is loaded before a switch patches it, so that
 * none loads lazily into it while it is patched (the Sanitizer would
 * patch it inside the launch that loads it).  Needs CUDA 12.4's
 * cuFuncLoad.  It made a window's patching 0.67 s instead of 0.015 s
 * (docs/results/2026-12-07-lazy-loads.md). */
static void load_all(CUmodule mod)
{
	static int want = -1;
	static CUresult (*load_fn)(CUfunction);
	const struct nt_cuda *cu;
	CUfunction *fs;
	unsigned n = 0;

	if (want < 0)
		want = nt_san.cfg.load_before_patch && (cu = nt_san_cuda()) &&
		       (*(void **)&load_fn = dlsym(cu->handle, "cuFuncLoad"));
	if (!want || module_functions(mod, &fs, &n))
		return;
	for (unsigned i = 0; i < n; i++)
		if (fs[i])
			load_fn(fs[i]);
	free(fs);
}

/* The function called name among mod's (module_functions), matched by
 * cuFuncGetName: 0, CUDA_ERROR_NOT_FOUND, a driver error, or
 * CUDA_ERROR_NOT_SUPPORTED without CUDA 12.4's calls. */
static CUresult enumerated_function(CUfunction *f, CUmodule mod, const char *name)
{
	static int want = -1;
	static CUresult (*name_fn)(const char **, CUfunction);
	const struct nt_cuda *cu;
	CUfunction *fs;
	const char *s;
	unsigned n = 0;
	CUresult r;

	if (want < 0)
		want = (cu = nt_san_cuda()) && (*(void **)&name_fn = dlsym(cu->handle, "cuFuncGetName"));
	if (!want)
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((r = module_functions(mod, &fs, &n)))
		return r;
	r = CUDA_ERROR_NOT_FOUND;
	for (unsigned i = 0; i < n && r; i++)
		if (fs[i] && !name_fn(&s, fs[i]) && s && !strcmp(s, name)) {
			*f = fs[i];
			r = CUDA_SUCCESS;
		}
	free(fs);
	return r;
}

/* A CUkernel's module in the current context and its name, through its
 * library (CUDA 12.5's cuKernelGetLibrary), neither loading the
 * function: cuKernelGetFunction loads the function it returns (PyTorch's
 * launches in docs/results/2026-12-07-lazy-race.md).  0, or a driver
 * error. */
static CUresult kernel_module(CUmodule *mod, const char **name, CUkernel k)
{
	static int want = -1;
	static CUresult (*library_of)(CUlibrary *, CUkernel);
	static CUresult (*library_module)(CUmodule *, CUlibrary);
	static CUresult (*name_of)(const char **, CUkernel);
	const struct nt_cuda *cu;
	CUlibrary lib;
	CUresult r;

	if (want < 0)
		want = (cu = nt_san_cuda()) &&
		       (*(void **)&library_of = dlsym(cu->handle, "cuKernelGetLibrary")) &&
		       (*(void **)&library_module = dlsym(cu->handle, "cuLibraryGetModule")) &&
		       (*(void **)&name_of = dlsym(cu->handle, "cuKernelGetName"));
	if (!want)
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((r = library_of(&lib, k)) || (r = library_module(mod, lib)))
		return r;
	return name_of(name, k);
}

/* The function called name in mod, meant to be found without loading it:
 * among the module's (enumerated_function).  cuModuleGetFunction loaded
 * it on driver 580, before the wait (an H100, docs/results/2026-12-07-
 * shadow-default-recheck.md): it is the lookup only where
 * cuModuleEnumerateFunctions is not.  0, or a driver error. */
static CUresult module_function(CUfunction *f, CUmodule mod, const char *name)
{
	const struct nt_cuda *cu;
	CUresult r;

	if ((r = enumerated_function(f, mod, name)) != CUDA_ERROR_NOT_SUPPORTED)
		return r;
	return (cu = nt_san_cuda()) ? cu->cuModuleGetFunction(f, mod, name) : CUDA_ERROR_NOT_SUPPORTED;
}

/* mod's context if it is patched now, else NULL. */
static CUcontext patched_context(CUmodule mod)
{
	struct mod_state *ms;
	CUcontext ctx = NULL;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(modules, &mod, ms);
	if (ms && ms->patched)
		ctx = ms->ctx;
	pthread_mutex_unlock(&nt_san.lock);
	return ctx;
}

void nt_san_lazy_settle(CUfunction f)
{
	static int want = -1;
	static CUresult (*is_loaded)(CUfunctionLoadingState *, CUfunction);
	static CUresult (*load)(CUfunction);
	static CUresult (*module_of)(CUmodule *, CUfunction);
	const struct nt_cuda *cu;
	CUfunctionLoadingState state;
	CUmodule mod;
	CUcontext ctx;
	int kernel = 0;

	if (want < 0)
		want = nt_san.cfg.lazy_settle && (cu = nt_san_cuda()) &&
		       (*(void **)&is_loaded = dlsym(cu->handle, "cuFuncIsLoaded")) &&
		       (*(void **)&load = dlsym(cu->handle, "cuFuncLoad")) &&
		       (*(void **)&module_of = dlsym(cu->handle, "cuFuncGetModule"));
	if (!want || !f)
		return;
	if (is_loaded(&state, f)) {	/* a CUkernel: its function in this context */
		const char *name;
		CUfunction g;

		/* (the module first: a lookup among its functions only where
		 * one may load into it patched) */
		if (kernel_module(&mod, &name, (CUkernel)f) || !patched_context(mod) ||
		    module_function(&g, mod, name) || is_loaded(&state, g))
			return;
		f = g;
		kernel = 1;
	} else if (module_of(&mod, f)) {
		return;
	}
	if (state != CU_FUNCTION_LOADING_STATE_UNLOADED || !(ctx = patched_context(mod)))
		return;
	settle(&ctx, 1);
	if (!load(f))
		nt_collector_lazy_settled(kernel);
}

void nt_san_tables_press(void)
{
	CUcontext ctxs[16];	/* (more contexts than these: the rest at a later wait) */
	int n = nt_san_nodes_pressed(ctxs, 16);

	if (!n)
		return;
	settle(ctxs, n);
	nt_san_nodes_pressed_done();
	nt_collector_table_wait(1);
}

void nt_san_patch_wanted(void)
{
	struct mod_state *ms, *tmp;
	CUmodule *mods = NULL;
	CUcontext *ctxs = NULL;
	int n = 0, nc = 0;

	pthread_mutex_lock(&nt_san.lock);
	if (!batch_alloc(n_wanted, &mods, &ctxs))
		HASH_ITER(hh, modules, ms, tmp)
			if (ms->wanted && n < n_wanted) {
				mods[n++] = ms->mod;
				ms->wanted = 0;
				nt_san_note_ctx(ctxs, &nc, ms->ctx);	/* room for one per module */
			}
	__atomic_sub_fetch(&n_wanted, n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&nt_san.lock);
	settle(ctxs, nc);
	for (int i = 0; i < n; i++) {
		const char *why = NULL;

		load_all(mods[i]);
		if (nt_san_patch(mods[i], &why) && !strcmp(why, BUSY)) {
			pthread_mutex_lock(&nt_san.lock);
			nt_san_want(mods[i]);	/* at a later launch */
			pthread_mutex_unlock(&nt_san.lock);
		}
	}
	free(mods);
	free(ctxs);
}

/* The patches (kernels/patch.cu) go into a context when its first
 * module loads, in the module callback: never in a launch callback, where
 * sanitizerAddPatches waited on the H200 for a driver lock that the
 * launch itself held (every process hung at its first traced launch,
 * docs/results/2026-12-01-switch-safety.md).  Nothing waits here either: the
 * module of the patches, loading, calls us again and finds it under way. */
void nt_san_context_patches(CUcontext ctx)
{
	struct ctx_patches *cp;
	nt_san_result r;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(contexts, &ctx, cp);
	if (!cp && (cp = calloc(1, sizeof(*cp)))) {
		cp->ctx = ctx;
		HASH_ADD_PTR(contexts, ctx, cp);
	}
	if (!cp || cp->added || cp->adding) {
		pthread_mutex_unlock(&nt_san.lock);
		return;
	}
	cp->adding = 1;
	pthread_mutex_unlock(&nt_san.lock);
	r = nt_san.sanitizerAddPatches(nt_patch_fatbin, ctx);
	pthread_mutex_lock(&nt_san.lock);
	cp->adding = 0;
	cp->added = !r;
	pthread_mutex_unlock(&nt_san.lock);
	if (r)
		nt_warn("cannot load the block callbacks into a CUDA context (%s); its kernels are not traced",
			nt_san_error(r));
}

void nt_san_modules_reset(void)
{
	pthread_mutex_init(&patching, NULL);
}

void nt_san_context_forget(CUcontext ctx)
{
	struct ctx_patches *cp;
	struct mod_state *ms, *tmp;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(contexts, &ctx, cp);
	if (cp && !cp->adding) {
		HASH_DEL(contexts, cp);
		free(cp);
	}
	/* its modules go with it, unload callbacks or not */
	HASH_ITER(hh, modules, ms, tmp)
		if (ms->ctx == ctx)
			module_gone(ms);
	pthread_mutex_unlock(&nt_san.lock);
}

/* With nt_san.lock held. */
static int context_ready(CUcontext ctx)
{
	struct ctx_patches *cp;

	HASH_FIND_PTR(contexts, &ctx, cp);
	return cp && cp->added;
}

int nt_san_patch(CUmodule mod, const char **why)
{
	struct mod_state *ms;
	nt_san_result r;
	/* NUCATRACE_PATCH_NULL=1 (an experiment, issue 33): the sites
	 * patched as ever, with callbacks that do nothing (kernels/patch.cu) */
	int patched, entry = nt_collector_entry_phase(), null = nt_san.cfg.patch_null;
	double t0;

	if (pthread_mutex_trylock(&patching)) {
		*why = BUSY;
		return -1;
	}
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(modules, &mod, ms);
	*why = not_now(ms);
	patched = ms && ms->patched;
	pthread_mutex_unlock(&nt_san.lock);
	if (*why || patched) {
		pthread_mutex_unlock(&patching);
		return *why ? -1 : 0;
	}
	t0 = nt_now_s();
	/* Every time: after an unpatch, a module patched again without them
	 * ran no callback on the H200 (windows after the first recorded
	 * nothing). */
	if (entry)	/* the entry site alone (kernels/blockrec.h) */
		r = nt_san.sanitizerPatchInstructions(NT_SAN_INSTRUCTION_BLOCK_ENTER, mod,
						      null ? "nt_block_enter_null" : "nt_block_enter_only");
	else if (!(r = nt_san.sanitizerPatchInstructions(NT_SAN_INSTRUCTION_BLOCK_ENTER, mod,
							     null ? "nt_block_enter_null" : "nt_block_enter")))
		r = nt_san.sanitizerPatchInstructions(NT_SAN_INSTRUCTION_BLOCK_EXIT, mod,
						      null ? "nt_block_exit_null" : "nt_block_exit");
	if (!r)
		r = nt_san.sanitizerPatchModule(mod);
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(modules, &mod, ms);
	if (ms && !r) {
		ms->patched = 1;
		ms->entry_only = entry;
		n_patched++;
	} else if (ms) {
		ms->broken = 1;
	}
	pthread_mutex_unlock(&nt_san.lock);
	pthread_mutex_unlock(&patching);
	nt_collector_switched(1, nt_now_s() - t0);
	nt_san_slow(nt_now_s() - t0);
	if (r) {
		nt_warn("cannot instrument a CUDA module (%s); its kernels are not traced", nt_san_error(r));
		*why = "module cannot be instrumented";
		return -1;
	}
	return 0;
}

int nt_san_unpatch_all(void)
{
	struct mod_state *ms, *tmp;
	CUmodule *mods = NULL;
	CUcontext *ctxs = NULL;
	int n = 0, nc = 0;
	double t0;

	/* A module patched as it loads, meanwhile: not now. */
	if (pthread_mutex_trylock(&patching))
		return -1;
	pthread_mutex_lock(&nt_san.lock);
	if (!batch_alloc(n_patched, &mods, &ctxs))
		HASH_ITER(hh, modules, ms, tmp)
			if (ms->patched) {
				mods[n++] = ms->mod;
				nt_san_note_ctx(ctxs, &nc, ms->ctx);	/* room for one per module */
			}
	HASH_ITER(hh, modules, ms, tmp) {	/* asked for in the window now closing */
		__atomic_sub_fetch(&n_wanted, ms->wanted, __ATOMIC_RELAXED);
		ms->wanted = 0;
	}
	pthread_mutex_unlock(&nt_san.lock);
	settle(ctxs, nc);
	t0 = nt_now_s();
	for (int i = 0; i < n; i++) {
		nt_san_result r = nt_san.sanitizerUnpatchModule(mods[i]);

		pthread_mutex_lock(&nt_san.lock);
		HASH_FIND_PTR(modules, &mods[i], ms);
		if (ms && ms->patched && !r) {
			ms->patched = 0;
			n_patched--;
		}
		pthread_mutex_unlock(&nt_san.lock);
		if (r)
			nt_warn("cannot take the instrumentation out of a CUDA module (%s); its kernels "
				"stay slower", nt_san_error(r));
		nt_collector_switched(0, i + 1 < n ? 0 : nt_now_s() - t0);
	}
	pthread_mutex_unlock(&patching);
	free(mods);
	free(ctxs);
	if (n)
		nt_san_slow(nt_now_s() - t0);
	return 0;
}
