/*
 * fp_html.c — HTML -> visible text, in one pass over the bytes: a
 * tokenizer and a stack of open elements, no tree. It reproduces what
 * libxml2 2.9's forgiving HTML parser built (the extractor of fingerprint
 * version 1 walked that tree; bench/html_compare.c keeps it as the
 * reference and measures the agreement): the same element nesting
 * (libxml2's start tags that close open elements, its implied html, head,
 * body and p, its end-tag priorities, fp_html_tables.h), the same
 * entities (HTML 4's, `;` required; numeric ones), the same dropped
 * characters and the same dropped white space (HTML_PARSE_NOBLANKS).
 *
 * Output: text under script, style, noscript, template, svg, math, iframe,
 * object, select and head is dropped; the text of a <title> (outside those,
 * or directly in head) goes to the title, titles joined by a space; block
 * elements put a newline into the body where they open and close, so
 * words of neighbouring blocks never fuse. Bytes are copied as they are
 * (fp_text.c replaces invalid UTF-8).
 *
 * Deliberate differences from libxml2 (bench/results/2026-12-02-html.md):
 * a NUL byte is a space (libxml2 stops the document at a NUL between two
 * tokens); elements nested deeper than FH_MAX_DEPTH are not pushed and
 * their text is kept (libxml2 stops the document at depth 256); the
 * document's declared encoding is ignored as before (input is UTF-8).
 *
 * Cost: each byte is looked at a small constant number of times; an end
 * tag searches at most FH_MAX_DEPTH open elements, so hostile input stays
 * linear. Callers: fp_text.c (ND_FP_HTML) and the public API.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fp_internal.h"
#include "nd_error.h"

#include "fp_html_tables.h"

#define FH_MAX_DEPTH 256

/* ---- element facts ---------------------------------------------------- */

enum {
    EF_KNOWN = 1,   /* libxml2 knows it */
    EF_EMPTY = 2,   /* no content: closed where it opens */
    EF_BLOCK = 4,   /* separates words */
    EF_SKIP = 8,    /* its text is not visible */
    EF_PCDATA = 16, /* libxml2's allowPCData: white space beside it is kept */
    EF_RAW = 32     /* script, style: raw text up to its end tag */
};

typedef struct el_info {
    const char *name;
    unsigned char flags, prio; /* prio: end-tag priority */
} el_info;

#define FH_EL(n, known, empty) {n, (unsigned char)((known ? EF_KNOWN : 0) | (empty ? EF_EMPTY : 0)), 100},
static el_info elements[] = {{"", 0, 100}, FH_ELEMENTS};
#undef FH_EL
#define NEL (sizeof elements / sizeof elements[0])

/* Which start tag closes which open element: closes[old][new]. */
static unsigned char closes[NEL][NEL];

/* Name -> element index: open addressing over FNV-1a hashes. */
#define HSLOTS 512
static uint16_t slot_el[HSLOTS];
static uint64_t slot_hash[HSLOTS];

typedef struct ent {
    const char *name;
    unsigned value;
} ent;
#define FH_ENT(n, v) {n, v},
static const ent entities[] = {FH_ENTITIES};
#undef FH_ENT
#define NENT (sizeof entities / sizeof entities[0])
#define ESLOTS 1024
static int16_t ent_slot[ESLOTS];

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Indices of the elements the tree rules name. */
static unsigned el_html, el_head, el_body, el_title, el_p;

