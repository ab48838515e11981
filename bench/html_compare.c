/*
 * html_compare.c — the HTML extractor (nd_html_extract, a streaming
 * tokenizer) against the extraction neardup did through libxml2's tree
 * until fingerprint version 1's HTML path was rewritten: the reference,
 * kept here and only here (the library no longer links libxml2).
 *
 *   html_compare --compare LIST      features of each page of LIST (one
 *                                    path a line) by both extractors;
 *                                    prints each differing page and the
 *                                    share of pages with equal features
 *   html_compare --dump FILE         both extractions of one page, runs of
 *                                    white space collapsed (to diff them)
 *   html_compare --speed LIST [--runs N]
 *                                    MB/s of HTML -> text alone: libxml2's
 *                                    tree (the reference), libxml2's SAX
 *                                    parser without a tree, nd_html_extract
 *   html_compare --tables < NAMES    writes engine/text/fp_html_tables.h:
 *                                    libxml2's element facts (known, empty,
 *                                    which start tag closes which open
 *                                    element) and its HTML 4 entities, of
 *                                    the candidate entity NAMES on stdin
 *                                    (bench/html_pages.sh shows how)
 *
 * Features are compared as sorted multisets of (hash, weight) with the
 * default options: body weight 1, title weight 2, as fp_text.c forms them.
 * Only this file includes libxml2 (tests/check_modules.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <neardup.h>

static void die(const char *what)
{
    fprintf(stderr, "html_compare: %s\n", what);
    exit(2);
}

/* ---- the reference: libxml2's tree, walked as fp_html.c walked it ---- */

static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

static int name_in(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(name, list[i]) == 0) return 1;
    return 0;
}

static int skip_element(const char *name)
{
    static const char *const skip[] = {"script", "style", "noscript", "template", "svg",
                                       "math",   "iframe", "object", "select", "head"};
    return name_in(name, skip, sizeof skip / sizeof skip[0]);
}

static int block_element(const char *name)
{
    static const char *const block[] = {
        "p",  "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3",
        "h4", "h5",  "h6", "section", "article", "header", "footer", "nav", "aside", "pre",
        "blockquote", "dd", "dt", "dl", "form", "hr", "main", "figure", "figcaption", "title"};
    return name_in(name, block, sizeof block / sizeof block[0]);
}

typedef struct tbuf {
    char *p;
    size_t n, cap;
} tbuf;

static void tb_add(tbuf *b, const char *s, size_t len)
{
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + len + 1) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) die("out of memory");
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void add_title(tbuf *title, xmlNode *n)
{
    xmlChar *t = xmlNodeGetContent(n);
    if (t) {
        if (title->n) tb_add(title, " ", 1);
        tb_add(title, (const char *)t, strlen((const char *)t));
        xmlFree(t);
    }
}

static void collect(xmlNode *root, tbuf *body, tbuf *title)
{
    xmlNode *n = root;
    while (n) {
        int descend = 0;
        if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
            const char *c = (const char *)n->content;
            if (c) tb_add(body, c, strlen(c));
        } else if (n->type == XML_ELEMENT_NODE && n->name) {
            const char *name = (const char *)n->name;
            if (strcasecmp(name, "title") == 0) {
                add_title(title, n);
            } else if (strcasecmp(name, "head") == 0) {
                for (xmlNode *c = n->children; c; c = c->next)
                    if (c->type == XML_ELEMENT_NODE && c->name &&
                        strcasecmp((const char *)c->name, "title") == 0)
                        add_title(title, c);
            } else if (!skip_element(name)) {
                if (block_element(name)) tb_add(body, "\n", 1);
                descend = n->children != NULL;
            }
        } else if (n->type == XML_DOCUMENT_NODE || n->type == XML_HTML_DOCUMENT_NODE) {
            descend = n->children != NULL;
        }
        if (descend) {
            n = n->children;
            continue;
        }
        while (n && n != root && !n->next) {
            n = n->parent;
            if (n && n->type == XML_ELEMENT_NODE && n->name && block_element((const char *)n->name))
                tb_add(body, "\n", 1);
        }
        if (!n || n == root) break;
        n = n->next;
    }
}

static void ref_extract(const char *html, size_t len, tbuf *body, tbuf *title)
{
    tb_add(body, "", 0);
    tb_add(title, "", 0);
    if (!len) return;
    xmlSetGenericErrorFunc(NULL, quiet);
    htmlDocPtr doc = htmlReadMemory(html, (int)len, NULL, "UTF-8",
                                    HTML_PARSE_RECOVER | HTML_PARSE_NOERROR |
                                        HTML_PARSE_NOWARNING | HTML_PARSE_NONET |
                                        HTML_PARSE_NOBLANKS);
    if (doc) {
        collect((xmlNode *)doc, body, title);
        xmlFreeDoc(doc);
    }
}

