#include "trace/cubin.h"

#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Attribute codes of .nv.info records (names as cuobjdump prints them). */
enum {
	EIFMT_NVAL = 1, EIFMT_BVAL = 2, EIFMT_HVAL = 3, EIFMT_SVAL = 4,
	EIATTR_MAX_THREADS = 0x05,
	EIATTR_REQNTID = 0x10,
	EIATTR_FRAME_SIZE = 0x11,
	EIATTR_MIN_STACK_SIZE = 0x12,
	EIATTR_REGCOUNT = 0x2f,
	EIATTR_CTA_PER_CLUSTER = 0x3d,
	EIATTR_NUM_BARRIERS = 0x4c,
};

#define STO_CUDA_ENTRY 0x10	/* st_other bit of __global__ functions */
#define FATBIN_MAGIC 0xba55ed50u
#define RESERVED_SMEM_WINDOW 1024	/* ptxas's default for .nv.reservedSmem.cap */

struct nt_cubin {
	int arch;
	int device_launches;
	size_t variables;	/* module-scope variables */
	char *first_variable;
	size_t n;
	struct nt_cubin_kernel *k;
};

/* What one parse needs besides the result. */
struct parse {
	Elf *elf;
	size_t size, shnum, nsym;
	struct nt_cubin *c;
	long *sym_kernel;	/* symbol index -> kernel, or -1 */
	long *scn_kernel;	/* .text section index -> kernel, or -1 */
	int64_t *min_stack;
	int64_t smem_window;	/* bytes of .nv.shared.<k> that are not the user's */
	size_t shstrndx;
	struct nt_err *err;
};

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static int elf_ok;