static uint64_t fnv(const unsigned char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

/* Index of the element named s[0..n) (lower case), 0 if none. */
static unsigned el_lookup(uint64_t h, const unsigned char *s, size_t n)
{
    for (size_t i = h % HSLOTS;; i = (i + 1) % HSLOTS) {
        unsigned e = slot_el[i];
        if (!e) return 0;
        if (slot_hash[i] == h && strlen(elements[e].name) == n &&
            memcmp(elements[e].name, s, n) == 0)
            return e;
    }
}

static void set_flag(const char *name, unsigned char flag)
{
    size_t n = strlen(name);
    unsigned e = el_lookup(fnv((const unsigned char *)name, n), (const unsigned char *)name, n);
    if (e) elements[e].flags |= flag;
}

static void set_prio(const char *name, unsigned char prio)
{
    size_t n = strlen(name);
    unsigned e = el_lookup(fnv((const unsigned char *)name, n), (const unsigned char *)name, n);
    if (e) elements[e].prio = prio;
}

static unsigned el_of(const char *name)
{
    size_t n = strlen(name);
    return el_lookup(fnv((const unsigned char *)name, n), (const unsigned char *)name, n);
}

static void init_tables(void)
{
    for (unsigned e = 1; e < NEL; e++) {
        size_t n = strlen(elements[e].name);
        uint64_t h = fnv((const unsigned char *)elements[e].name, n);
        size_t i = h % HSLOTS;
        while (slot_el[i]) i = (i + 1) % HSLOTS;
        slot_el[i] = (uint16_t)e;
        slot_hash[i] = h;
    }
    static const char *const skip[] = {"script", "style", "noscript", "template", "svg",
                                       "math",   "iframe", "object", "select", "head"};
    static const char *const block[] = {
        "p",  "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3",
        "h4", "h5",  "h6", "section", "article", "header", "footer", "nav", "aside", "pre",
        "blockquote", "dd", "dt", "dl", "form", "hr", "main", "figure", "figcaption"};
    /* libxml2's list of elements beside which white space is text. */
    static const char *const pcdata[] = {
        "a", "abbr", "acronym", "address", "applet", "b", "bdo", "big", "blockquote", "body",
        "button", "caption", "center", "cite", "code", "dd", "del", "dfn", "div", "dt", "em",
        "font", "form", "h1", "h2", "h3", "h4", "h5", "h6", "i", "iframe", "ins", "kbd",
        "label", "legend", "li", "noframes", "noscript", "object", "p", "pre", "q", "s",
        "samp", "small", "span", "strike", "strong", "td", "th", "tt", "u", "var"};
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) set_flag(skip[i], EF_SKIP);
    for (size_t i = 0; i < sizeof block / sizeof block[0]; i++) set_flag(block[i], EF_BLOCK);
    for (size_t i = 0; i < sizeof pcdata / sizeof pcdata[0]; i++) set_flag(pcdata[i], EF_PCDATA);
    set_flag("script", EF_RAW);
    set_flag("style", EF_RAW);
    /* An end tag closes only elements of lower or equal priority. */
    set_prio("div", 150);
    set_prio("td", 160);
    set_prio("th", 160);
    set_prio("tr", 170);
    set_prio("thead", 180);
    set_prio("tbody", 180);
    set_prio("tfoot", 180);
    set_prio("table", 190);
    set_prio("head", 200);
    set_prio("body", 200);
    set_prio("html", 220);
#define FH_CLOSE(o, n) closes[el_of(o)][el_of(n)] = 1;
    FH_CLOSES
#undef FH_CLOSE
    closes[0][0] = 0;
    el_html = el_of("html");
    el_head = el_of("head");
    el_body = el_of("body");
    el_title = el_of("title");
    el_p = el_of("p");
    for (size_t i = 0; i < ESLOTS; i++) ent_slot[i] = -1;
    for (size_t k = 0; k < NENT; k++) {
        size_t n = strlen(entities[k].name);
        size_t i = fnv((const unsigned char *)entities[k].name, n) % ESLOTS;
        while (ent_slot[i] >= 0) i = (i + 1) % ESLOTS;
        ent_slot[i] = (int16_t)k;
    }
}

static int ent_lookup(const unsigned char *s, size_t n)
{
    for (size_t i = fnv(s, n) % ESLOTS;; i = (i + 1) % ESLOTS) {
        int k = ent_slot[i];
        if (k < 0) return -1;
        if (strlen(entities[k].name) == n && memcmp(entities[k].name, s, n) == 0) return k;
    }
}

/* ---- output ----------------------------------------------------------- */

typedef struct tbuf {
    char *p;
    size_t n, cap;
    int oom;
} tbuf;