/* ---- libxml2's SAX parser without a tree (the measured alternative) --- */

typedef struct sax_state {
    tbuf body;
    int skip;
} sax_state;

static void sax_start(void *ctx, const xmlChar *name, const xmlChar **atts)
{
    sax_state *s = ctx;
    (void)atts;
    if (s->skip || skip_element((const char *)name)) s->skip++;
    else if (block_element((const char *)name)) tb_add(&s->body, "\n", 1);
}

static void sax_end(void *ctx, const xmlChar *name)
{
    sax_state *s = ctx;
    if (s->skip) s->skip--;
    else if (block_element((const char *)name)) tb_add(&s->body, "\n", 1);
}

static void sax_text(void *ctx, const xmlChar *ch, int len)
{
    sax_state *s = ctx;
    if (!s->skip) tb_add(&s->body, (const char *)ch, (size_t)len);
}

static void sax_extract(const char *html, size_t len, tbuf *body)
{
    htmlSAXHandler h;
    memset(&h, 0, sizeof h);
    h.startElement = sax_start;
    h.endElement = sax_end;
    h.characters = sax_text;
    h.cdataBlock = sax_text;
    sax_state s = {.body = *body};
    xmlSetGenericErrorFunc(NULL, quiet);
    htmlParserCtxtPtr ctxt = htmlCreatePushParserCtxt(&h, &s, NULL, 0, NULL,
                                                      XML_CHAR_ENCODING_UTF8);
    if (!ctxt) die("no SAX context");
    htmlCtxtUseOptions(ctxt, HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                 HTML_PARSE_NONET | HTML_PARSE_NOBLANKS);
    htmlParseChunk(ctxt, html, (int)len, 1);
    htmlFreeParserCtxt(ctxt);
    *body = s.body;
}

/* ---- pages ------------------------------------------------------------ */

typedef struct page {
    char *path, *p;
    size_t n;
} page;

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *p = malloc(cap);
    size_t r;
    while (p && (r = fread(p + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) p = realloc(p, cap *= 2);
    }
    fclose(f);
    if (!p) die("out of memory");
    *n = len;
    return p;
}

static page *load_list(const char *list, size_t *count, size_t *bytes)
{
    FILE *f = fopen(list, "r");
    if (!f) die("cannot open the page list");
    page *v = NULL;
    size_t n = 0, cap = 0;
    char line[4096];
    *bytes = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0]) continue;
        size_t len;
        char *p = read_all(line, &len);
        if (!p || len == 0 || len > ND_MAX_DOC_BYTES) {
            free(p);
            continue;
        }
        if (n == cap) v = realloc(v, (cap = cap ? cap * 2 : 1024) * sizeof *v);
        if (!v) die("out of memory");
        v[n++] = (page){strdup(line), p, len};
        *bytes += len;
    }
    fclose(f);
    *count = n;
    return v;
}

/* ---- features --------------------------------------------------------- */

typedef struct feat {
    uint64_t h;
    int32_t w;
} feat;

typedef struct fvec {
    feat *f;
    size_t n, cap;
    int32_t weight;
} fvec;

static void on_feat(uint64_t h, int32_t w, void *payload)
{
    fvec *v = payload;
    if (v->n == v->cap) v->f = realloc(v->f, (v->cap = v->cap ? v->cap * 2 : 256) * sizeof *v->f);
    if (!v->f) die("out of memory");
    v->f[v->n++] = (feat){h, w * v->weight};
}

static int cmp_feat(const void *a, const void *b)
{
    const feat *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return (x->w > y->w) - (x->w < y->w);
}

static void features_of(fvec *v, const char *body, size_t bn, const char *title, size_t tn)
{
    v->n = 0;
    v->weight = 1;
    if (nd_features(body, bn, NULL, on_feat, v) != ND_OK) die(nd_errmsg());
    v->weight = 2;
    if (tn && nd_features(title, tn, NULL, on_feat, v) != ND_OK) die(nd_errmsg());
    qsort(v->f, v->n, sizeof *v->f, cmp_feat);
}

