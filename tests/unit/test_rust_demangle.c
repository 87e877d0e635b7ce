/* test_rust_demangle.c - names as people read them (lib/symbols/demangle.c, through
 * libiberty). The expected Rust v0 names were checked against binutils
 * 2.40's c++filt with the crate hashes it prints ([c1f1a4ba...]) removed,
 * which is what libiberty prints without DMGL_VERBOSE; an integer constant
 * argument is printed bare (escape_unicode::<10>) as Rust's short form
 * does. The symbols come from rustc 1.95 binaries. */
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "unit.h"

static const struct {
	const char *mangled, *name;
} cases[] = {
	/* An inherent method: the clock wrapper clockprof must recognise. */
	{ "_RNvMNtCsjrHSEGnQ3l9_3std4timeNtB2_7Instant3now", "<std::time::Instant>::now" },
	{ "_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys3pal4unix4timeNtB2_8Timespec3now",
	  "<std::sys::pal::unix::time::Timespec>::now" },
	/* Closures, trait impls with basic and reference types. */
	{ "_RNCNvNtCsjrHSEGnQ3l9_3std9panicking12default_hook0B5_",
	  "std::panicking::default_hook::{closure#0}" },
	{ "_RNvXsh_NtCsgEmfK2I1SDS_4core3fmteNtB5_5Debug3fmt", "<str as core::fmt::Debug>::fmt" },
	{ "_RNvXss_NtCsgEmfK2I1SDS_4core3fmtuNtB5_5Debug3fmt", "<() as core::fmt::Debug>::fmt" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRDNtB6_5DebugEL_Bx_3fmtB8_",
	  "<&dyn core::fmt::Debug as core::fmt::Debug>::fmt" },
	{ "_RNvXs1h_NtCsgEmfK2I1SDS_4core3fmtQShNtB6_5Debug3fmtCsgY6Mt91CT9J_14rustc_demangle",
	  "<&mut [u8] as core::fmt::Debug>::fmt" },
	{ "_RNvXsq_NtCsgEmfK2I1SDS_4core3fmtONtNtB7_3ffi6c_voidNtB5_5Debug3fmtCsjrHSEGnQ3l9_3std",
	  "<*mut core::ffi::c_void as core::fmt::Debug>::fmt" },
	/* Generic arguments: a constant, tuples, fn pointers with an ABI. */
	{ "_RINvNtCsgEmfK2I1SDS_4core6escape14escape_unicodeKja_ECsgY6Mt91CT9J_14rustc_demangle",
	  "core::escape::escape_unicode::<10>" },
	{ "_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecTOhFUKCBN_EuENtNtCsjrHSEGnQ3l9_3std5alloc6SystemE8grow_oneB13_",
	  "<alloc::raw_vec::RawVec<(*mut u8, unsafe extern \"C\" fn(*mut u8)), std::alloc::System>>::grow_one" },
	{ "_RNvYNvNtNtNtCsjrHSEGnQ3l9_3std3sys2fs4unix4statINtNtNtCsgEmfK2I1SDS_4core3ops8function2FnTRNtNtNtBQ_3ffi5c_str4CStrEE4callBa_",
	  "<std::sys::fs::unix::stat as core::ops::function::Fn<(&core::ffi::c_str::CStr,)>>::call" },
	/* dyn with a binder and an associated type; backrefs throughout. */
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDG0_INtNtNtB4_3ops8function2FnTRL1_INtNtCsjrHSEGnQ3l9_3std5panic13PanicHookInfoL0_EEEp6OutputuNtNtB4_6marker4SyncNtB2N_4SendEL_EEB1T_",
	  "core::ptr::drop_in_place::<alloc::boxed::Box<dyn for<'a, 'b> core::ops::function::Fn<(&'a std::panic::PanicHookInfo<'b>,), Output = ()> + core::marker::Sync + core::marker::Send>>" },
	/* A shim inside a closure inside generic impls, 300 characters deep. */
	{ "_RNSNvYNCINvMs0_NtNtCsjrHSEGnQ3l9_3std4sync4onceNtBd_4Once15call_once_forceNCINvMNtBf_9once_lockINtB1g_8OnceLockINtNtBf_14reentrant_lock13ReentrantLockINtNtCsgEmfK2I1SDS_4core4cell7RefCellINtNtNtNtBh_2io8buffered10linewriter10LineWriterNtNtB36_5stdio9StdoutRawEEEE10initializeNCINvB1f_11get_or_initNCNvB3N_6stdout0E0zE0E0INtNtNtB2t_3ops8function6FnOnceTRNtBd_9OnceStateEE9call_once6vtableBh_",
	  "<<std::sync::once::Once>::call_once_force<<std::sync::once_lock::OnceLock<std::sync::reentrant_lock::ReentrantLock<core::cell::RefCell<std::io::buffered::linewriter::LineWriter<std::io::stdio::StdoutRaw>>>>>::initialize<<std::sync::once_lock::OnceLock<std::sync::reentrant_lock::ReentrantLock<core::cell::RefCell<std::io::buffered::linewriter::LineWriter<std::io::stdio::StdoutRaw>>>>>::get_or_init<std::io::stdio::stdout::{closure#0}>::{closure#0}, !>::{closure#0}>::{closure#0} as core::ops::function::FnOnce<(&std::sync::once::OnceState,)>>::call_once::{shim:vtable#0}" },
};

