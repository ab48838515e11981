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

/* Version 2 (CJK runs whole): inputs whose fingerprints differ from
 * version 1's or show its rules; expected values in golden_fp.h
 * (golden_fp_v2). The rules' equalities are checked in test_golden_v2. */
static const golden_input golden_inputs_v2[] = {
    G("我们的数据库存储指纹并回答查询", ND_FEATURES_DEFAULT, 0, 0),                /* 0 */
    G("我们 的 数据库 存储 指纹 并 回答 查询", ND_FEATURES_DEFAULT, 0, 0),         /* 1 = 0 */
    G("我们的数据\n库存储指纹\r\n并回答查询", ND_FEATURES_DEFAULT, 0, 0),         /* 2 = 0 */
    G("我们的\t数据库\xe3\x80\x80存储指纹\v并回答\f查询", ND_FEATURES_DEFAULT, 0, 0), /* 3 = 0 */
    G("我们的「数据库」存储指纹，并回答查询。", ND_FEATURES_DEFAULT, 0, 0),      /* 4 = 0 */
    G("我们的（数据库）存储指纹！并回答查询？", ND_FEATURES_DEFAULT, 0, 0),      /* 5 = 0 */
    G("日本語のテキストはスペースなしで書かれます", ND_FEATURES_DEFAULT, 0, 0),    /* 6 */
    G("日本語の\nテキストは・スペース、なしで『書かれます』", ND_FEATURES_DEFAULT, 0, 0), /* 7 = 6 */
    G("한국어 텍스트는 단어 사이에 띄어쓰기를 합니다", ND_FEATURES_DEFAULT, 0, 0),  /* 8 */
    G("한국어텍스트는단어사이에띄어쓰기를합니다", ND_FEATURES_DEFAULT, 0, 0),       /* 9 = 8 */
    G("한국어 텍스트는\n단어 사이에, 띄어쓰기를 합니다.", ND_FEATURES_DEFAULT, 0, 0), /* 10 = 8 */
    G("Mixed 中文字 and English 混合 text", ND_FEATURES_WORDS, 0, 0),              /* 11 */
    G("使用 RocksDB 存储指纹", ND_FEATURES_WORDS, 0, 0),                            /* 12 */
    G("使用RocksDB存储指纹", ND_FEATURES_WORDS, 0, 0),                              /* 13 = 12 */
    G("人々は〇〇を読む", ND_FEATURES_WORDS, 0, 0),                                 /* 14 */
    G("中文\0中文", ND_FEATURES_WORDS, 0, 0),                                       /* 15 */
    G("中文\xff中文", ND_FEATURES_WORDS, 0, 0),                                     /* 16 = 15 */
    G("中文\xe6\x96", ND_FEATURES_WORDS, 0, 0),                                     /* 17 */
    G("ภาษาไทย เขียน", ND_FEATURES_DEFAULT, 0, 0),                                  /* 18 = v1 */
    G("中文 ภาษา", ND_FEATURES_WORDS, 0, 0),                                         /* 19 */
    G("第3章 数据", ND_FEATURES_WORDS, 0, 0),                                         /* 20 */
    G("数据 库", ND_FEATURES_CHARS, 4, 0),                                            /* 21 */
    G("数据\xe2\x80\x8b库", ND_FEATURES_WORDS, 0, 0),                               /* 22 */
    G("数据库", ND_FEATURES_WORDS, 0, 0),                                             /* 23 = 22 */
    G("漢字と仮名と한글の混合", ND_FEATURES_DEFAULT, 0, 0),                           /* 24 */
    G("中", ND_FEATURES_WORDS, 0, 0),                                                 /* 25 */
    G("中 。 文", ND_FEATURES_WORDS, 0, 0),                                           /* 26 */
    G("中文", ND_FEATURES_WORDS, 0, 0),                                               /* 27 = 26 */
    G("中文 ★ ※ 〜 ¥100", ND_FEATURES_WORDS, 0, 0),                                  /* 28 */
    G("Mixed 中文字 and English 混合 text", ND_FEATURES_WORDS, 0, ND_FP_NO_CJK_BIGRAMS), /* 29 */
    G("한국어 텍스트", ND_FEATURES_WORDS, 0, ND_FP_NO_CJK_BIGRAMS),                   /* 30 */
    G("<p>我们的数据库</p>\n<p>存储指纹</p>", ND_FEATURES_WORDS, 0, ND_FP_HTML),     /* 31 */
    /* Traditional to Simplified folding (OpenCC t2s), off by default. */
    G("我們的數據庫存儲指紋並回答查詢", ND_FEATURES_DEFAULT, 0, ND_FP_FOLD_CHINESE), /* 32 = 0 */
    G("我们的数据库存储指纹并回答查询", ND_FEATURES_DEFAULT, 0, ND_FP_FOLD_CHINESE), /* 33 = 0 */
    G("我們的數據庫存儲指紋並回答查詢", ND_FEATURES_DEFAULT, 0, 0),                  /* 34 */
    G("日本語のテキストは書かれます", ND_FEATURES_WORDS, 0, ND_FP_FOLD_CHINESE),    /* 35 */
    G("體育 Hello\0 開發", ND_FEATURES_WORDS, 0, ND_FP_FOLD_CHINESE),               /* 36 */
    G("体育 hello\0 开发", ND_FEATURES_WORDS, 0, 0),                                 /* 37 = 36 */
    G("頭髮 乾淨 後來", ND_FEATURES_CHARS, 4, ND_FP_FOLD_CHINESE),                   /* 38 */
};
#undef G

#endif