static int tb_grow(tbuf *b, size_t len)
{
    if (b->oom) return 0;
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->n + len + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

static inline void tb_add(tbuf *b, const void *s, size_t len)
{
    if (b->n + len + 1 > b->cap && !tb_grow(b, len)) return;
    memcpy(b->p + b->n, s, len);
    b->n += len;
}

/* ---- the parser's state ------------------------------------------------ */

enum { LAST_NONE, LAST_TEXT, LAST_PCDATA, LAST_OTHER };

typedef struct open_el {
    uint64_t h;          /* hash of the (lower-case) name */
    uint16_t el;         /* element index, 0 if libxml2 and we know nothing of it */
    unsigned char last;  /* what its last child (not a comment) is: LAST_* */
    unsigned char title; /* a title whose text is the page's title */
} open_el;

typedef struct hp {
    const unsigned char *s;
    size_t n, i;
    open_el stk[FH_MAX_DEPTH];
    size_t depth;
    size_t nskip, ntitle; /* open skipped elements; open titles being kept */
    size_t nbody, nhead;  /* open body and head elements */
    int seen;             /* libxml2's ctxt->html: 3 once a head, 10 once a body opened */
    int discarded;        /* misplaced html/head/body start tags, their end tags ignored */
    int strict;           /* DOCTYPE HTML 4.01 strict: blanks directly in body dropped */
    tbuf body, title;
} hp;

static inline int is_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static inline int is_alpha(unsigned char c) { return (unsigned char)((c | 32) - 'a') < 26; }
static inline int is_digit(unsigned char c) { return (unsigned char)(c - '0') < 10; }
static inline unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static inline unsigned top_el(const hp *p) { return p->depth ? p->stk[p->depth - 1].el : 0; }
static inline int top_is(const hp *p, unsigned e) { return p->depth && top_el(p) == e; }

/* Text reaches the body when no skipped element or title is open. */
static inline tbuf *dest(hp *p)
{
    if (p->ntitle) return &p->title;
    return p->nskip ? NULL : &p->body;
}

static void emit(hp *p, const void *s, size_t n)
{
    tbuf *b = dest(p);
    if (b) tb_add(b, s, n);
}

static void push(hp *p, uint64_t h, unsigned e)
{
    unsigned char f = elements[e].flags;
    if (p->depth) p->stk[p->depth - 1].last = (f & EF_PCDATA) ? LAST_PCDATA : LAST_OTHER;
    if (e == el_head && p->seen < 3) p->seen = 3;
    if (e == el_body && p->seen < 10) p->seen = 10;
    if (p->depth == FH_MAX_DEPTH) {
        /* Too deep to keep: its text flows into the innermost kept one. */
        if ((f & EF_BLOCK) && !p->ntitle && !p->nskip) tb_add(&p->body, "\n", 1);
        return;
    }
    open_el *o = &p->stk[p->depth++];
    o->h = h;
    o->el = (uint16_t)e;
    o->last = LAST_NONE;
    o->title = 0;
    if (e == el_title) {
        /* Kept when nothing hides it, or directly in a head. */
        int parent_head = p->depth >= 2 && p->stk[p->depth - 2].el == el_head;
        if (!p->ntitle && (!p->nskip || (p->nskip == 1 && parent_head))) {
            o->title = 1;
            if (p->title.n) tb_add(&p->title, " ", 1);
            p->ntitle++;
        }
    }
    if (!o->title && (f & EF_BLOCK) && !p->ntitle && !p->nskip) tb_add(&p->body, "\n", 1);
    if (f & EF_SKIP) p->nskip++;
    if (e == el_body) p->nbody++;
    if (e == el_head) p->nhead++;
}

static void pop(hp *p)
{
    open_el *o = &p->stk[--p->depth];
    unsigned char f = elements[o->el].flags;
    if (f & EF_SKIP) p->nskip--;
    if (o->title) p->ntitle--;
    else if ((f & EF_BLOCK) && !p->ntitle && !p->nskip) tb_add(&p->body, "\n", 1);
    if (o->el == el_body) p->nbody--;
    if (o->el == el_head) p->nhead--;
}

static void push_el(hp *p, unsigned e)
{
    push(p, fnv((const unsigned char *)elements[e].name, strlen(elements[e].name)), e);
}

/* libxml2's htmlAutoClose: the start tag e closes open elements. */
static void auto_close(hp *p, unsigned e)
{
    while (p->depth && closes[top_el(p)][e]) pop(p);
}

/* libxml2's htmlCheckImplied: html, then head or body, before tag e. */
static void check_implied(hp *p, unsigned e)
{
    if (e == el_html) return;
    if (p->depth == 0) push_el(p, el_html);
    if (e == el_body || e == el_head) return;
    const char *name = elements[e].name;
    if (p->depth <= 1 && e &&
        (!strcmp(name, "script") || !strcmp(name, "style") || !strcmp(name, "meta") ||
         !strcmp(name, "link") || !strcmp(name, "title") || !strcmp(name, "base"))) {
        if (p->seen >= 3) return;
        push_el(p, el_head);
    } else if (!e || (strcmp(name, "noframes") && strcmp(name, "frame") &&
                      strcmp(name, "frameset"))) {
        if (p->seen >= 10 || p->nbody || p->nhead) return;
        push_el(p, el_body);
    }
}

/* libxml2's htmlCheckParagraph, before text: an implied p where text
 * would land outside any element or directly in html or head. */
static void check_paragraph(hp *p)
{
    if (p->depth && !top_is(p, el_html) && !top_is(p, el_head)) return;
    auto_close(p, el_p);
    check_implied(p, el_p);
    push_el(p, el_p);
}

/* Text s[0..n) of the current element (n > 0), after check_paragraph. */
static void add_text(hp *p, const unsigned char *s, size_t n)
{
    if (p->depth) p->stk[p->depth - 1].last = LAST_TEXT;
    emit(p, s, n);
}

/* ---- tokens ----------------------------------------------------------- */

/* Whether white space followed by the byte at p->i is ignorable
 * (libxml2's areBlanks under HTML_PARSE_NOBLANKS). */
static int ignorable(const hp *p)
{
    if (p->i >= p->n) return 1;
    if (p->s[p->i] != '<') return 0;
    if (!p->depth || top_is(p, el_html) || top_is(p, el_head)) return 1;
    if (p->strict && top_is(p, el_body)) return 1;
    const open_el *o = &p->stk[p->depth - 1];
    switch (o->last) {
    case LAST_NONE: return !(elements[o->el].flags & EF_PCDATA);
    case LAST_OTHER: return 1;
    default: return 0;
    }
}

/* Character data up to '<' or '&': C0 controls other than tab, newline and
 * carriage return are dropped, NUL becomes a space, U+FFFE and U+FFFF and
 * encoded surrogates are dropped (libxml2's IS_CHAR). */
static void char_data(hp *p)
{
    const unsigned char *s = p->s;
    size_t i = p->i, start = i;
    int blank = 1, clean = 1;
    for (; i < p->n; i++) {
        unsigned char c = s[i];
        if (c == '<' || c == '&') break;
        if (c < 0x20) {
            if (!is_blank(c)) clean = 0;
        } else if (c == 0xEF || c == 0xED) {
            /* U+FFFE, U+FFFF or a surrogate: dropped (the slow path). */
            if (i + 2 < p->n && ((c == 0xEF && s[i + 1] == 0xBF && s[i + 2] >= 0xBE) ||
                                 (c == 0xED && s[i + 1] >= 0xA0)))
                clean = 0;
            blank = 0;
        } else if (c != ' ') {
            blank = 0;
        }
    }
    p->i = i;
    if (clean) {
        if (blank && ignorable(p)) return;
        check_paragraph(p);
        add_text(p, s + start, i - start);
        return;
    }
    /* Rare: copy without the dropped characters. */
    unsigned char *tmp = malloc(i - start);
    if (!tmp) {
        p->body.oom = 1;
        return;
    }
    size_t m = 0;
    blank = 1;
    for (size_t k = start; k < i; k++) {
        unsigned char c = s[k];
        if (c == 0) c = ' ';
        else if (c < 0x20 && !is_blank(c)) continue;
        else if (c == 0xEF && k + 2 < i && s[k + 1] == 0xBF && (s[k + 2] == 0xBE || s[k + 2] == 0xBF)) {
            k += 2;
            continue;
        } else if (c == 0xED && k + 2 < i && s[k + 1] >= 0xA0 && s[k + 1] <= 0xBF &&
                   (s[k + 2] & 0xC0) == 0x80) {
            k += 2;
            continue;
        }
        if (!is_blank(c)) blank = 0;
        tmp[m++] = c;
    }
    if (m && !(blank && ignorable(p))) {
        check_paragraph(p);
        add_text(p, tmp, m);
    }
    free(tmp);
}

static size_t utf8_put(unsigned char *o, unsigned v)
{
    if (v < 0x80) { o[0] = (unsigned char)v; return 1; }
    if (v < 0x800) { o[0] = (unsigned char)(0xC0 | v >> 6); o[1] = (unsigned char)(0x80 | (v & 63)); return 2; }
    if (v < 0x10000) {
        o[0] = (unsigned char)(0xE0 | v >> 12); o[1] = (unsigned char)(0x80 | ((v >> 6) & 63));
        o[2] = (unsigned char)(0x80 | (v & 63)); return 3;
    }
    o[0] = (unsigned char)(0xF0 | v >> 18); o[1] = (unsigned char)(0x80 | ((v >> 12) & 63));
    o[2] = (unsigned char)(0x80 | ((v >> 6) & 63)); o[3] = (unsigned char)(0x80 | (v & 63));
    return 4;
}

static int is_xml_char(unsigned v)
{
    return v == 9 || v == 10 || v == 13 || (v >= 0x20 && v <= 0xD7FF) ||
           (v >= 0xE000 && v <= 0xFFFD) || (v >= 0x10000 && v <= 0x10FFFF);
}

/* A character reference at '&' (libxml2's htmlParseReference). */
static void reference(hp *p)
{
    const unsigned char *s = p->s;
    size_t i = p->i + 1, n = p->n;
    unsigned char out[4];
    if (i < n && s[i] == '#') {
        unsigned v = 0;
        int hex = i + 1 < n && (s[i + 1] | 32) == 'x';
        i += hex ? 2 : 1;
        for (; i < n && s[i] != ';'; i++) {
            unsigned d;
            if (is_digit(s[i])) d = s[i] - '0';
            else if (hex && (s[i] | 32) >= 'a' && (s[i] | 32) <= 'f') d = (s[i] | 32) - 'a' + 10;
            else break;
            if (v < 0x110000) v = v * (hex ? 16 : 10) + d;
        }
        if (i < n && s[i] == ';') i++;
        p->i = i;
        if (is_xml_char(v)) {
            check_paragraph(p);
            add_text(p, out, utf8_put(out, v));
        }
        return;
    }
    size_t start = i;
    if (i < n && (is_alpha(s[i]) || s[i] == '_' || s[i] == ':')) {
        for (i++; i < n && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '_' || s[i] == '-' ||
                            s[i] == ':' || s[i] == '.');
             i++) {
        }
    }
    if (i == start || i == n) {
        /* No name (or a name up to the end): '&' alone is text. */
        check_paragraph(p);
        p->i = start;
        add_text(p, (const unsigned char *)"&", 1);
        return;
    }
    int k = s[i] == ';' ? ent_lookup(s + start, i - start) : -1;
    check_paragraph(p);
    if (k >= 0) {
        add_text(p, out, utf8_put(out, entities[k].value));
        p->i = i + 1;
    } else {
        add_text(p, s + p->i, i - p->i); /* '&' and the name, as written */
        p->i = i;
    }
}

