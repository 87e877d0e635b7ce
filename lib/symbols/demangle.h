/* demangle.h - symbol names for people: C++ (Itanium ABI) and Rust in both
 * of its schemes (legacy, which follows the Itanium ABI, and v0, "_R..."),
 * through libiberty's cplus_demangle, the demangler binutils' c++filt uses. */
#ifndef CP_DEMANGLE_H
#define CP_DEMANGLE_H

/* Returns a malloc'd demangled name, or NULL when name is not mangled (or
 * not readable). Rust legacy names lose their "::h<hash>" suffix and have
 * their $...$ escapes decoded; suffixes compilers add to Rust names
 * (".0", ThinLTO's ".llvm.N") are not part of them; C++ names show theirs
 * as "[clone .cold]". */
char *cp_demangle(const char *name);

#endif