TEST(rust_v0_names_as_rust_prints_them)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *name = cp_demangle(cases[i].mangled);

		CHECK_STR(name, cases[i].name);
		free(name);
	}
}

TEST(rust_v0_refuses_what_it_cannot_read)
{
	static const char *const bad[] = {
		"_R",				     /* nothing */
		"_RNvMNtCsjrHSEGnQ3l9_3std4ti",	     /* cut short */
		"_RNvC5crateu7dkcsl6",		     /* punycode identifier */
		"_RNvB_3foo",			     /* backref to itself */
		"_RNvB9_3foo",			     /* backref forwards */
		"_RINvC3foo",			     /* generics never closed */
		"_RNvC99999999999999999999999_3foo", /* absurd length */
		"main",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *name = cp_demangle(bad[i]);

		if (name)
			unit_fail(__FILE__, __LINE__, "%s demangled to %s", bad[i], name);
		free(name);
	}
}

TEST(rust_v0_deep_nesting_gives_up_cleanly)
{
	size_t n = 20000;
	char *sym = malloc(2 + n + 16);

	CHECK(sym != NULL);
	memcpy(sym, "_R", 2);
	memset(sym + 2, 'I', n); /* I I I ... : generics nested 20,000 deep */
	strcpy(sym + 2 + n, "C3fooE");
	CHECK(cp_demangle(sym) == NULL);
	free(sym);
}

/* cp_demangle: both Rust schemes and C++ through one door. Rust legacy
 * names lose their hash and have their $...$ escapes decoded (all 111
 * legacy symbols of the test programs matched c++filt, hash removed). */
TEST(demangle_rust_both_schemes_and_cxx)
{
	static const struct {
		const char *mangled, *name;
	} names[] = {
		{ "_ZN11rust_target12read_instant17he4f9aa8d79abc9f3E",
		  "rust_target::read_instant" },
		{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h828d498786515343E",
		  "std::rt::lang_start::{{closure}}" },
		{ "_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u20$core..iter..traits..iterator..Iterator$GT$4fold17ha70de52087644b1cE",
		  "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold" },
		{ "_RNvMNtCsjrHSEGnQ3l9_3std4timeNtB2_7Instant3now", "<std::time::Instant>::now" },
		/* ThinLTO's suffix (Debian's rustc 1.63 std) is not the name. */
		{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17hf11c8bdc4a885f95E.llvm.2081392844218599270",
		  "std::rt::lang_start::{{closure}}" },
		/* Only names ending in a Rust hash are decoded as Rust. */
		{ "_ZNSt6chrono3_V212steady_clock3nowEv", "std::chrono::_V2::steady_clock::now()" },
		{ "_ZN3foo6a$LT$b17h0123456789abcdefE", "foo::a<b" },
		{ "_ZN3foo6a$LT$b3barE", "foo::a$LT$b::bar" },
		/* C++ that merely looks similar is left as libstdc++ prints it. */
		{ "_ZL6helperv.llvm.123", "helper() [clone .llvm.123]" },
		{ "_ZNSt6chrono3_V212steady_clock3nowEv.cold",
		  "std::chrono::_V2::steady_clock::now() [clone .cold]" },
		{ "_ZN3foo17h0123456789ABCDEFE", "foo::h0123456789ABCDEF" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *d = cp_demangle(names[i].mangled);

		CHECK_STR(d, names[i].name);
		free(d);
	}
	CHECK(cp_demangle("clock_gettime") == NULL);
	/* Not Itanium or v0: kept as the symbol people see in other tools. */
	CHECK(cp_demangle("_GLOBAL__sub_I_main") == NULL);
}