/* Length of an HTML name at s (libxml2's htmlParseHTMLName: at most 100
 * bytes), its lower-case hash into *h. */
static size_t html_name(const unsigned char *s, size_t n, uint64_t *h, unsigned *el)
{
    unsigned char loc[100];
    size_t k = 0;
    while (k < n && k < sizeof loc &&
           (is_alpha(s[k]) || is_digit(s[k]) || s[k] == ':' || s[k] == '-' || s[k] == '_' ||
            s[k] == '.')) {
        loc[k] = lower(s[k]);
        k++;
    }
    *h = fnv(loc, k);
    *el = el_lookup(*h, loc, k);
    return k;
}

static size_t skip_blanks(const unsigned char *s, size_t i, size_t n)
{
    while (i < n && is_blank(s[i])) i++;
    return i;
}

/* A start tag at '<' + letter (libxml2's htmlParseStartTag and
 * htmlParseElementInternal). */
static void start_tag(hp *p)
{
    const unsigned char *s = p->s;
    size_t n = p->n, i = p->i + 1;
    uint64_t h;
    unsigned e;
    i += html_name(s + i, n - i, &h, &e);
    auto_close(p, e);
    check_implied(p, e);
    int discard = 0;
    if ((p->depth > 0 && e == el_html) || (p->depth != 1 && e == el_head) ||
        (e == el_body && p->nbody)) {
        discard = 1;
        p->discarded++;
    }
    /* Attributes: names, '=', quoted or bare values; '>' inside quotes. */
    i = skip_blanks(s, i, n);
    while (i < n && s[i] != '>' && !(s[i] == '/' && i + 1 < n && s[i + 1] == '>')) {
        if (is_alpha(s[i]) || s[i] == '_' || s[i] == ':' || s[i] == '.') {
            while (i < n && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == ':' || s[i] == '-' ||
                             s[i] == '_' || s[i] == '.'))
                i++;
            i = skip_blanks(s, i, n);
            if (i < n && s[i] == '=') {
                i = skip_blanks(s, i + 1, n);
                if (i < n && (s[i] == '"' || s[i] == '\'')) {
                    const unsigned char *q = memchr(s + i + 1, s[i], n - i - 1);
                    i = q ? (size_t)(q - s) + 1 : n;
                } else {
                    while (i < n && s[i] != '>' && !is_blank(s[i])) i++;
                }
            }
        } else {
            while (i < n && !is_blank(s[i]) && s[i] != '>' &&
                   !(s[i] == '/' && i + 1 < n && s[i + 1] == '>'))
                i++;
        }
        i = skip_blanks(s, i, n);
    }
    if (!discard) push(p, h, e);
    if (discard) {
        p->i = i < n ? i + 1 : n;
        return;
    }
    if (i + 1 < n && s[i] == '/') { /* "/>" closes any element */
        p->i = i + 2;
        pop(p);
        return;
    }
    if (i >= n) { /* unfinished start tag: the element is dropped, the end */
        p->i = n;
        if (p->depth && p->stk[p->depth - 1].h == h) pop(p);
        return;
    }
    p->i = i + 1;
    if (elements[e].flags & EF_EMPTY) pop(p);
}

