/* window_processes.c - the per-process rows of a window that followed the
 * processes the target forked (run's default): who each was, when it
 * lived, and what it read and served. The session knows the processes
 * (the BPF program follows each fork, exec and exit, and counts requests
 * per process); the mechanism knows what each read (the patch: each in
 * its own copy of the table). The target's row is what is left of the
 * totals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "mechanism.h"
#include "procfs.h"
#include "profile_window.h"
#include "session.h"

/* What the mechanism counted of the process with host tgid h. */
static const struct cp_mech_proc *mech_proc(const struct cp_mech *m, uint32_t h)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].host_tgid == h)
			return &m->procs[i];
	return NULL;
}

static int by_start(const void *a, const void *b)
{
	const struct cp_process_row *x = a, *y = b;

	return (x->start_s > y->start_s) - (x->start_s < y->start_s);
}

/* A followed process's row; its command as the program last saw it (at
 * its fork, exec or exit), or as /proc says while it runs. */
static void child_row(struct cp_process_row *r, const struct cp_followed *f,
		      const struct cp_mech_proc *mp, double start)
{
	char comm[sizeof(r->command)];

	*r = (struct cp_process_row){ .pid = (pid_t)f->p.pid,
				      .ppid = (pid_t)f->p.ppid,
				      .start_s = (double)f->p.start_ns / 1e9 - start,
				      .end_s = f->p.flags & (CP_PROC_EXITED | CP_PROC_EXECED) ?
						       (double)f->p.end_ns / 1e9 - start :
						       -1,
				      .execed = f->p.flags & CP_PROC_EXECED,
				      .known = mp && mp->known,
				      .reads = mp ? mp->reads : 0,
				      .requests = f->p.requests + (mp ? mp->requests : 0),
				      .in_requests = f->p.in_requests +
						     (mp ? mp->in_requests : 0) };
	memcpy(r->command, f->p.comm, sizeof(f->p.comm));
	r->command[sizeof(f->p.comm)] = 0;
	if (r->end_s < 0 && r->pid && cp_proc_comm(r->pid, comm, sizeof(comm)) > 0)
		snprintf(r->command, sizeof(r->command), "%s", comm);
}

/* A row's executable when it is not the target's: its own (a process
 * attach was given), else its parent's row's (a fork runs its parent's
 * image); rows in the order they started, parents first. */
static void inherit_executables(struct cp_process_row *rows, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = 0; j < i && !rows[i].executable; j++)
			if (rows[j].pid == rows[i].ppid && rows[j].executable)
				rows[i].executable = strdup(rows[j].executable);
}

void cp_window_processes_free(struct cp_profile *p)
{
	for (size_t i = 0; i < p->nprocesses; i++)
		free(p->processes[i].executable);
	free(p->processes);
	p->processes = NULL;
	p->nprocesses = 0;
}

void cp_window_processes(struct cp_profile *p, const struct cp_session *s, const struct cp_mech *m,
			 double start)
{
	struct cp_followed *f = NULL;
	struct cp_process_row *root;
	struct cp_proc_stat st;
	size_t n = 0, cap = 0, rows = 0;

	cp_window_processes_free(p);
	if (!p->followed || cp_session_followed(s, &f, &n) ||
	    cp_grow(&p->processes, &cap, n + 1, sizeof(*p->processes))) {
		free(f);
		return;
	}
	root = &p->processes[0];
	*root = (struct cp_process_row){ .pid = p->target.pid,
					 .end_s = -1,
					 .known = true,
					 .reads = p->totals.all.reads,
					 .requests = p->totals.requests,
					 .in_requests = p->totals.in_requests.reads };
	snprintf(root->command, sizeof(root->command), "%s", p->target.comm);
	if (cp_proc_stat_read(p->target.pid, &st) == 0)
		root->ppid = st.ppid;
	for (size_t i = 0; i < n; i++) {
		struct cp_process_row *r = &p->processes[1 + rows];
		const struct cp_mech_proc *mp = mech_proc(m, f[i].host_tgid);

		if (!mp) /* started after the window's counts were read */
			continue;
		if ((pid_t)f[i].p.pid == p->target.pid) {
			/* the target, followed into the program it exec()ed: one
			 * process, one row, named by its last image */
			if (mp->known && mp->exe)
				root->executable = strdup(mp->exe);
			memcpy(root->command, f[i].p.comm, sizeof(f[i].p.comm));
			root->command[sizeof(f[i].p.comm)] = 0;
			continue;
		}
		child_row(r, &f[i], mp, start);
		r->executable = mp && mp->exe ? strdup(mp->exe) : NULL;
		root->reads -= r->reads;
		root->requests -= r->requests;
		root->in_requests -= r->in_requests;
		rows++;
	}
	p->nprocesses = rows + 1;
	qsort(p->processes + 1, rows, sizeof(*p->processes), by_start);
	inherit_executables(p->processes, p->nprocesses);
	free(f);
}
