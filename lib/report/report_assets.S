/* report_assets.S - the HTML report's template, CSS and JS (reports/),
 * compiled into the binary so that `clockprof report` needs no installed
 * data files and the report it writes is one self-contained file. The
 * Makefile assembles this with -Ireports (the assembler's .incbin search
 * path) and rebuilds it when reports/* change. Each asset is followed by a
 * NUL that its length does not count. Declared in report_assets.h. */

#define ASSET(sym, file)				\
	.section .rodata.cp_report_assets, "a";		\
	.balign 16;					\
	.global sym;					\
	.type sym, @object;				\
sym:							\
	.incbin file;					\
sym##_end:						\
	.byte 0;					\
	.balign 8;					\
	.global sym##_len;				\
	.type sym##_len, @object;			\
sym##_len:						\
	.quad sym##_end - sym;

ASSET(cp_report_asset_html, "report.html")
ASSET(cp_report_asset_css, "report.css")
ASSET(cp_report_asset_js, "report.js")

	.section .note.GNU-stack, "", @progbits