static void elf_init(void)
{
	elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

static uint32_t rd32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static int elf_fail(struct parse *p, const char *what)
{
	return nt_err_set(p->err, "cubin: %s: %s", what, elf_errmsg(-1));
}

static long kernel_by_name(struct parse *p, const char *name)
{
	for (size_t i = 0; i < p->c->n; i++)
		if (!strcmp(p->c->k[i].name, name))
			return (long)i;
	return -1;
}

/* The kernel a .nv.info.<k>, .nv.shared.<k> or .nv.constant0.<k>
 * section belongs to: sh_info names its .text section; the name is the
 * fallback. */
static long kernel_of(struct parse *p, const GElf_Shdr *sh, const char *suffix)
{
	if (sh->sh_info > 0 && sh->sh_info < p->shnum && p->scn_kernel[sh->sh_info] >= 0)
		return p->scn_kernel[sh->sh_info];
	return kernel_by_name(p, suffix);
}

static int add_kernel(struct parse *p, size_t sym, const char *name, size_t shndx)
{
	struct nt_cubin_kernel *k = &p->c->k[p->c->n];
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (shndx == 0 || shndx >= p->shnum)
		return nt_err_set(p->err, "cubin: kernel '%s' in section %zu of %zu", name, shndx, p->shnum);
	if (!(scn = elf_getscn(p->elf, shndx)) || !gelf_getshdr(scn, &sh))
		return elf_fail(p, "kernel section header");
	memset(k, 0, sizeof(*k));
	if (!(k->name = strdup(name)))
		return nt_err_set(p->err, "out of memory");
	k->registers = sh.sh_info >> 24 ? (int)(sh.sh_info >> 24) : -1;
	p->sym_kernel[sym] = (long)p->c->n;
	p->scn_kernel[shndx] = (long)p->c->n;
	p->c->n++;
	return 0;
}

/* 1 for the device runtime's entry points that launch work from the
 * device: dynamic parallelism (<<<>>> in a kernel: CUDA 12's CDP2 names
 * and the older ones) and device graph launch.  Not its other calls
 * (__cudaCDP2GetLastError and the like: a kernel that only asks for an
 * error launches nothing). */
static int device_launch(const char *name)
{
	static const char *const prefixes[] = {
		"__cudaCDP2LaunchDevice", "__cudaCDP1LaunchDevice", "cudaLaunchDevice", "cudaGraphLaunch",
		"__cudaCDP2GraphLaunch",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* 1 for a section of module-scope variables: __device__ and __managed__
 * (.nv.global, .nv.global.init) and __constant__ (.nv.constant3 on
 * sm_90; any bank but 0, which holds each kernel's parameters).  Not
 * .nv.shared.*: a block's own. */
static int variable_section(const char *name)
{
	return !strncmp(name, ".nv.global", 10) ||
	       (!strncmp(name, ".nv.constant", 12) && name[12] >= '1' && name[12] <= '9');
}

/* Objects that hold none of the program's state: the compiler's string
 * literals (assert's and printf's: __unnamed_<n>, $str...), libcu++'s
 * objects, all empty constants (namespace cuda::std: its customization
 * points begin, end..., ignore, in_place; one byte each), Thrust's,
 * CUB's and CuTe's empty objects (thrust::seq, thrust::device,
 * placeholders, cute::product: size 1 at most), the CUDA math library's
 * tables (__cudart_i2opi_f, sinf's argument reduction: names reserved to
 * the toolkit), and a function's static in a constant bank (_ZZ...: no
 * kernel writes constant memory, and host code cannot name a function's
 * static).  Each of 9 PyTorch sm_90 cubins sampled on the H200 had the
 * first two kinds; in its captured training step 28 modules had the
 * others (FillKernel's thrust::seq, CUTLASS's cp_async_nan<16>
 * OOB_NAN_F16x8), and with those taken as stateless, 5 (flash
 * attention's cute::product, __cudart_i2opi_f):
 * docs/results/2026-12-04-graph-windows.md. */
static int stateless_object(const char *name, uint64_t size, const char *section)
{
	return !strncmp(name, "__unnamed_", 10) || name[0] == '$' || strstr(name, "4cuda3std") ||
	       !strncmp(name, "__cudart_", 9) ||
	       (size <= 1 && (strstr(name, "6thrust") || strstr(name, "3cub") || strstr(name, "4cute"))) ||
	       (!strncmp(name, "_ZZ", 3) && !strncmp(section, ".nv.constant", 12));
}

/* A defined object symbol s: a module-scope variable when its section
 * is one of variable_section's and it is not a stateless_object. */
static int note_variable(struct parse *p, const GElf_Sym *s, const char *name)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	const char *sname;

	if (GELF_ST_TYPE(s->st_info) != STT_OBJECT || s->st_shndx == SHN_UNDEF || s->st_shndx >= p->shnum ||
	    !(scn = elf_getscn(p->elf, s->st_shndx)) || !gelf_getshdr(scn, &sh) ||
	    !(sname = elf_strptr(p->elf, p->shstrndx, sh.sh_name)) || !variable_section(sname) ||
	    stateless_object(name, s->st_size, sname))
		return 0;
	if (!p->c->variables++ && !(p->c->first_variable = strdup(name)))
		return nt_err_set(p->err, "out of memory");
	return 0;
}

static int read_symbols(struct parse *p, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Sym s;

	if (!d)
		return elf_fail(p, "symbol table");
	if (!sh->sh_entsize || !(p->nsym = sh->sh_size / sh->sh_entsize))
		return 0;
	if (!(p->sym_kernel = malloc(p->nsym * sizeof(*p->sym_kernel))) ||
	    !(p->c->k = calloc(p->nsym, sizeof(*p->c->k))) ||
	    !(p->min_stack = calloc(p->nsym, sizeof(*p->min_stack))))
		return nt_err_set(p->err, "out of memory");
	for (size_t i = 0; i < p->nsym; i++) {
		const char *name;

		p->sym_kernel[i] = -1;
		if (!gelf_getsym(d, (int)i, &s))
			return elf_fail(p, "symbol");
		if (!(name = elf_strptr(p->elf, sh->sh_link, s.st_name)))
			return elf_fail(p, "symbol name");
		if (!strcmp(name, ".nv.reservedSmem.cap") && s.st_value)
			p->smem_window = (int64_t)s.st_value;
		p->c->device_launches |= device_launch(name);
		if (note_variable(p, &s, name))
			return -1;
		if (GELF_ST_TYPE(s.st_info) == STT_FUNC && (s.st_other & STO_CUDA_ENTRY) && *name &&
		    add_kernel(p, i, name, s.st_shndx))
			return -1;
	}
	return 0;
}

/* One .nv.info record's payload, by attribute; `k` is the kernel of a
 * per-kernel section, or -1 for the global one. */
static void apply_attr(struct parse *p, long k, int attr, int fmt, unsigned v,
		       const unsigned char *pl)
{
	struct nt_cubin_kernel *kn;

	if (k < 0) {
		uint32_t sym, val;

		if (fmt != EIFMT_SVAL || v < 8)
			return;
		sym = rd32(pl);
		val = rd32(pl + 4);
		if (sym >= p->nsym || (k = p->sym_kernel[sym]) < 0)
			return;
		kn = &p->c->k[k];
		if (attr == EIATTR_REGCOUNT)
			kn->registers = (int)val;
		else if (attr == EIATTR_FRAME_SIZE)
			kn->local_bytes = val;
		else if (attr == EIATTR_MIN_STACK_SIZE)
			p->min_stack[k] = val;
		return;
	}
	kn = &p->c->k[k];
	if (attr == EIATTR_NUM_BARRIERS && fmt != EIFMT_SVAL)
		kn->barriers = (int)v;
	if (fmt != EIFMT_SVAL || v < 12)
		return;
	if (attr == EIATTR_MAX_THREADS || attr == EIATTR_REQNTID) {
		uint64_t n = (uint64_t)rd32(pl) * rd32(pl + 4) * rd32(pl + 8);

		kn->max_threads = n > 0x7fffffff ? 0x7fffffff : (int)n;
	} else if (attr == EIATTR_CTA_PER_CLUSTER) {
		for (int i = 0; i < 3; i++)
			kn->cluster[i] = (int)(rd32(pl + 4 * i) & 0x7fffffff);
	}
}

static int read_nvinfo(struct parse *p, Elf_Scn *scn, const char *name, long k)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const unsigned char *b;
	size_t off = 0, len;

	if (!d)
		return elf_fail(p, name);
	b = d->d_buf;
	len = b ? d->d_size : 0;
	while (off + 4 <= len) {
		int fmt = b[off], attr = b[off + 1];
		unsigned v = b[off + 2] | b[off + 3] << 8;

		off += 4;
		if (fmt < EIFMT_NVAL || fmt > EIFMT_SVAL)
			return nt_err_set(p->err, "cubin: %s: unknown record format %d at offset %zu",
					  name, fmt, off - 4);
		if (fmt == EIFMT_SVAL && v > len - off)
			return nt_err_set(p->err, "cubin: %s: record of %u bytes at offset %zu runs past the end (%zu)",
					  name, v, off - 4, len);
		apply_attr(p, k, attr, fmt, v, b + off);
		if (fmt == EIFMT_SVAL)
			off += v;
	}
	return 0;
}

static int cmp_kernel(const void *a, const void *b)
{
	return strcmp(((const struct nt_cubin_kernel *)a)->name, ((const struct nt_cubin_kernel *)b)->name);
}

/* The checks libelf leaves to us, so that every message says what is wrong. */
static int check_header(const unsigned char *b, size_t size, struct nt_err *err)
{
	if (size >= 4 && rd32(b) == FATBIN_MAGIC)
		return nt_err_set(err, "cubin: image is a fatbin, not a cubin");
	if (size < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG))
		return nt_err_set(err, "cubin: not an ELF image (%zu bytes)", size);
	if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
		return nt_err_set(err, "cubin: ELF class %d, data %d: want 64-bit little-endian",
				  b[EI_CLASS], b[EI_DATA]);
	if (size < sizeof(Elf64_Ehdr))
		return nt_err_set(err, "cubin: truncated ELF header (%zu bytes)", size);
	return 0;
}

/* Every section's bytes must lie inside the image. */
static int check_sections(struct parse *p)
{
	for (size_t i = 1; i < p->shnum; i++) {
		Elf_Scn *scn = elf_getscn(p->elf, i);
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh))
			return elf_fail(p, "section header");
		if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > p->size || sh.sh_size > p->size - sh.sh_offset))
			return nt_err_set(p->err, "cubin: section %zu (%llu bytes at %llu) lies outside the %zu-byte image",
					  i, (unsigned long long)sh.sh_size, (unsigned long long)sh.sh_offset, p->size);
	}
	return 0;
}

