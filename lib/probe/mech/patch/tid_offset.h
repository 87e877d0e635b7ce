/* tid_offset.h - where a target's C library keeps a thread's tid, as an
 * offset from the thread pointer: the request boundary's close
 * (boundary_close.S) tells by it a new thread from the exited one whose
 * thread pointer, and so counter slot, it was given (glibc hands a new
 * thread an exited one's cached stack, its descriptor at the top). */
#ifndef CP_TID_OFFSET_H
#define CP_TID_OFFSET_H

#include <stdint.h>
#include <sys/types.h>

/* The offset in process pid, from glibc's debugger descriptor of its
 * thread's tid (_thread_db_pthread_tid, which libthread_db reads: {32
 * bits, 1, offset}) in the libc the process maps, else its executable
 * (static), else the libc beside its dynamic linker (a program held at
 * its first instruction maps no libc yet). 0: not known (musl, Go, a
 * stripped static executable): threads that reuse a thread pointer then
 * share one slot's requests. */
uint32_t cp_tid_offset(pid_t pid);

#endif
