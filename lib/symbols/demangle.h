/* demangle.h - symbol names for people. C++ (Itanium ABI, which Rust's
 * legacy mangling also follows) through libstdc++'s abi::__cxa_demangle,
 * which the C++ runtime already ships; Rust's v0 mangling ("_R...") through
 * lib/symbols/rust_demangle.h, since no library we use knows it. */
#ifndef CP_DEMANGLE_H
#define CP_DEMANGLE_H

/* Returns a malloc'd demangled name, or NULL when name is not mangled (or
 * not readable). Rust legacy names lose their "::h<hash>" suffix and have
 * their $...$ escapes decoded; suffixes compilers add to Rust names
 * (".0", ThinLTO's ".llvm.N") are not part of them. */
char *cp_demangle(const char *name);

#endif
