/*
 * golden_fp_inputs.h — the texts and options of the golden fingerprint
 * vectors (expected values in golden_fp.h).
 */
#ifndef GOLDEN_FP_INPUTS_H
#define GOLDEN_FP_INPUTS_H

#include <stddef.h>
#include "neardup.h"

typedef struct golden_input {
    const char *text;
    size_t len;
    nd_feature_kind features;
    unsigned n;
    unsigned flags;
    const char *const *stop;
    size_t nstop;
} golden_input;

static const char *const golden_stop[] = {"the", "and", "Of"};

#define G(s, f, n, fl) {s, sizeof(s) - 1, f, n, fl, NULL, 0}
static const golden_input golden_inputs[] = {
    G("", ND_FEATURES_DEFAULT, 0, 0),
    G("hello", ND_FEATURES_DEFAULT, 0, 0),
    G("The quick brown fox jumps over the lazy dog", ND_FEATURES_DEFAULT, 0, 0),
    G("The quick brown fox jumps over the lazy dog", ND_FEATURES_WORDS, 0, 0),
    G("The quick brown fox jumps over the lazy dog", ND_FEATURES_SHINGLES, 2, 0),
    G("The quick brown fox jumps over the lazy dog", ND_FEATURES_SHINGLES, 3, 0),
    G("The quick brown fox jumps over the lazy dog", ND_FEATURES_CHARS, 3, 0),
    G("The quick brown fox jumps over the lazy dog", ND_FEATURES_CHARS, 4, 0),
    G("THE QUICK BROWN FOX, jumps; over (the) lazy dog!!", ND_FEATURES_DEFAULT, 0, 0),
    G("Ｔｈｅ ｑｕｉｃｋ ｂｒｏｗｎ ｆｏｘ", ND_FEATURES_DEFAULT, 0, 0),
    G("Straße Übergröße café naïve coöperate", ND_FEATURES_WORDS, 0, 0),
    G("cafe\xcc\x81 vs caf\xc3\xa9", ND_FEATURES_WORDS, 0, 0),
    G("我们的数据库存储指纹并回答查询", ND_FEATURES_DEFAULT, 0, 0),
    G("我们的数据库存储指纹并回答查询", ND_FEATURES_WORDS, 0, 0),
    G("日本語のテキストはスペースなしで書かれます", ND_FEATURES_DEFAULT, 0, 0),
    G("ภาษาไทยเขียนโดยไม่มีช่องว่าง", ND_FEATURES_DEFAULT, 0, 0),
    G("Mixed 中文字 and English 混合 text", ND_FEATURES_WORDS, 0, 0),
    G("Mixed 中文字 and English 混合 text", ND_FEATURES_WORDS, 0, ND_FP_NO_CJK_BIGRAMS),
    G("Ελληνικά κείμενα και русский текст", ND_FEATURES_DEFAULT, 0, 0),
    G("bad \xff\xfe utf8 \xc3 here \xed\xa0\x80 surrogate", ND_FEATURES_WORDS, 0, 0),
    G("nul\0bytes\0split", ND_FEATURES_WORDS, 0, 0),
    G("12345 3.14159 2026-11-22", ND_FEATURES_WORDS, 0, 0),
    G("a", ND_FEATURES_CHARS, 4, 0),
    G("one two", ND_FEATURES_SHINGLES, 3, 0),
    G("<html><head><title>Near duplicates</title><script>var x=1;</script></head>"
      "<body><p>Simhash &amp; permuted tables</p><div>find near&#45;duplicates</div>"
      "<style>p{}</style></body></html>",
      ND_FEATURES_DEFAULT, 0, ND_FP_HTML),
    G("<p>unclosed <b>tags <i>everywhere", ND_FEATURES_WORDS, 0, ND_FP_HTML),
    G("   \t\n  ", ND_FEATURES_DEFAULT, 0, 0),
    {"the cat and the hat of doom", 27, ND_FEATURES_WORDS, 0, 0, golden_stop, 3},
    {"the cat and the hat of doom", 27, ND_FEATURES_SHINGLES, 2, 0, golden_stop, 3},
    G("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
      "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud "
      "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.",
      ND_FEATURES_DEFAULT, 0, 0),
};
#undef G

#endif
