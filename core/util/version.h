/* version.h - the version of nucatrace, from the Makefile (VERSION). */
#ifndef NT_VERSION_H
#define NT_VERSION_H

extern const char nt_version[];

#endif