/* An end tag at "</" (libxml2's htmlParseEndTag). */
static void end_tag(hp *p)
{
    const unsigned char *s = p->s;
    size_t n = p->n, i = p->i + 2;
    if (i >= n || !(is_alpha(s[i]) || s[i] == '_' || s[i] == ':' || s[i] == '.')) {
        p->i = i; /* "</" is dropped, what follows is text */
        return;
    }
    uint64_t h;
    unsigned e;
    i += html_name(s + i, n - i, &h, &e);
    const unsigned char *gt = memchr(s + i, '>', n - i);
    p->i = gt ? (size_t)(gt - s) + 1 : n;
    if (p->discarded && (e == el_html || e == el_body || e == el_head)) {
        p->discarded--;
        return;
    }
    unsigned prio = elements[e].prio;
    size_t k = p->depth;
    while (k > 0 && p->stk[k - 1].h != h) {
        if (elements[p->stk[k - 1].el].prio > prio) return; /* a misplaced end tag */
        k--;
    }
    if (k == 0) return;
    while (p->depth >= k) pop(p);
}

/* <!--, <!DOCTYPE, <? at p->i. */
static void comment(hp *p)
{
    const unsigned char *s = p->s;
    size_t n = p->n, from = p->i + 4, end = n;
    for (size_t i = from; i + 2 < n; i++) {
        const unsigned char *d = memchr(s + i, '-', n - 2 - i);
        if (!d) break;
        i = (size_t)(d - s);
        if (s[i + 1] == '-' && (s[i + 2] == '>' || (s[i + 2] == '!' && i + 3 < n && s[i + 3] == '>'))) {
            end = i + (s[i + 2] == '>' ? 3 : 4);
            break;
        }
    }
    p->i = end;
}

