/*
 * cmd_stats.c — `neardup stats DB`: documents, fingerprints, and per table
 * entries, runs, bytes and bits per entry beside the entropy bound.
 */
#include "cli.h"

#include <math.h>
#include <string.h>

static const char usage[] =
    "usage: neardup stats DB [--json]\n"
    "\n"
    "Print documents, distinct fingerprints, disk bytes, and per table: prefix\n"
    "bits, entries, runs, pending (fresh, not yet folded) entries, bytes and\n"
    "bits per entry, beside the bound 64 - log2(N) + 1.44 bits. A store created\n"
    "with --min-resemblance adds its threshold and its sketches, band entries\n"
    "and their bytes (keys and values before RocksDB) per document:\n"
    "min_resemblance, sketches, band_keys, sketch_bytes, sketch_bytes_per_doc.\n";

int cmd_stats(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {0, 0, 0, 0}};
    int json = 0, opt;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "stats")) != -1) {
        if (opt == 'j') json = 1;
        else return CLI_EXIT_USAGE;
    }
    if (optind == argc)
        return cli_usage_fail("stats", "missing database path");
    if (argc - optind > 1) return cli_usage_fail("stats", "expected exactly one database path");
    const char *path = argv[optind];
    nd_db *db;
    int rc = cli_open_db(&db, path, ND_DB_READONLY);
    if (rc) return rc;
    static nd_stats st;
    nd_plan_info plan;
    int nrc = nd_db_stats(&st, db);
    if (nrc < 0) {
        rc = cli_fail_nd(nrc, "stats '%s'", path);
        goto done;
    }
    nd_db_plan(&plan, db);
    double bound = st.fingerprints > 1 ? 64.0 - log2((double)st.fingerprints) + 1.44 : 64.0;
    if (json) {
        printf("{\"documents\":%llu,\"fingerprints\":%llu,\"disk_bytes\":%llu,"
               "\"k\":%u,\"tables\":%u,\"bound_bits_per_entry\":%.2f,\"table\":[",
               (unsigned long long)st.documents, (unsigned long long)st.fingerprints,
               (unsigned long long)st.disk_bytes, plan.k, st.tables, bound);
        for (unsigned t = 0; t < st.tables; t++) {
            const nd_table_stats *ts = &st.table[t];
            printf("%s{\"prefix_bits\":%u,\"entries\":%llu,\"runs\":%llu,\"pending\":%llu,"
                   "\"bytes\":%llu,\"bits_per_entry\":%.2f}",
                   t ? "," : "", ts->prefix_bits, (unsigned long long)ts->entries,
                   (unsigned long long)ts->runs, (unsigned long long)ts->fresh,
                   (unsigned long long)ts->bytes, ts->bits_per_entry);
        }
        printf("]");
        if (st.min_resemblance > 0)
            printf(",\"min_resemblance\":%g,\"sketches\":%llu,\"band_keys\":%llu,"
                   "\"sketch_bytes\":%llu,\"sketch_bytes_per_doc\":%.1f",
                   st.min_resemblance, (unsigned long long)st.sketches,
                   (unsigned long long)st.band_keys, (unsigned long long)st.sketch_bytes,
                   st.documents ? (double)st.sketch_bytes / (double)st.documents : 0.0);
        printf("}\n");
    } else {
        printf("documents\t%llu\nfingerprints\t%llu\ndisk_bytes\t%llu\nk\t%u\ntables\t%u\n"
               "bound_bits_per_entry\t%.2f\n",
               (unsigned long long)st.documents, (unsigned long long)st.fingerprints,
               (unsigned long long)st.disk_bytes, plan.k, st.tables, bound);
        if (st.min_resemblance > 0)
            printf("min_resemblance\t%g\nsketches\t%llu\nband_keys\t%llu\nsketch_bytes\t%llu\n"
                   "sketch_bytes_per_doc\t%.1f\n",
                   st.min_resemblance, (unsigned long long)st.sketches,
                   (unsigned long long)st.band_keys, (unsigned long long)st.sketch_bytes,
                   st.documents ? (double)st.sketch_bytes / (double)st.documents : 0.0);
        printf("table\tprefix\tentries\truns\tpending\tbytes\tbits/entry\n");
        for (unsigned t = 0; t < st.tables; t++) {
            const nd_table_stats *ts = &st.table[t];
            printf("%u\t%u\t%llu\t%llu\t%llu\t%llu\t%.2f\n", t, ts->prefix_bits,
                   (unsigned long long)ts->entries, (unsigned long long)ts->runs,
                   (unsigned long long)ts->fresh, (unsigned long long)ts->bytes,
                   ts->bits_per_entry);
        }
    }
done:;
    int crc = cli_close_db(db, path);
    return rc ? rc : crc;
}
