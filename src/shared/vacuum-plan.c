/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The vacuum's choice of victims (vacuum-plan.h): who may displace whom, per-owner fairness with
 * a heap of owners.
 * Shared, pure: reads and marks the array it is given, allocates only its own index. */
#include <stdlib.h>

#include "macro.h"
#include "vacuum-plan.h"

/* One owner's files of one kind, sorted oldest first; next walks the ones that may go. */
typedef struct Owner {
        uid_t uid;
        uint64_t bytes; /* still in use, the kept file included */
        VacuumFile **next, **end;
} Owner;

/* One kind of file (cores or records) against its limits. */
typedef struct Pass {
        bool record;
        uint64_t used, limit;
        bool want_free; /* cores: KeepFree= too */
        uint64_t avail, keep_free;
        bool for_crash; /* only what a crash of crash_uid may displace */
        uid_t crash_uid;
        bool users_first; /* every owner, but the unprivileged ones first */
} Pass;

bool vacuum_may_displace(uid_t actor, uid_t owner) {
        if (owner == actor)
                return true;
        /* a system uid's core displaces users' files; a user's core nobody's but the user's */
        return actor <= VACUUM_PRIVILEGED_UID_MAX && owner > VACUUM_PRIVILEGED_UID_MAX;
}

/* Whether the pass may delete files of owner at all. */
static bool pass_may_take(const Pass *p, uid_t owner) {
        return !p->for_crash || vacuum_may_displace(p->crash_uid, owner);
}

static int cmp_owner_then_age(const void *a, const void *b) {
        const VacuumFile *x = *(VacuumFile *const *) a, *y = *(VacuumFile *const *) b;

        if (x->uid != y->uid)
                return x->uid < y->uid ? -1 : 1;
        return x->usec < y->usec ? -1 : x->usec > y->usec;
}

/* The owner's next file that may go (the kept one is skipped), or NULL. */
static VacuumFile *owner_next(Owner *o) {
        while (o->next < o->end && (*o->next)->keep)
                o->next++;
        return o->next < o->end ? *o->next : NULL;
}

/* The heap's order: more bytes first; at equal bytes, the owner with the older file (looking
 * moves an owner's next past its kept file, which never goes anyway). */
static bool heavier(Owner *a, Owner *b) {
        VacuumFile *x, *y;

        if (a->bytes != b->bytes)
                return a->bytes > b->bytes;
        x = owner_next(a);
        y = owner_next(b);
        return x && (!y || x->usec < y->usec);
}

static void sift_down(Owner *h, size_t n, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, top = i;
                Owner t;

                if (l < n && heavier(&h[l], &h[top]))
                        top = l;
                if (r < n && heavier(&h[r], &h[top]))
                        top = r;
                if (top == i)
                        return;
                t = h[i];
                h[i] = h[top];
                h[top] = t;
                i = top;
        }
}