static int compare(const char *list)
{
    size_t n, bytes, same = 0;
    page *pg = load_list(list, &n, &bytes);
    fvec a = {0}, b = {0};
    for (size_t i = 0; i < n; i++) {
        tbuf rb = {0}, rt = {0};
        ref_extract(pg[i].p, pg[i].n, &rb, &rt);
        features_of(&a, rb.p, rb.n, rt.p, rt.n);
        nd_html_text t;
        if (nd_html_extract(&t, pg[i].p, pg[i].n) != ND_OK) die(nd_errmsg());
        features_of(&b, t.body, t.body_len, t.title, t.title_len);
        int eq = a.n == b.n;
        for (size_t k = 0; eq && k < a.n; k++) eq = a.f[k].h == b.f[k].h && a.f[k].w == b.f[k].w;
        if (eq) same++;
        else printf("DIFF %s features %zu %zu\n", pg[i].path, a.n, b.n);
        nd_html_text_dispose(&t);
        free(rb.p);
        free(rt.p);
        free(pg[i].p);
        free(pg[i].path);
    }
    printf("pages %zu, %.1f MB; equal features %zu (%.2f%%)\n", n, (double)bytes / 1e6, same,
           n ? 100.0 * (double)same / (double)n : 0.0);
    free(a.f);
    free(b.f);
    free(pg);
    return 0;
}

static void put_collapsed(const char *tag, const char *s, size_t n)
{
    printf("%s:", tag);
    int sp = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            if (!sp) putchar('\n');
            sp = 1;
        } else {
            putchar(c);
            sp = 0;
        }
    }
    putchar('\n');
}

static int dump(const char *path, int which)
{
    size_t n;
    char *p = read_all(path, &n);
    if (!p) die("cannot read the page");
    if (which == 0) {
        tbuf rb = {0}, rt = {0};
        ref_extract(p, n, &rb, &rt);
        put_collapsed("TITLE", rt.p, rt.n);
        put_collapsed("BODY", rb.p, rb.n);
        free(rb.p);
        free(rt.p);
    } else {
        nd_html_text t;
        if (nd_html_extract(&t, p, n) != ND_OK) die(nd_errmsg());
        put_collapsed("TITLE", t.title, t.title_len);
        put_collapsed("BODY", t.body, t.body_len);
        nd_html_text_dispose(&t);
    }
    free(p);
    return 0;
}

/* ---- speed ------------------------------------------------------------ */

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int speed(const char *list, int runs)
{
    size_t n, bytes;
    page *pg = load_list(list, &n, &bytes);
    static const char *const names[] = {"libxml2 tree", "libxml2 SAX", "nd_html_extract"};
    printf("%zu pages, %.1f MB; MB/s of HTML per CPU-second, median of %d runs\n", n,
           (double)bytes / 1e6, runs);
    double *v = malloc((size_t)runs * sizeof *v);
    if (!v) die("out of memory");
    for (int m = 0; m < 3; m++) {
        for (int r = 0; r < runs; r++) {
            double t0 = cpu_s();
            for (size_t i = 0; i < n; i++) {
                tbuf b = {0}, t = {0};
                if (m == 0) ref_extract(pg[i].p, pg[i].n, &b, &t);
                else if (m == 1) sax_extract(pg[i].p, pg[i].n, &b);
                else {
                    nd_html_text x;
                    if (nd_html_extract(&x, pg[i].p, pg[i].n) != ND_OK) die(nd_errmsg());
                    nd_html_text_dispose(&x);
                }
                free(b.p);
                free(t.p);
            }
            v[r] = (double)bytes / 1e6 / (cpu_s() - t0);
        }
        qsort(v, (size_t)runs, sizeof *v, cmp_double);
        printf("%-16s %8.1f MB/s (min %.1f, max %.1f)\n", names[m], v[runs / 2], v[0],
               v[runs - 1]);
    }
    free(v);
    for (size_t i = 0; i < n; i++) {
        free(pg[i].p);
        free(pg[i].path);
    }
    free(pg);
    return 0;
}

/* ---- tables ----------------------------------------------------------- */

/* Candidates: HTML 4 and HTML 5 element names; libxml2 knows some. The
 * extractor's own lists (blocks, skipped elements) add names it needs. */
static const char *const cand[] = {
    "a", "abbr", "acronym", "address", "applet", "area", "article", "aside", "audio", "b",
    "base", "basefont", "bdi", "bdo", "big", "blockquote", "body", "br", "button", "canvas",
    "caption", "center", "cite", "code", "col", "colgroup", "data", "datalist", "dd", "del",
    "details", "dfn", "dialog", "dir", "div", "dl", "dt", "em", "embed", "fieldset",
    "figcaption", "figure", "font", "footer", "form", "frame", "frameset", "h1", "h2", "h3",
    "h4", "h5", "h6", "head", "header", "hgroup", "hr", "html", "i", "iframe", "img", "input",
    "ins", "isindex", "kbd", "label", "legend", "li", "link", "listing", "main", "map", "mark",
    "math", "menu", "meta", "meter", "nav", "nobr", "noembed", "noframes", "noscript",
    "object", "ol", "optgroup", "option", "output", "p", "param", "picture", "plaintext",
    "pre", "progress", "q", "rb", "rp", "rt", "ruby", "s", "samp", "script", "section",
    "select", "small", "source", "span", "strike", "strong", "style", "sub", "summary", "sup",
    "svg", "table", "tbody", "td", "template", "textarea", "tfoot", "th", "thead", "time",
    "title", "tr", "track", "tt", "u", "ul", "var", "video", "wbr", "xmp"};
