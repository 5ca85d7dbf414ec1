/* A program that initialises CUDA through $NUCATRACE_LIBCUDA (the fake
 * libcuda of tests/fault), prints a line and exits with the code in
 * argv[1]: the interposer starts in it, as in a real CUDA program. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *lib = getenv("NUCATRACE_LIBCUDA");
	void *h = lib ? dlopen(lib, RTLD_NOW) : NULL;
	int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;

	if (!init) {
		fprintf(stderr, "cuda_prog: cannot load cuInit from '%s'\n", lib ? lib : "(unset)");
		return 99;
	}
	printf("cuInit: %d\n", init(0));
	return argc > 1 ? atoi(argv[1]) : 0;
}
