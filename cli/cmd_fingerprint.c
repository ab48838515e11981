/* placeholder until the CLI engineer lands cmd_fingerprint.c */
#include "cli.h"
int cmd_fingerprint(int argc, char **argv) { (void)argc; (void)argv; return cli_fail("fingerprint: not built yet"); }
