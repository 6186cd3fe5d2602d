/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the function name at an address of a libdwfl module, as our traces name frames
 * (worker: backtrace.c; coredumpctl info: ctl-symbolize.c). Built only with libdw. */
#pragma once

#include <elfutils/libdwfl.h>

/* The DWARF name of the innermost function (inlined or not) at addr where the module has debug
 * info, else its symbol table's; NULL if neither names it. Owned by libdwfl. */
const char *module_function_name(Dwfl_Module *mod, Dwarf_Addr addr);
