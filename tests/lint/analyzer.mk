# gcc -fanalyzer (make lint): its flags, and what it reports that is not
# a defect, by file (ANALYZER_NO_path: flags added to that file's run),
# each with its reason. A finding anywhere else fails make lint.
#
# At gcc 12's default budget (analyzer-bb-explosion-factor=5) the
# analyzer gave up on 68 of our 167 files part-way ("analysis bailed out
# early", -Wanalyzer-too-complex), silently: zero findings meant little.
# At 300 it finishes every file; the whole tree takes 40-120 s at -j2 on
# two cores as loaded (twice the default's), lib/util/json_file.c ~13 s. (It still stops following some paths
# through loops, per program point: that limit is left as it is.)
ANALYZER_FLAGS := -fanalyzer --param analyzer-bb-explosion-factor=300

# gcc 12's analyzer loses a malloc'd pointer once it is stored into an
# element at a computed index of an array it did not see allocated (one
# grown by cp_grow in another file, or a caller's: runs[i], v[n++],
# mods[n_mods++]) or into a struct reached through one, and reports the
# pointer leaked where it is stored or read back. These files keep such
# pointers and free them with their owner (each file's *_free).
ANALYZER_LEAK_LOST := -Wno-analyzer-malloc-leak
ANALYZER_NO_lib/gate/compare_run.c := $(ANALYZER_LEAK_LOST)
ANALYZER_NO_lib/probe/naming/anatomy_names.c := $(ANALYZER_LEAK_LOST)
ANALYZER_NO_lib/probe/window/anatomy_collect.c := $(ANALYZER_LEAK_LOST)
ANALYZER_NO_lib/probe/mech/patch/patch_members.c := $(ANALYZER_LEAK_LOST)
ANALYZER_NO_lib/probe/window/window_processes.c := $(ANALYZER_LEAK_LOST)
ANALYZER_NO_lib/runfile/pprof_file.c := $(ANALYZER_LEAK_LOST)
ANALYZER_NO_lib/symbols/elf_symbols.c := $(ANALYZER_LEAK_LOST)
ANALYZER_NO_lib/symbols/symbol_modules.c := $(ANALYZER_LEAK_LOST)
ANALYZER_NO_lib/symbols/symbolize.c := $(ANALYZER_LEAK_LOST)
