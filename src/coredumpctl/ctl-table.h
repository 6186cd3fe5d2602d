/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: coredumpctl's table of cells, printed as columns or JSON. No I/O beyond the FILE
 * passed to table_print(). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl.h"

/* A table printed as aligned columns (systemd's layout: one space between columns, a header
 * line unless --no-legend, "-" for empty cells) or as a JSON array of objects. */

#define TABLE_COLUMNS_MAX 9U

typedef enum CellKind {
        CELL_STRING,
        CELL_NUMBER, /* JSON number: the text is its decimal form */
        CELL_EMPTY,  /* "-" in text, null in JSON */
} CellKind;

typedef struct Cell {
        char *text;
        const char *color;
        CellKind kind;
} Cell;

typedef struct Table {
        size_t n_columns;
        const char *names[TABLE_COLUMNS_MAX]; /* JSON keys; upper-cased in the header */
        bool right[TABLE_COLUMNS_MAX];
        Cell *cells;
        size_t n_cells, cap;
} Table;

void table_free(Table *t);
int table_add(Table *t, CellKind kind, const char *color, const char *fmt, ...) _printf_(4, 5);
int table_print(const Table *t, FILE *f, bool legend, JsonMode json);