static void doctype(hp *p)
{
    const unsigned char *s = p->s;
    size_t n = p->n, i = skip_blanks(s, p->i + 9, n);
    while (i < n && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '_' || s[i] == '-' ||
                     s[i] == ':' || s[i] == '.'))
        i++;
    i = skip_blanks(s, i, n);
    if (i + 6 <= n && (s[i] | 32) == 'p' && (s[i + 1] | 32) == 'u' && (s[i + 2] | 32) == 'b' &&
        (s[i + 3] | 32) == 'l' && (s[i + 4] | 32) == 'i' && (s[i + 5] | 32) == 'c') {
        i = skip_blanks(s, i + 6, n);
        if (i < n && (s[i] == '"' || s[i] == '\'')) {
            const unsigned char *q = memchr(s + i + 1, s[i], n - i - 1);
            if (q) {
                static const char *const strict[] = {"-//W3C//DTD HTML 4.01//EN",
                                                     "-//W3C//DTD HTML 4//EN"};
                size_t len = (size_t)(q - s) - i - 1;
                for (int k = 0; k < 2; k++)
                    if (len == strlen(strict[k]) && strncasecmp((const char *)s + i + 1, strict[k], len) == 0)
                        p->strict = 1;
                i = (size_t)(q - s) + 1;
            }
        }
    }
    const unsigned char *gt = memchr(s + i, '>', n - i);
    p->i = gt ? (size_t)(gt - s) + 1 : n;
}

