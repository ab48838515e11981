/*
 * main.c — the neardup command-line tool: dispatch to one command.
 *
 * `neardup COMMAND [OPTIONS] [ARGS]`; `neardup --help` lists the commands,
 * `neardup COMMAND --help` (or `neardup help COMMAND`) explains one, and
 * an unknown command is answered with the names within two edits of it.
 * The hidden `neardup __complete [COMMAND [SUB]]` lists the commands or a
 * command's long options from its own option table (cli/neardup.bash).
 * The exit codes are one rule for every command (CLI_EXIT_RULE in cli.h);
 * an interrupted command ends by its signal (cli_signal.c).
 */
#include "cli.h"

#include <string.h>

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

/* One row per command, in the order `neardup --help` lists them. */
static const cli_command commands[] = {
    {"fingerprint", cmd_fingerprint, "print the simhash fingerprint of documents"},
    {"distance", cmd_distance, "Hamming distance of two fingerprints or files"},
    {"plan", cmd_plan, "show the table designs for a distance and a size"},
    {"init", cmd_init, "create a database"},
    {"add", cmd_add, "add documents unless a near-duplicate is stored"},
    {"import", cmd_import, "bulk-load documents (no near-duplicate check)"},
    {"batch", cmd_batch, "check a batch against the store and itself"},
    {"query", cmd_query, "find stored documents within k bits"},
    {"get", cmd_get, "look documents up by key"},
    {"delete", cmd_delete, "delete documents by key"},
    {"compact", cmd_compact, "fold fresh inserts into compressed runs"},
    {"stats", cmd_stats, "documents, fingerprints, bits per entry per table"},
    {"verify", cmd_verify, "check every invariant of a database"},
    {"repair", cmd_repair, "salvage a damaged database"},
    {"backup", cmd_backup, "write a consistent checkpoint"},
    {"expire", cmd_expire, "delete documents not seen for a while"},
    {"dump", cmd_dump, "print every stored document (key, fingerprint, score, time)"},
    {"dedupe", cmd_dedupe, "find near-duplicate clusters in a corpus"},
    {"cluster", cmd_cluster, "collapse near-duplicate search results per query"},
    {"shard", cmd_shard, "create, split and inspect sharded stores"},
    {"serve", cmd_serve, "serve the store over HTTP/JSON (group commit)"},
};

static void list_commands(FILE *f)
{
    fprintf(f, "usage: neardup COMMAND [OPTIONS] [ARGS]\n\n"
               "neardup %s: a persistent near-duplicate fingerprint database.\n\n"
               "commands:\n", ND_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`neardup COMMAND --help` (or `neardup help COMMAND`) describes a command.\n%s",
            CLI_EXIT_RULE);
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) return &commands[i];
    return NULL;
}

/* An unknown command: one line, with the commands within two edits of it
 * ("did you mean 'import'?") when there are any. */
static int unknown_command(const char *name)
{
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[i] = commands[i].name;
    char hint[256];
    cli_suggest(hint, sizeof hint, name, names, sizeof names / sizeof names[0]);
    cli_fail("unknown command '%s'%s; see 'neardup --help'", name, hint);
    return CLI_EXIT_USAGE;
}

static int run_command(const cli_command *c, int argc, char **argv)
{
    cli_signals_init(c->name);
    int rc = c->run(argc, argv);
    if (rc == CLI_EXIT_INTERRUPTED) cli_signals_exit();
    return rc;
}

/* `neardup help COMMAND [SUB]`: the command's own --help. */
static int help_command(int argc, char **argv)
{
    const cli_command *c = find_command(argv[0]);
    if (!c) return unknown_command(argv[0]);
    char *args[8], help[] = "--help";
    int n = 0;
    for (int i = 0; i < argc && n < 6; i++) args[n++] = argv[i];
    args[n++] = help;
    args[n] = NULL;
    return c->run(n, args);
}

/* `neardup __complete [COMMAND [SUB]]` (hidden, for cli/neardup.bash):
 * the commands, or the long options COMMAND parses with, one a line, from
 * its own option table (cli_getopt prints it and ends the process). */
static int complete(int argc, char **argv)
{
    if (argc == 0) {
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            printf("%s\n", commands[i].name);
        return CLI_EXIT_OK;
    }
    const cli_command *c = find_command(argv[0]);
    if (!c) return CLI_EXIT_USAGE;
    cli_complete_begin();
    return c->run(argc, argv); /* shard's subcommand list returns here */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "neardup: no command given; see 'neardup --help'\n");
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 && argc > 2) return help_command(argc - 2, argv + 2);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        list_commands(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("neardup %s (format %u, fingerprint %u)\n", ND_VERSION_STRING,
               ND_FORMAT_VERSION, ND_FP_VERSION);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "__complete") == 0) return complete(argc - 2, argv + 2);
    const cli_command *c = find_command(argv[1]);
    if (c) return run_command(c, argc - 1, argv + 1);
    return unknown_command(argv[1]);
}
