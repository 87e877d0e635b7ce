/* grow.h - room for more elements in a malloc'd array. Every list clockprof
 * builds (threads, breakpoints, call sites, stacks, unwind rules, symbol
 * names, maps lines) grows the same way: its capacity doubled when full;
 * a list of strings it owns is freed the same way too. */
#ifndef CP_GROW_H
#define CP_GROW_H

#include <stddef.h>

/* items_ptr is the address of the array pointer (e.g. &t->entries), whose
 * *cap elements of elem bytes are allocated. Makes room for at least need
 * elements, doubling from 16. Returns 0, or -1 when out of memory, leaving
 * the array and *cap as they were. */
int cp_grow(void *items_ptr, size_t *cap, size_t need, size_t elem);

/* Frees the n strings of v, then v (NULL with n 0 is fine). */
void cp_free_strings(char **v, size_t n);

#endif
