/* placeholder until the CLI engineer lands cmd_distance.c */
#include "cli.h"
int cmd_distance(int argc, char **argv) { (void)argc; (void)argv; return cli_fail("distance: not built yet"); }
