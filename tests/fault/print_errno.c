/* Prints errno at the top of main: C promises 0; a preloaded library
 * must not change that (tests/cli/t/0215). */
#include <errno.h>
#include <stdio.h>

int main(void)
{
	printf("errno at main: %d\n", errno);
	return 0;
}
