/* Embeds a device-code image built by nvcc into the host object.
 * BLOB_SYMBOL and BLOB_FILE come from the Makefile; the image is
 * BLOB_SYMBOL .. BLOB_SYMBOL_end. */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
	.section .rodata
	.balign 64
	.globl BLOB_SYMBOL
	.hidden BLOB_SYMBOL
BLOB_SYMBOL:
	.incbin BLOB_FILE
	.globl CAT(BLOB_SYMBOL, _end)
	.hidden CAT(BLOB_SYMBOL, _end)
CAT(BLOB_SYMBOL, _end):
	.section .note.GNU-stack,"",@progbits
