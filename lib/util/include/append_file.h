/* append_file.h - text added to the end of a file that others also write
 * ($GITHUB_STEP_SUMMARY): the one output that is not replaced atomically
 * (atomic_file.h), because appending is its point. */
#ifndef CP_APPEND_FILE_H
#define CP_APPEND_FILE_H

struct cp_error;

/* Appends text to path (created if missing), as $GITHUB_STEP_SUMMARY wants;
 * not atomic by nature. Fails with CP_EXIT_USAGE. */
int cp_append_text_file(const char *path, const char *text, struct cp_error *err);

#endif
