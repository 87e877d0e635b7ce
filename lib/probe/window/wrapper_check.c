/* wrapper_check.c - see wrapper_check.h. */
#include "profile_window.h"
#include "session.h"
#include "wrapper_check.h"

void cp_wrapper_check_tick(struct cp_profile *p, struct cp_session *s, double since_s)
{
	if (!p->boundary_wrapped || p->wrapper_check_s >= 0 || since_s < CP_WRAPPER_CHECK_S)
		return;
	cp_session_wrapper_check(s, &p->wrapper_check);
	if (p->wrapper_check.fallback_ns || p->wrapper_check.checked < CP_WRAPPER_CHECK_MIN)
		return;
	cp_session_end_wrapper_check(s);
	p->wrapper_check_s = since_s;
}

void cp_wrapper_check_finish(struct cp_profile *p, struct cp_session *s, double start)
{
	struct cp_wrapper_check *c = &p->wrapper_check;
	double from;

	if (!p->boundary_wrapped)
		return;
	cp_session_wrapper_check(s, c);
	if (!c->fallback_ns)
		return;
	from = (double)c->fallback_ns / 1e9 - start;

	p->boundary_in_target = false;
	if (c->mismatched) /* else never placed: the mechanism said why */
		cp_profile_warn(
			p,
			"%s: %llu of the target's %s syscalls did not come through the C library's function (glibc's inline calls, syscall(2), a restarted call): requests are closed at sys_enter from %.3f s into the window",
			p->request_text, (unsigned long long)c->mismatched, p->request_symbol,
			from > 0 ? from : 0);
}
