/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Intrusive doubly-linked list macros (the manager's workers and crashes). Shared, header only:
 * no I/O. */
#pragma once

/* Intrusive doubly-linked lists: a struct carries "Type *name##_next, *name##_prev". */
#define LIST_FIELDS(t, name) t *name##_next, *name##_prev

#define LIST_PREPEND(name, head, item)                          \
        do {                                                    \
                (item)->name##_prev = NULL;                     \
                (item)->name##_next = (head);                   \
                if (head)                                       \
                        (head)->name##_prev = (item);           \
                (head) = (item);                                \
        } while (0)

#define LIST_REMOVE(name, head, item)                                        \
        do {                                                                 \
                if ((item)->name##_next)                                     \
                        (item)->name##_next->name##_prev = (item)->name##_prev; \
                if ((item)->name##_prev)                                     \
                        (item)->name##_prev->name##_next = (item)->name##_next; \
                else                                                         \
                        (head) = (item)->name##_next;                        \
                (item)->name##_next = (item)->name##_prev = NULL;            \
        } while (0)

#define LIST_FOREACH_SAFE(name, i, n, head) \
        for ((i) = (head); (i) && (((n) = (i)->name##_next), 1); (i) = (n))

/* The last element (oldest when items are prepended). */
#define LIST_FIND_TAIL(name, head, ret)                                       \
        do {                                                                  \
                (ret) = (head);                                               \
                while ((ret) && (ret)->name##_next)                           \
                        (ret) = (ret)->name##_next;                           \
        } while (0)
