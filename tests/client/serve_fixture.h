/*
 * serve_fixture.h — `neardup serve` for the C client's tests: start a
 * server on a store ($NEARDUP serve DB --listen 127.0.0.1:0 ARGS...), read
 * the address it prints ("listening on URL"), stop it with SIGTERM. Its
 * stderr goes to DB.err; ref_server_probe: whether one starts at all.
 * Shared by test_client.c and test_fleet.c.
 */
#ifndef ND_TEST_SERVE_FIXTURE_H
#define ND_TEST_SERVE_FIXTURE_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tmpdir.h"
#include "client_ref.h"

typedef struct served {
    pid_t pid;
    char url[256];
} served;

/* 0 started; 77 the build has no server; -1 another failure (said). */
static inline int serve_start(served *s, const char *db, const char *const *args)
{
    const char *nd = getenv("NEARDUP");
    if (!nd) {
        fprintf(stderr, "serve_start: $NEARDUP (the CLI) is not set\n");
        return -1;
    }
    char err[512];
    snprintf(err, sizeof err, "%s.err", db);
    const char *argv[32] = {nd, "serve", db, "--listen", "127.0.0.1:0"};
    int argc = 5;
    for (; args && *args && argc < 31; args++) argv[argc++] = *args;
    argv[argc] = NULL;
    int fd[2];
    if (pipe(fd) != 0) return -1;
    fflush(NULL);
    s->pid = fork();
    if (s->pid < 0) return -1;
    if (s->pid == 0) {
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd[1], 1);
        if (e >= 0) dup2(e, 2);
        close(fd[0]);
        execv(nd, (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    FILE *out = fdopen(fd[0], "r");
    char line[256] = "";
    if (!out || !fgets(line, sizeof line, out)) line[0] = '\0';
    if (out) fclose(out); /* the server writes nothing more on stdout */
    else close(fd[0]);
    if (strncmp(line, "listening on ", 13) != 0) {
        int st;
        waitpid(s->pid, &st, 0);
        s->pid = 0;
        char cmd[640], text[512] = "";
        FILE *f = fopen(err, "r");
        if (f) {
            size_t n = fread(text, 1, sizeof text - 1, f);
            text[n] = '\0';
            fclose(f);
        }
        if (strstr(text, "built without the server")) return 77;
        snprintf(cmd, sizeof cmd, "serve %s did not start: %s", db, text);
        fprintf(stderr, "%s\n", cmd);
        return -1;
    }
    line[strcspn(line, "\r\n")] = '\0';
    snprintf(s->url, sizeof s->url, "%s", line + 13);
    return 0;
}

/* SIGTERM and wait: its exit status (0 expected), -1 if not running. */
static inline int serve_stop(served *s)
{
    int st = 0;
    if (s->pid <= 0) return -1;
    kill(s->pid, SIGTERM);
    waitpid(s->pid, &st, 0);
    s->pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Whether a server starts here (the CLI may be built without one): 0,
 * 77 (skip: who says so on stderr) or 1 (a failure). */
static inline int ref_server_probe(const char *who)
{
    char dir[64], path[128];
    served s;
    nd_db *db = NULL;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/probe.nd", dir);
    if (ref_create(&db, path, 1) != ND_OK || nd_db_close(db) != ND_OK) {
        fprintf(stderr, "%s: the probe's store: %s\n", who, nd_errmsg());
        return 1;
    }
    int rc = serve_start(&s, path, NULL), stop = 0;
    if (rc == 0) stop = serve_stop(&s);
    tmpdir_remove(dir);
    if (rc == 77) fprintf(stderr, "%s: neardup was built without the server: skipped\n", who);
    if (rc == 0 && stop != 0) /* it started: the server is there */
        fprintf(stderr, "%s: note: the probe's server stopped with status %d\n", who, stop);
    return rc == 0 || rc == 77 ? rc : 1;
}

#endif