static int read_sections(struct parse *p, size_t shstrndx)
{
	for (size_t i = 1; i < p->shnum; i++) {
		Elf_Scn *scn = elf_getscn(p->elf, i);
		const char *name;
		GElf_Shdr sh;
		long k;

		if (!scn || !gelf_getshdr(scn, &sh))
			return elf_fail(p, "section header");
		if (!(name = elf_strptr(p->elf, shstrndx, sh.sh_name)))
			return elf_fail(p, "section name");
		if (!strcmp(name, ".nv.info")) {
			if (read_nvinfo(p, scn, name, -1))
				return -1;
		} else if (!strncmp(name, ".nv.info.", 9)) {
			if ((k = kernel_of(p, &sh, name + 9)) >= 0 && read_nvinfo(p, scn, name, k))
				return -1;
		} else if (!strncmp(name, ".nv.shared.", 11) && strncmp(name, ".nv.shared.reserved.", 20)) {
			if ((k = kernel_of(p, &sh, name + 11)) >= 0) {
				int64_t s = (int64_t)sh.sh_size - p->smem_window;

				p->c->k[k].static_smem = s > 0 ? s : 0;
			}
		} else if (!strncmp(name, ".nv.constant0.", 14)) {
			if ((k = kernel_of(p, &sh, name + 14)) >= 0)
				p->c->k[k].const0_bytes = (int64_t)sh.sh_size;
		}
	}
	return 0;
}

