/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Linked into crasher-pkg: a .note.package (owner "FDO", type 0xcafe1a7e) as distributions put
 * into their binaries (https://systemd.io/ELF_PACKAGE_METADATA/). The linker places allocated
 * note sections into the PT_NOTE segment, where readers find it. */
__asm__(".pushsection .note.package, \"a\", @note\n"
        ".balign 4\n"
        ".long 4\n"               /* namesz: "FDO\0" */
        ".long 2f - 1f\n"         /* descsz */
        ".long 0xcafe1a7e\n"      /* type */
        ".asciz \"FDO\"\n"
        "1: .asciz \"{\\\"type\\\":\\\"deb\\\",\\\"name\\\":\\\"crasher-pkg\\\",\\\"version\\\":\\\"1.2-3\\\",\\\"architecture\\\":\\\"amd64\\\"}\"\n"
        "2: .balign 4\n"
        ".popsection\n");