static void pi(hp *p)
{
    const unsigned char *s = p->s;
    size_t n = p->n, i = p->i + 2;
    if (i >= n || !(is_alpha(s[i]) || s[i] == '_' || s[i] == ':')) {
        p->i = i; /* not a PI: "<?" dropped */
        return;
    }
    const unsigned char *gt = memchr(s + i, '>', n - i);
    p->i = gt ? (size_t)(gt - s) + 1 : n;
    if (gt && p->depth) p->stk[p->depth - 1].last = LAST_OTHER;
}

/* Raw text of script or style: up to "</" and the element's name. */
static void raw_text(hp *p)
{
    const unsigned char *s = p->s;
    size_t n = p->n, i = p->i;
    const char *name = elements[top_el(p)].name;
    size_t len = strlen(name);
    for (;;) {
        const unsigned char *lt = memchr(s + i, '<', n - i);
        if (!lt) {
            i = n;
            break;
        }
        i = (size_t)(lt - s);
        if (i + 2 + len <= n && s[i + 1] == '/' && strncasecmp((const char *)s + i + 2, name, len) == 0)
            break;
        i++;
    }
    if (i > p->i) {
        emit(p, s + p->i, i - p->i); /* inside a kept title only */
        p->stk[p->depth - 1].last = LAST_OTHER;
    }
    p->i = i;
}

static void parse(hp *p)
{
    const unsigned char *s = p->s;
    size_t n = p->n;
    while (p->i < n) {
        if (p->depth && (elements[top_el(p)].flags & EF_RAW)) {
            raw_text(p);
            if (p->i >= n) break;
            end_tag(p);
            continue;
        }
        unsigned char c = s[p->i];
        if (c == '&') {
            reference(p);
            continue;
        }
        if (c != '<') {
            char_data(p);
            continue;
        }
        unsigned char d = p->i + 1 < n ? s[p->i + 1] : 0;
        if (d == '/') {
            end_tag(p);
        } else if (is_alpha(d)) {
            start_tag(p);
        } else if (d == '!' && p->i + 3 < n && s[p->i + 2] == '-' && s[p->i + 3] == '-') {
            comment(p);
        } else if (d == '!' && p->i + 9 <= n && strncasecmp((const char *)s + p->i + 2, "doctype", 7) == 0) {
            doctype(p);
        } else if (d == '?') {
            pi(p);
        } else {
            /* A lone '<' is text (without an implied paragraph). */
            if (p->depth) add_text(p, s + p->i, 1);
            p->i++;
        }
    }
    while (p->depth) pop(p);
}

int nd_html_extract(nd_html_text *out, const char *html, size_t len)
{
    ND_RETURN_IF(!out, ND_EINVAL, "nd_html_extract: NULL output");
    memset(out, 0, sizeof *out);
    ND_RETURN_IF(!html && len, ND_EINVAL, "nd_html_extract: NULL input of length %zu", len);
    ND_RETURN_IF(len > ND_MAX_DOC_BYTES, ND_ELIMIT, "HTML document of %zu bytes (limit %u)", len,
                 ND_MAX_DOC_BYTES);
    pthread_once(&init_once, init_tables);
    hp *p = calloc(1, sizeof *p);
    ND_RETURN_IF(!p, ND_ENOMEM, "HTML: out of memory");
    p->s = (const unsigned char *)html;
    p->n = len;
    /* The body is rarely longer than the page: one allocation mostly. */
    tb_grow(&p->body, len / 2 + 64);
    tb_grow(&p->title, 64);
    /* A UTF-8 byte order mark is not text (libxml2 skips it). */
    if (len >= 3 && memcmp(html, "\xEF\xBB\xBF", 3) == 0) p->i = 3;
    if (len) parse(p);
    int rc = ND_OK;
    if (p->body.oom || p->title.oom) {
        free(p->body.p);
        free(p->title.p);
        rc = nd_err_set(ND_ENOMEM, "HTML: out of memory");
    } else {
        p->body.p[p->body.n] = '\0';
        p->title.p[p->title.n] = '\0';
        out->body = p->body.p;
        out->body_len = p->body.n;
        out->title = p->title.p;
        out->title_len = p->title.n;
    }
    free(p);
    return rc;
}

void nd_html_text_dispose(nd_html_text *t)
{
    if (!t) return;
    free(t->body);
    free(t->title);
    memset(t, 0, sizeof *t);
}
