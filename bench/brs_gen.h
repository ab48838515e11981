/*
 * brs_gen.h — the synthetic texts of bench_resemble (brs_gen.c): a
 * vocabulary of Zipf-distributed words, texts of 30 to 2,000 words
 * (log-uniform: many short ones), and a share of planted edited copies of
 * earlier texts. Text i depends only on (seed, i), so any run, any store
 * and `--jsonl` see the same corpus.
 */
#ifndef BRS_GEN_H
#define BRS_GEN_H

#include <stddef.h>
#include <stdint.h>

#define BRS_VOCAB 50000u      /* words */
#define BRS_MIN_WORDS 30u
#define BRS_MAX_WORDS 2000u

typedef struct brs_gen {
    uint64_t seed;
    unsigned copy_permille;   /* share of planted copies, per mille */
    double min_edit, max_edit;/* word edit rate of a copy, uniform in this range */
    /* private: the vocabulary and its alias table */
    char *words;              /* BRS_VOCAB NUL-terminated words */
    uint32_t *word_off;
    uint8_t *word_len;
    double *alias_p;
    uint32_t *alias_i;
    uint32_t *scratch[2];     /* word-id buffers for rendering sources */
    size_t scratch_cap;
} brs_gen;

/* What text i is. */
typedef struct brs_info {
    int is_copy;              /* a planted copy */
    uint64_t source;          /* its source (an earlier text), when a copy */
    uint64_t root;            /* the original its chain of copies starts at */
    double edit;              /* its edit rate, when a copy */
} brs_info;

/* Build the vocabulary (deterministic in seed). Exits on out of memory. */
void brs_gen_init(brs_gen *g, uint64_t seed);
void brs_gen_dispose(brs_gen *g);

/* Text i into buf (cap bytes at least BRS_MAX_TEXT): returns its length
 * in bytes; info (may be NULL) receives what it is. */
#define BRS_MAX_TEXT ((size_t)BRS_MAX_WORDS * 2 * 16)
size_t brs_text(brs_gen *g, uint64_t i, char *buf, brs_info *info);

/* What text i is, without its words (cheap). */
void brs_info_of(const brs_gen *g, uint64_t i, brs_info *info);

#endif
