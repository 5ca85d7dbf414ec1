#include "util/version.h"

#ifndef NT_VERSION
#define NT_VERSION "0.0.0"
#endif

const char nt_version[] = NT_VERSION;
