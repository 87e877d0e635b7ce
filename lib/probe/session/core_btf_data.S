/* core_btf_data.S - the kernel types the BPF programs' CO-RE relocations use,
 * cut from the build machine's kernel BTF by `bpftool gen min_core_btf`
 * (a few hundred bytes instead of the 5 MB libbpf would otherwise read and
 * parse at every start). lib/probe/session/core_btf.c hands it to libbpf only when the
 * running kernel is the one it was cut from. Assembled with -I$(O). */
	.section .rodata.cp_core_btf, "a"
	.balign 8
	.global cp_core_btf
	.type cp_core_btf, @object
cp_core_btf:
	.incbin "clockreads.min.btf"
cp_core_btf_end:
	.balign 8
	.global cp_core_btf_len
	.type cp_core_btf_len, @object
cp_core_btf_len:
	.quad cp_core_btf_end - cp_core_btf

	.section .note.GNU-stack, "", @progbits
