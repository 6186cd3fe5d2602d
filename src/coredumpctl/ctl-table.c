/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Prints a table as systemd's tools do: aligned columns under a header, or JSON (short, pretty).
 * Writes only to the FILE it is given. */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "ctl-format.h"
#include "ctl-table.h"
#include "json.h"

#define TABLE_GROW_MIN 64U

void table_free(Table *t) {
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i].text);
        free(t->cells);
        t->cells = NULL;
        t->n_cells = t->cap = 0;
}

int table_add(Table *t, CellKind kind, const char *color, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;
        int n;

        if (t->n_cells == t->cap) {
                size_t cap = MAX((size_t) TABLE_GROW_MIN, t->cap * 2);
                Cell *c = reallocarray(t->cells, cap, sizeof *c);
                if (!c)
                        return -ENOMEM;
                t->cells = c;
                t->cap = cap;
        }
        if (kind != CELL_EMPTY) {
                va_start(ap, fmt);
                n = vasprintf(&s, fmt, ap);
                va_end(ap);
                if (n < 0)
                        return -ENOMEM;
        }
        t->cells[t->n_cells++] = (Cell) { .text = s, .color = color, .kind = kind };
        return 0;
}

/* Display width: one column per UTF-8 character (no wide characters in what we print). */
static size_t text_width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                w += ((unsigned char) *s & 0xc0) != 0x80;
        return w;
}

static const char *cell_text(const Cell *c) {
        return c->kind == CELL_EMPTY ? "-" : c->text;
}

static void print_padded(FILE *f, const char *s, size_t width, bool right, bool last, const char *color) {
        size_t pad = width - MIN(width, text_width(s));

        if (right)
                fprintf(f, "%*s", (int) pad, "");
        fprintf(f, "%s%s%s", color ? color : "", s, color ? ansi_normal() : "");
        if (!right && !last)
                fprintf(f, "%*s", (int) pad, "");
}

static int print_text(const Table *t, FILE *f, bool legend) {
        size_t width[TABLE_COLUMNS_MAX] = {}, rows = t->n_cells / t->n_columns;

        for (size_t c = 0; c < t->n_columns; c++)
                if (legend)
                        width[c] = strlen(t->names[c]);
        for (size_t i = 0; i < t->n_cells; i++)
                width[i % t->n_columns] = MAX(width[i % t->n_columns], text_width(cell_text(&t->cells[i])));
        if (legend) {
                fputs(ansi_underline(), f);
                for (size_t c = 0; c < t->n_columns; c++) {
                        char up[32] = "";
                        for (size_t k = 0; t->names[c][k] && k + 1 < sizeof up; k++)
                                up[k] = (char) toupper((unsigned char) t->names[c][k]);
                        if (c > 0)
                                fputc(' ', f);
                        print_padded(f, up, width[c], t->right[c], c + 1 == t->n_columns, NULL);
                }
                fprintf(f, "%s\n", ansi_normal());
        }
        for (size_t r = 0; r < rows; r++) {
                for (size_t c = 0; c < t->n_columns; c++) {
                        const Cell *cell = &t->cells[r * t->n_columns + c];
                        if (c > 0)
                                fputc(' ', f);
                        print_padded(f, cell_text(cell), width[c], t->right[c], c + 1 == t->n_columns,
                                     cell->color && *cell->color ? cell->color : NULL);
                }
                fputc('\n', f);
        }
        return 0;
}

static void print_json_value(FILE *f, const Cell *c) {
        if (c->kind == CELL_EMPTY)
                fputs("null", f);
        else if (c->kind == CELL_NUMBER)
                fputs(c->text, f);
        else
                json_print_string(f, c->text);
}

static int print_json(const Table *t, FILE *f, bool pretty) {
        size_t rows = t->n_cells / t->n_columns;

        fputs(pretty ? "[\n" : "[", f);
        for (size_t r = 0; r < rows; r++) {
                fputs(pretty ? "\t{\n" : "{", f);
                for (size_t c = 0; c < t->n_columns; c++) {
                        fputs(pretty ? "\t\t" : "", f);
                        json_print_string(f, t->names[c]);
                        fputs(pretty ? " : " : ":", f);
                        print_json_value(f, &t->cells[r * t->n_columns + c]);
                        fputs(c + 1 < t->n_columns ? "," : "", f);
                        fputs(pretty ? "\n" : "", f);
                }
                fputs(pretty ? "\t}" : "}", f);
                fputs(r + 1 < rows ? "," : "", f);
                fputs(pretty ? "\n" : "", f);
        }
        fputs("]\n", f);
        return 0;
}

int table_print(const Table *t, FILE *f, bool legend, JsonMode json) {
        if (json != JSON_OFF)
                print_json(t, f, json == JSON_PRETTY);
        else
                print_text(t, f, legend);
        fflush(f);
        return ferror(f) ? -EIO : 0;
}
