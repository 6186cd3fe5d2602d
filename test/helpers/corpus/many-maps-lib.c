/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One of the many tiny libraries many-maps loads; CORPUS_INDEX makes each file (and its
 * build-id) distinct, as the libraries of a real program are. */
int corpus_many_maps_index(void);

int corpus_many_maps_index(void) {
        return CORPUS_INDEX;
}
