/*
 * bench_rss.c — peak and current RSS from /proc/self (bench_rss.h).
 */
#define _GNU_SOURCE
#include "bench_rss.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    size_t fl = strlen(field);
    double v = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, fl) == 0 && line[fl] == ':') {
            v = strtod(line + fl + 1, NULL);
            break;
        }
    fclose(f);
    return v;
}

void bench_rss_reset(void)
{
#ifdef __GLIBC__
    /* Heap the previous phase freed but glibc kept would count against
     * this phase: hand it back first. */
    malloc_trim(0);
#endif
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0) return;
    if (write(fd, "5", 1) != 1) { /* the peak stays process-wide */
    }
    close(fd);
}

double bench_rss_peak_mib(void) { return status_kib("VmHWM") / 1024.0; }

double bench_rss_now_mib(void) { return status_kib("VmRSS") / 1024.0; }

void bench_rss_split_mib(double *anon, double *file)
{
    *anon = status_kib("RssAnon") / 1024.0;
    *file = status_kib("RssFile") / 1024.0;
}
