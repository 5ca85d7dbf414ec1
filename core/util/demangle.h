/*
 * demangle.h - C++ kernel names for people.
 *
 * nt_demangle() returns a new string with the demangled form of an
 * Itanium-mangled name ("_Z..."), or NULL when it is not one or no
 * demangler is at hand.  It uses libstdc++'s __cxa_demangle, found in the
 * process (CUDA programs carry it) or loaded on demand; nucatrace itself
 * does not link C++.  Thread-safe.
 */
#ifndef NT_DEMANGLE_H
#define NT_DEMANGLE_H

char *nt_demangle(const char *mangled);

#endif
