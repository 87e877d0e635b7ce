/* patch_restorer_main.h - the restorer of the vDSO patch
 * (lib/probe/mech/patch/patch_restorer.h) is clockprof's own program run
 * again with a hidden first argument: a fresh process, not a fork of a
 * clockprof with threads, so that it may use the library. Only a program
 * that runs cp_patch_restorer_main for that argument, and
 * cp_vdso_patch_subject_main for the self-test's, may enable it. */
#ifndef CP_PATCH_RESTORER_MAIN_H
#define CP_PATCH_RESTORER_MAIN_H

#define CP_PATCH_RESTORER_ARG "--patch-restorer"
/* The self-test's child (vdso_selftest.c) is this program run again too. */
#define CP_PATCH_SUBJECT_ARG "--patch-selftest-subject"

/* This program runs cp_patch_restorer_main when its first argument is
 * CP_PATCH_RESTORER_ARG: every patch gets a restorer from now on. */
void cp_patch_restorer_enable(void);

/* The restorer's life (argv as cp_patch_restorer_start gives it); its
 * exit code. */
int cp_patch_restorer_main(int argc, char **argv);

/* The self-test child's life (argv: the program, CP_PATCH_SUBJECT_ARG,
 * clockprof's pid; its pipes as descriptors 3 and 4); it ends killed. */
int cp_vdso_patch_subject_main(int argc, char **argv);

#endif
