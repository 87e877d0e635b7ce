/* demangle.h - C++ (Itanium ABI, which Rust's legacy mangling also follows)
 * symbol demangling through libstdc++'s abi::__cxa_demangle, which the C++
 * runtime already ships: no demangler of our own. */
#ifndef CP_DEMANGLE_H
#define CP_DEMANGLE_H

/* Returns a malloc'd demangled name, or NULL when name is not mangled. */
char *cp_demangle(const char *name);

#endif
