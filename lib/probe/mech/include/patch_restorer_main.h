/* patch_restorer_main.h - the helper of the vDSO patch, the self-test's
 * child and then its restorer (lib/probe/mech/patch/patch_restorer.h),
 * is clockprof's own program run again with a hidden first argument: a
 * fresh process, not a fork of a clockprof with threads, so that it may
 * use the library. Only a program that runs cp_vdso_patch_subject_main
 * for that argument may enable it. */
#ifndef CP_PATCH_RESTORER_MAIN_H
#define CP_PATCH_RESTORER_MAIN_H

#define CP_PATCH_SUBJECT_ARG "--patch-selftest-subject"

/* This program runs cp_vdso_patch_subject_main when its first argument
 * is CP_PATCH_SUBJECT_ARG: every patch gets a restorer from now on. */
void cp_patch_restorer_enable(void);

/* The helper's life (argv: the program, CP_PATCH_SUBJECT_ARG, clockprof's
 * pid, room for the restorer's words; its pipes as descriptors 3 and 4):
 * the self-test's child, then the restorer if clockprof hands it over
 * (cp_patch_helper_serve), else it ends. */
int cp_vdso_patch_subject_main(int argc, char **argv);

#endif