/* First pass over the sections: the symbol table, and whether this
 * cubin lays out a reserved shared window (sm_90 and newer). */
static int find_symtab(struct parse *p, size_t shstrndx)
{
	Elf_Scn *symtab = NULL;
	GElf_Shdr sh, symsh = { 0 };

	for (size_t i = 1; i < p->shnum; i++) {
		Elf_Scn *scn = elf_getscn(p->elf, i);
		const char *name;

		if (!scn || !gelf_getshdr(scn, &sh))
			return elf_fail(p, "section header");
		if (!(name = elf_strptr(p->elf, shstrndx, sh.sh_name)))
			return elf_fail(p, "section name");
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symsh = sh;
		}
		if (!strncmp(name, ".nv.shared.reserved.", 20))
			p->smem_window = RESERVED_SMEM_WINDOW;
	}
	if (!symtab)
		return nt_err_set(p->err, "cubin: no symbol table");
	return read_symbols(p, symtab, &symsh);
}

int nt_cubin_parse(const void *image, size_t size, struct nt_cubin **out, struct nt_err *err)
{
	struct parse p = { .size = size, .err = err };
	size_t shstrndx;
	GElf_Ehdr eh;
	int ret = -1;

	*out = NULL;
	if (!image)
		return nt_err_set(err, "cubin: no image");
	if (check_header(image, size, err))
		return -1;
	pthread_once(&elf_once, elf_init);
	if (!elf_ok)
		return nt_err_set(err, "cubin: libelf: %s", elf_errmsg(-1));
	if (!(p.c = calloc(1, sizeof(*p.c))))
		return nt_err_set(err, "out of memory");
	/* ELF_C_READ_MMAP on memory only reads: the cast drops nothing. */
	if (!(p.elf = elf_memory((char *)image, size)) || elf_kind(p.elf) != ELF_K_ELF) {
		elf_fail(&p, "not an ELF image");
		goto out;
	}
	if (!gelf_getehdr(p.elf, &eh)) {
		elf_fail(&p, "ELF header");
		goto out;
	}
	if (eh.e_machine != EM_CUDA) {
		nt_err_set(err, "cubin: ELF machine %u is not EM_CUDA (%d)", eh.e_machine, EM_CUDA);
		goto out;
	}
	p.c->arch = (int)(eh.e_ident[EI_ABIVERSION] >= 8 ? eh.e_flags >> 8 & 0xff : eh.e_flags & 0xff);
	if (!p.c->arch) {
		nt_err_set(err, "cubin: no SM architecture in e_flags 0x%x", (unsigned)eh.e_flags);
		goto out;
	}
	if (elf_getshdrnum(p.elf, &p.shnum) || elf_getshdrstrndx(p.elf, &shstrndx)) {
		elf_fail(&p, "section table");
		goto out;
	}
	p.shstrndx = shstrndx;
	if (shstrndx == 0 || shstrndx >= p.shnum) {
		nt_err_set(err, "cubin: section name table %zu of %zu", shstrndx, p.shnum);
		goto out;
	}
	if (p.shnum > size / sizeof(Elf64_Shdr)) {
		nt_err_set(err, "cubin: %zu section headers cannot fit in %zu bytes", p.shnum, size);
		goto out;
	}
	if (check_sections(&p))
		goto out;
	if (!(p.scn_kernel = malloc(p.shnum * sizeof(*p.scn_kernel)))) {
		nt_err_set(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < p.shnum; i++)
		p.scn_kernel[i] = -1;
	if (find_symtab(&p, shstrndx) || read_sections(&p, shstrndx))
		goto out;
	for (size_t i = 0; i < p.c->n; i++)
		if (!p.c->k[i].local_bytes)
			p.c->k[i].local_bytes = p.min_stack[i];
	if (p.c->n)
		qsort(p.c->k, p.c->n, sizeof(*p.c->k), cmp_kernel);
	*out = p.c;
	p.c = NULL;
	ret = 0;
out:
	if (p.elf)
		elf_end(p.elf);
	free(p.sym_kernel);
	free(p.scn_kernel);
	free(p.min_stack);
	nt_cubin_free(p.c);
	return ret;
}

size_t nt_cubin_count(const struct nt_cubin *c)
{
	return c ? c->n : 0;
}

const struct nt_cubin_kernel *nt_cubin_kernel(const struct nt_cubin *c, size_t i)
{
	return c && i < c->n ? &c->k[i] : NULL;
}

const struct nt_cubin_kernel *nt_cubin_find(const struct nt_cubin *c, const char *mangled)
{
	struct nt_cubin_kernel key = { .name = (char *)mangled };

	if (!c || !c->n || !mangled)
		return NULL;
	return bsearch(&key, c->k, c->n, sizeof(*c->k), cmp_kernel);
}

int nt_cubin_device_launches(const struct nt_cubin *c)
{
	return c ? c->device_launches : 0;
}

size_t nt_cubin_variables(const struct nt_cubin *c, const char **first)
{
	if (first)
		*first = c ? c->first_variable : NULL;
	return c ? c->variables : 0;
}

int nt_cubin_arch(const struct nt_cubin *c)
{
	return c ? c->arch : 0;
}

void nt_cubin_free(struct nt_cubin *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->k[i].name);
	free(c->k);
	free(c->first_variable);
	free(c);
}
