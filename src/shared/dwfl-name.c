/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The function name at an address of a libdwfl module: one rule for the worker's traces and for
 * coredumpctl's second look. Touches only what libdwfl already holds. */
#include <dwarf.h>
#include <stdlib.h>

#include "dwfl-name.h"

const char *module_function_name(Dwfl_Module *mod, Dwarf_Addr addr) {
        Dwarf_Addr bias = 0;
        Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias), *scopes = NULL;
        const char *name = NULL;
        int n;

        if (cu && (n = dwarf_getscopes(cu, addr - bias, &scopes)) > 0) {
                for (int i = 0; i < n && !name; i++) {
                        int tag = dwarf_tag(&scopes[i]);
                        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
                                name = dwarf_diename(&scopes[i]);
                }
                free(scopes);
        }
        return name ?: dwfl_module_addrname(mod, addr);
}
