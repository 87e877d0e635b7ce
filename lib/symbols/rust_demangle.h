/* rust_demangle.h - names in Rust's v0 mangling ("_R..."); see
 * rust_demangle.c for why and how they are printed. */
#ifndef CP_RUST_DEMANGLE_H
#define CP_RUST_DEMANGLE_H

/* Returns the malloc'd display name of a v0-mangled symbol, or NULL when
 * name is not one or uses what is not decoded here (then show it raw). */
char *cp_rust_demangle(const char *name);

#endif
