/*
 * bench_rss.h — the process's memory as the bench programs report it
 * (bench_db, bench_resemble): the peak RSS of a phase, and the RSS split
 * into anonymous memory (the heap and RocksDB's caches: what the process
 * itself holds) and file-backed pages (mapped table files, shared
 * libraries: page cache the kernel may reclaim, which top shows in both
 * RES and SHR).
 */
#ifndef BENCH_RSS_H
#define BENCH_RSS_H

/** Start a phase: glibc's freed heap handed back, then the kernel's
 *  peak-RSS mark reset (Linux /proc/self/clear_refs "5"; where it cannot
 *  be, the peak stays process-wide). */
void bench_rss_reset(void);
/** The peak RSS since the last reset, MiB (VmHWM); 0 if unknown. */
double bench_rss_peak_mib(void);
/** The RSS now, MiB (VmRSS); 0 if unknown. */
double bench_rss_now_mib(void);
/** The RSS now as anonymous and file-backed pages, MiB (RssAnon,
 *  RssFile); 0 if unknown. */
void bench_rss_split_mib(double *anon, double *file);

#endif /* BENCH_RSS_H */
