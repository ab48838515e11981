/*
 * fp_html.c — HTML -> visible text, through libxml2's forgiving HTML
 * parser. The only file that includes libxml2.
 *
 * The parser recovers from any malformed input (unclosed tags, stray
 * bytes) and never touches the network; its error reports are switched
 * off so the library never prints. The walk keeps text nodes except under
 * script, style, noscript, template, svg, math, iframe, object, select and
 * head (whose <title> becomes the title); block elements end a line, so
 * words of neighbouring blocks never fuse. Entities are decoded by the
 * parser; input is taken as UTF-8 unless the document declares otherwise.
 * The walk is iterative, so deeply nested documents cannot exhaust the
 * stack (libxml2 itself caps the depth at 256 without HTML_PARSE_HUGE).
 *
 * Callers: fp_text.c (ND_FP_HTML) and the public API (nd_html_extract).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "fp_internal.h"
#include "nd_error.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

static void init_libxml(void)
{
    xmlInitParser();
}

/* Whether name is one of list (lower-case ASCII), ignoring ASCII case.
 * It runs for every element and on every climb out of one, so the first
 * letter is compared before calling strcasecmp. */
static int name_in(const char *name, const char *const *list, size_t n)
{
    unsigned char c0 = (unsigned char)name[0];
    if (c0 >= 'A' && c0 <= 'Z') c0 = (unsigned char)(c0 + 32);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)list[i][0] == c0 && strcasecmp(name, list[i]) == 0) return 1;
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
    int oom;
} tbuf;

static void tb_add(tbuf *b, const char *s, size_t len)
{
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + len + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

/* Text of the subtree under n (text nodes only) appended to b. */
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
                xmlChar *t = xmlNodeGetContent(n);
                if (t) {
                    if (title->n) tb_add(title, " ", 1);
                    tb_add(title, (const char *)t, strlen((const char *)t));
                    xmlFree(t);
                }
            } else if (strcasecmp(name, "head") == 0) {
                /* Only its title counts: look for it inside. */
                for (xmlNode *c = n->children; c; c = c->next)
                    if (c->type == XML_ELEMENT_NODE && c->name &&
                        strcasecmp((const char *)c->name, "title") == 0) {
                        xmlChar *t = xmlNodeGetContent(c);
                        if (t) {
                            if (title->n) tb_add(title, " ", 1);
                            tb_add(title, (const char *)t, strlen((const char *)t));
                            xmlFree(t);
                        }
                    }
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
        /* Next sibling, or climb until one exists. */
        while (n && n != root && !n->next) {
            n = n->parent;
            if (n && n->type == XML_ELEMENT_NODE && n->name && block_element((const char *)n->name))
                tb_add(body, "\n", 1);
        }
        if (!n || n == root) break;
        n = n->next;
    }
}

int nd_html_extract(nd_html_text *out, const char *html, size_t len)
{
    tbuf body = {0}, title = {0};
    ND_RETURN_IF(!out, ND_EINVAL, "nd_html_extract: NULL output");
    memset(out, 0, sizeof *out);
    ND_RETURN_IF(!html && len, ND_EINVAL, "nd_html_extract: NULL input of length %zu", len);
    ND_RETURN_IF(len > ND_MAX_DOC_BYTES, ND_ELIMIT, "HTML document of %zu bytes (limit %u)", len,
                 ND_MAX_DOC_BYTES);
    pthread_once(&init_once, init_libxml);
    tb_add(&body, "", 0);
    tb_add(&title, "", 0);
    if (len) {
        /* Errors go to a no-op handler for this thread only. */
        xmlSetGenericErrorFunc(NULL, quiet);
        htmlDocPtr doc = htmlReadMemory(html, (int)len, NULL, "UTF-8",
                                        HTML_PARSE_RECOVER | HTML_PARSE_NOERROR |
                                            HTML_PARSE_NOWARNING | HTML_PARSE_NONET |
                                            HTML_PARSE_NOBLANKS);
        if (doc) {
            collect((xmlNode *)doc, &body, &title);
            xmlFreeDoc(doc);
        }
    }
    if (body.oom || title.oom) {
        free(body.p);
        free(title.p);
        return nd_err_set(ND_ENOMEM, "HTML: out of memory");
    }
    out->body = body.p;
    out->body_len = body.n;
    out->title = title.p;
    out->title_len = title.n;
    return ND_OK;
}

void nd_html_text_dispose(nd_html_text *t)
{
    if (!t) return;
    free(t->body);
    free(t->title);
    memset(t, 0, sizeof *t);
}
