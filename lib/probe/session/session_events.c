/* session_events.c - what the BPF programs tell user space while the
 * session is attached, through one ring buffer: the dynamic linker's
 * events (a library mapped: probe it), stack copies (--stacks) and
 * processes held at their exec. See session.h. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "clock_points.h"
#include "clockreads.skel.h"
#include "core_btf.h"
#include "error.h"
#include "grow.h"
#include "monotonic.h"
#include "own_code.h"
#include "procfs.h"
#include "exec_guard.h"
#include "session.h"
#include "session_internal.h"
#include "session_probes.h"
#include "unwind_table.h"
#include "uprobe_multi.h"
#include "uprobe_removal.h"

static int dl_event(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	((struct cp_session *)ctx)->dl_pending++;
	return 0;
}

static int stack_copy_event(void *ctx, void *data, size_t size)
{
	struct cp_session *s = ctx;
	const struct cp_stack_copy *c = data;

	/* A copy is as long as the bytes it holds (struct cp_stack_copy), and
	 * each piece no longer than its room: handed on only then. */
	if (s->on_copy && size >= offsetof(struct cp_stack_copy, bytes) &&
	    c->len[0] <= CP_STACK_COPY_BYTES && c->len[1] <= CP_STACK_COPY_FRAME_BYTES &&
	    size >= offsetof(struct cp_stack_copy, bytes) + (size_t)c->len[0] + c->len[1])
		s->on_copy(s->on_copy_arg, c);
	return 0;
}

/* A followed process held at its exec: kept for the mechanism to patch
 * its new image (cp_session_take_execs). */
static int exec_event(void *ctx, void *data, size_t size)
{
	struct cp_session *s = ctx;

	if (size < sizeof(uint32_t))
		return 0;
	if (cp_grow(&s->execs, &s->cap_execs, s->nexecs + 1, sizeof(*s->execs))) {
		cp_session_exec_unfollowed(s, *(uint32_t *)data);
		return 0;
	}
	s->execs[s->nexecs++] = *(uint32_t *)data;
	return 0;
}

/* The ring buffers user space reads while attached, behind one epoll fd;
 * the stack copies' joins when someone takes them. */
int cp_session_open_events(struct cp_session *s)
{
	s->events = ring_buffer__new(bpf_map__fd(s->skel->maps.dl_events), dl_event, s, NULL);
	if (s->events &&
	    ring_buffer__add(s->events, bpf_map__fd(s->skel->maps.exec_events), exec_event, s)) {
		ring_buffer__free(s->events);
		s->events = NULL;
	}
	return s->events ? 0 : -1;
}

int cp_session_events_fd(const struct cp_session *s)
{
	return ring_buffer__epoll_fd(s->events);
}

int cp_session_consume_events(struct cp_session *s)
{
	int n;

	ring_buffer__consume(s->events);
	n = s->dl_pending;
	s->dl_pending = 0;
	return n;
}

int cp_session_on_stack_copy(struct cp_session *s,
			     void (*fn)(void *arg, const struct cp_stack_copy *c), void *arg,
			     struct cp_error *err)
{
	s->on_copy = fn;
	s->on_copy_arg = arg;
	/* Mapping the buffer into this process costs ~0.1 ms per MiB. */
	if (ring_buffer__add(s->events, bpf_map__fd(s->skel->maps.stack_copies), stack_copy_event,
			     s))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the stack copies: %s",
			       strerror(errno));
	return 0;
}