#define NCAND (sizeof cand / sizeof cand[0])

/* Whether a start tag new closes an open old: distinct names through the
 * public htmlAutoCloseTag; a name closing itself by parsing <x>a<x>b. */
static int closes(const char *oldn, const char *newn)
{
    if (strcmp(oldn, newn) != 0) {
        htmlDocPtr doc = htmlNewDocNoDtD(NULL, NULL);
        xmlNodePtr e = xmlNewNode(NULL, (const xmlChar *)newn);
        int r = htmlAutoCloseTag(doc, (const xmlChar *)oldn, e);
        xmlFreeNode(e);
        xmlFreeDoc(doc);
        return r;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "<html><body><div><%s>a<%s>b</div></body></html>", oldn, oldn);
    htmlDocPtr d = htmlReadMemory(buf, (int)strlen(buf), NULL, "UTF-8",
                                  HTML_PARSE_RECOVER | HTML_PARSE_NOERROR |
                                      HTML_PARSE_NOWARNING);
    int sib = 0;
    xmlNodePtr r = d ? xmlDocGetRootElement(d) : NULL, b = r ? r->children : NULL;
    while (b && (!b->name || strcmp((const char *)b->name, "body"))) b = b->next;
    xmlNodePtr div = b ? b->children : NULL, x = div ? div->children : NULL;
    if (x && x->next && x->next->name && strcmp((const char *)x->next->name, oldn) == 0) sib = 1;
    xmlFreeDoc(d);
    return sib;
}

static int tables(void)
{
    xmlSetGenericErrorFunc(NULL, quiet);
    printf("/* fp_html_tables.h — generated by `bench/html_pages.sh --tables` (html_compare\n"
           " * --tables, from libxml2 %s's public API): what libxml2's HTML parser knows\n"
           " * of elements and entities, so that fp_html.c builds the same element\n"
           " * nesting without it. Do not edit. */\n\n",
           LIBXML_DOTTED_VERSION);
    printf("/* Elements: name, known to libxml2, empty (no content, no end tag). */\n");
    printf("#define FH_ELEMENTS \\\n");
    for (size_t i = 0; i < NCAND; i++) {
        const htmlElemDesc *d = htmlTagLookup((const xmlChar *)cand[i]);
        printf("    FH_EL(\"%s\", %d, %d) \\\n", cand[i], d != NULL, d ? d->empty : 0);
    }
    printf("\n/* Start tag NEW closes an open OLD: FH_CLOSE(OLD, NEW). */\n");
    printf("#define FH_CLOSES \\\n");
    for (size_t i = 0; i < NCAND; i++)
        for (size_t j = 0; j < NCAND; j++)
            if (closes(cand[i], cand[j]))
                printf("    FH_CLOSE(\"%s\", \"%s\") \\\n", cand[i], cand[j]);
    printf("\n/* Named character references (HTML 4, as libxml2 decodes them). */\n");
    printf("#define FH_ENTITIES \\\n");
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n;")] = '\0';
        const htmlEntityDesc *e = line[0] ? htmlEntityLookup((const xmlChar *)line) : NULL;
        if (e && strcmp(e->name, line) == 0) printf("    FH_ENT(\"%s\", %u) \\\n", e->name, e->value);
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    xmlInitParser();
    if (argc == 2 && strcmp(argv[1], "--tables") == 0) return tables();
    if (argc == 3 && strcmp(argv[1], "--compare") == 0) return compare(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--dump") == 0) return dump(argv[2], 0);
    if (argc == 3 && strcmp(argv[1], "--dump-new") == 0) return dump(argv[2], 1);
    if ((argc == 3 || argc == 5) && strcmp(argv[1], "--speed") == 0)
        return speed(argv[2], argc == 5 ? atoi(argv[4]) : 5);
    fprintf(stderr, "usage: html_compare --compare LIST | --dump FILE | --dump-new FILE |\n"
                    "       --speed LIST [--runs N] | --tables < ENTITY-NAMES\n");
    return 2;
}