static uint64_t add_sat(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool pass_over(const Pass *p) {
        return p->used > p->limit || (p->want_free && p->avail < p->keep_free);
}

/* Groups the sorted files into owners (owners has room for n); returns how many. */
static size_t group_owners(VacuumFile **s, size_t n, Owner *owners) {
        size_t n_owners = 0;

        for (size_t i = 0; i < n; i++) {
                if (i == 0 || s[i]->uid != s[i - 1]->uid)
                        owners[n_owners++] = (Owner) { .uid = s[i]->uid, .next = &s[i] };
                owners[n_owners - 1].bytes += s[i]->bytes;
                owners[n_owners - 1].end = &s[i + 1];
        }
        return n_owners;
}

/* Dooms the heaviest owner's oldest file until the pass is within its limits. An owner with
 * only its kept file left stops the pass (stop_at_keep: the administrator's vacuum, which never
 * deletes another's file for the kept one) or leaves the heap (a crash's: the others it may
 * displace). */
static void take_from_heaviest(Owner *h, size_t n_owners, Pass *p, bool stop_at_keep, VacuumPlanStats *st) {
        for (size_t i = n_owners / 2; i-- > 0;)
                sift_down(h, n_owners, i);
        while (n_owners > 0 && pass_over(p)) {
                VacuumFile *v = owner_next(&h[0]);

                if (!v && stop_at_keep) {
                        st->stopped_at_keep = true;
                        return;
                }
                if (!v) {
                        h[0] = h[--n_owners];
                        sift_down(h, n_owners, 0);
                        continue;
                }
                v->doomed = true;
                h[0].next++;
                h[0].bytes -= v->bytes;
                p->used -= v->bytes;
                p->avail = add_sat(p->avail, v->bytes);
                sift_down(h, n_owners, 0);
        }
}

/* A crash's choice: the owners it may displace, the one using the most first, then its own
 * oldest files; nothing of anyone else. */
static void take_for_crash(Owner *owners, size_t n_owners, Pass *p, VacuumPlanStats *st) {
        Owner self = {};
        size_t k = 0;

        for (size_t i = 0; i < n_owners; i++)
                if (owners[i].uid == p->crash_uid)
                        self = owners[i];
                else if (pass_may_take(p, owners[i].uid))
                        owners[k++] = owners[i];
        take_from_heaviest(owners, k, p, false, st);
        take_from_heaviest(&self, self.next ? 1 : 0, p, false, st);
        if (pass_over(p))
                st->stopped_at_keep = true;
}

/* The periodic vacuum's records: the unprivileged owners first, the one using the most first;
 * the system uids' only when theirs alone are past the budget (no user can bring that about). */
static void take_users_first(Owner *owners, size_t n_owners, Pass *p, VacuumPlanStats *st) {
        size_t k = 0;

        /* the users' to the front: a stable order is not needed, each part is a heap */
        for (size_t i = 0; i < n_owners; i++)
                if (owners[i].uid > VACUUM_PRIVILEGED_UID_MAX) {
                        Owner t = owners[k];
                        owners[k++] = owners[i];
                        owners[i] = t;
                }
        take_from_heaviest(owners, k, p, false, st);
        take_from_heaviest(owners + k, n_owners - k, p, true, st);
}

/* Whether deleting every core that may go would bring the file system back to KeepFree=. */
static bool keep_free_reachable(VacuumFile **s, size_t n, const Pass *p) {
        uint64_t may_go = 0;

        for (size_t i = 0; i < n; i++)
                if (!s[i]->keep && pass_may_take(p, s[i]->uid))
                        may_go += s[i]->bytes;
        return p->avail >= p->keep_free || p->keep_free - p->avail <= may_go;
}

static int run_pass(VacuumFile *f, size_t n, Pass *p, VacuumPlanStats *st) {
        _cleanup_free_ VacuumFile **s = malloc(sizeof *s * (n ? n : 1));
        _cleanup_free_ Owner *owners = malloc(sizeof *owners * (n ? n : 1));
        size_t k = 0;

        if (!s || !owners)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (f[i].record == p->record && !f[i].doomed) {
                        s[k++] = &f[i];
                        p->used += f[i].bytes;
                }
        qsort(s, k, sizeof *s, cmp_owner_then_age);
        if (p->want_free && !keep_free_reachable(s, k, p)) {
                st->keep_free_unreachable = true;
                p->want_free = false;
        }
        if (p->for_crash)
                take_for_crash(owners, group_owners(s, k, owners), p, st);
        else if (p->users_first)
                take_users_first(owners, group_owners(s, k, owners), p, st);
        else
                take_from_heaviest(owners, group_owners(s, k, owners), p, true, st);
        return 0;
}

/* What the cores a crash may not displace hold (nothing for the administrator's vacuum). */
static uint64_t held_from(const VacuumFile *f, size_t n, const Pass *p) {
        uint64_t held = 0;

        for (size_t i = 0; i < n; i++)
                if (!f[i].record && !f[i].doomed && !pass_may_take(p, f[i].uid))
                        held = add_sat(held, f[i].bytes);
        return held;
}

int vacuum_plan(VacuumFile *f, size_t n, const VacuumBudget *b, VacuumPlanStats *ret) {
        Pass cores = { .limit = b->max_use, .want_free = true, .avail = b->avail, .keep_free = b->keep_free,
                       .for_crash = b->for_crash, .crash_uid = b->crash_uid };
        Pass records = { .record = true, .limit = b->records, .for_crash = b->for_crash, .crash_uid = b->crash_uid,
                         .users_first = b->records_users_first };
        uint64_t held = held_from(f, n, &cores);
        uint64_t room = b->max_use > held ? b->max_use - held : 0;
        int r;

        *ret = (VacuumPlanStats) {};
        for (size_t i = 0; i < n; i++) {
                /* alone past MaxUse= (beside what it may not displace): this one goes, nothing
                 * else for it */
                if (!f[i].record && f[i].keep && f[i].bytes > room)
                        f[i].doomed = true;
                if (f[i].doomed)
                        cores.avail = add_sat(cores.avail, f[i].bytes);
        }
        r = run_pass(f, n, &cores, ret);
        return r < 0 ? r : run_pass(f, n, &records, ret);
}
