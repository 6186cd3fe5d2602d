/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether a control request's file name is one coredumpd stores (core.*, record.*.export, no '/').
 * Shared by coredumpctl and coredumpd, pure: no I/O. */
#include <string.h>

#include "control-proto.h"

bool control_name_valid(const char *name) {
        size_t l = strlen(name);

        if (l == 0 || l > CONTROL_NAME_MAX)
                return false;
        for (size_t i = 0; i < l; i++)
                if ((unsigned char) name[i] <= ' ' || (unsigned char) name[i] >= 0x7f || name[i] == '/')
                        return false;
        if (strncmp(name, "core.", 5) == 0)
                return l > 5;
        return strncmp(name, "record.", 7) == 0 && l > 14 && strcmp(name + l - 7, ".export") == 0;
}
