/*
 * similar_corpus.h — the texts the resemblance-store tests share
 * (test_similar.c, test_shards.c): a word list skewed as real text is,
 * random texts (a third of them 30-60 words), copies edited at several
 * rates (words replaced, deleted, inserted), signed by nd_db_sign, and a
 * corpus of originals, their copies and "simhash twins" (one bit from an
 * original's fingerprint, another text's sketch), the same in every test
 * (make_corpus reseeds). open_store creates a store of k SIM_K (with
 * cmocka's asserts: include it after cmocka.h).
 */
#ifndef ND_TEST_SIMILAR_CORPUS_H
#define ND_TEST_SIMILAR_CORPUS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neardup.h"

#define SIM_K 3u

/* ---- texts ------------------------------------------------------------- */

#define VOCAB 2000
#define MAX_WORDS 700

static char vocab[VOCAB][12];
static uint64_t rng = 0x1234567;

static inline uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static inline void make_vocab(void)
{
    static const char *syl[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa",
                                "do", "gi", "hu", "be", "fo", "ly"};
    for (int i = 0; i < VOCAB; i++) {
        vocab[i][0] = '\0';
        unsigned n = 2 + (unsigned)(rnd() % 3);
        for (unsigned s = 0; s < n; s++) strcat(vocab[i], syl[rnd() % 16]);
    }
}

/* Skewed toward the first words, as real text is. */
static inline uint32_t word(void)
{
    double u = unif();
    return (uint32_t)(u * u * VOCAB);
}

typedef struct sim_text {
    uint32_t w[MAX_WORDS];
    size_t n;
} sim_text;

static inline void random_text(sim_text *t, size_t n)
{
    t->n = n;
    for (size_t i = 0; i < n; i++) t->w[i] = word();
}

/* Each word replaced, deleted, or followed by an inserted one with
 * probability rate (a third each). */
static inline void edit_text(sim_text *out, const sim_text *in, double rate)
{
    out->n = 0;
    for (size_t i = 0; i < in->n && out->n < MAX_WORDS - 1; i++) {
        if (unif() >= rate) {
            out->w[out->n++] = in->w[i];
            continue;
        }
        switch (rnd() % 3) {
        case 0: out->w[out->n++] = word(); break;
        case 1: break;
        default:
            out->w[out->n++] = in->w[i];
            out->w[out->n++] = word();
        }
    }
}

static inline void sign(nd_signature *sig, nd_db *db, const sim_text *t)
{
    char buf[MAX_WORDS * 13];
    size_t len = 0;
    for (size_t i = 0; i < t->n; i++) {
        size_t l = strlen(vocab[t->w[i]]);
        memcpy(buf + len, vocab[t->w[i]], l);
        len += l;
        buf[len++] = ' ';
    }
    assert_int_equal(nd_db_sign(sig, db, buf, len, 0), ND_OK);
}

/* ---- the corpus ---------------------------------------------------------- */

#define ORIGINALS 48
#define RATES 5
static const double rates[RATES] = {0.003, 0.01, 0.03, 0.08, 0.3};
#define TWINS 12
#define CORPUS (ORIGINALS * (1 + RATES) + TWINS)

typedef struct corpus {
    sim_text t[ORIGINALS];
    nd_signature sig[CORPUS];
    char key[CORPUS][16];
    nd_doc doc[CORPUS];
    size_t n;
} corpus;

static inline void corpus_add(corpus *c, const char *key, const nd_signature *sig)
{
    size_t i = c->n++;
    c->sig[i] = *sig;
    snprintf(c->key[i], sizeof c->key[i], "%s", key);
    c->doc[i] = (nd_doc){c->key[i], strlen(c->key[i]), sig->fp, (double)i, 1000 + (int64_t)i,
                         &c->sig[i].sketch};
}

static inline corpus *make_corpus(nd_db *db)
{
    corpus *c = calloc(1, sizeof *c);
    char key[16];
    assert_non_null(c);
    rng = 0x1234567; /* the same corpus in every test */
    make_vocab();
    for (int o = 0; o < ORIGINALS; o++) {
        nd_signature sig;
        sim_text e;
        /* a third short (30-60 words), the rest 100-400 */
        random_text(&c->t[o], o % 3 == 0 ? 30 + rnd() % 31 : 100 + rnd() % 301);
        sign(&sig, db, &c->t[o]);
        snprintf(key, sizeof key, "o%02d", o);
        corpus_add(c, key, &sig);
        for (int r = 0; r < RATES; r++) {
            edit_text(&e, &c->t[o], rates[r]);
            sign(&sig, db, &e);
            snprintf(key, sizeof key, "c%02d.%d", o, r);
            corpus_add(c, key, &sig);
        }
    }
    for (int w = 0; w < TWINS; w++) { /* fp one bit from o(w)'s, sketch of another text */
        nd_signature sig;
        sim_text t;
        random_text(&t, 80);
        sign(&sig, db, &t);
        sig.fp = c->sig[w * (1 + RATES)].fp ^ (1ull << (w % 64));
        snprintf(key, sizeof key, "t%02d", w);
        corpus_add(c, key, &sig);
    }
    return c;
}

static inline nd_db *open_store_flags(const char *path, double r, unsigned flags)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_NO_BACKGROUND | flags;
    o.k = SIM_K;
    o.has_k = 1;
    o.tables = 4;
    o.expected_docs = 100000;
    o.min_resemblance = r;
    assert_int_equal(nd_db_open(&db, path, &o), ND_OK);
    return db;
}

/* A store verifying by resemblance r, or with r = 0 the default (a new
 * store: 0.85) or the store as it was made. */
static inline nd_db *open_store(const char *path, double r) { return open_store_flags(path, r, 0); }

/* A new fingerprint-only store. */
static inline nd_db *open_fp_store(const char *path)
{
    return open_store_flags(path, 0, ND_DB_FINGERPRINT_ONLY);
}

#endif
