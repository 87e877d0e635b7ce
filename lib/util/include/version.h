/* version.h - the tool version written into run.json and verdict.json. */
#ifndef CP_VERSION_H
#define CP_VERSION_H
#define CLOCKPROF_VERSION "0.1.0"
#endif
