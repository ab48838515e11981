/*
 * in_json_fast.cpp — simdjson behind in_json_fast.h (its only user).
 *
 * simdjson's DOM parser rather than its on-demand one: the DOM parser
 * validates the whole document (on-demand checks only what is visited,
 * so a broken member the reader ignores could pass), and the reader must
 * refuse every line jansson refuses. For the lines of a corpus — one
 * long string and a few short members — both cost the same: a SIMD scan
 * of the line and one copy of the text with its escapes decoded.
 *
 * After the parse, a walk over the members (strings are not scanned, so
 * it costs nothing for a text-heavy line) declines what jansson would
 * refuse although it is valid JSON: integers beyond int64 (simdjson keeps
 * those up to 2^64 - 1 as unsigned) and member names holding a NUL byte
 * (jansson's JSON_ALLOW_NUL covers values only).
 *
 * Nothing throws across the C interface: simdjson reports errors as
 * codes and allocates with nothrow; a stray exception declines the line.
 */
#include "in_json_fast.h"

#include <cstring>
#include <string_view>
#include <unordered_set>
#include <new>

#include <simdjson.h>

static_assert(simdjson::SIMDJSON_PADDING <= IN_JSON_PADDING,
              "in_json_fast.h promises less padding than simdjson needs");

struct in_json_fast {
    simdjson::dom::parser parser{IN_JSON_FAST_MAX};
};

using simdjson::dom::element;
using simdjson::dom::element_type;

/* Does an object name a member twice? jansson refuses such an object
 * (JSON_REJECT_DUPLICATES), so the fast parser must not take it. A
 * record has a few members: pairs are compared, then a set past 16. */
static bool has_duplicate_keys(simdjson::dom::object o)
{
    std::string_view seen[16];
    size_t n = 0;
    std::unordered_set<std::string_view> many; /* allocates only when used */
    for (auto m : o) {
        if (n < 16) {
            for (size_t i = 0; i < n; i++)
                if (seen[i] == m.key) return true;
            seen[n++] = m.key;
            if (n == 16) many.insert(seen, seen + n);
        } else if (!many.insert(m.key).second) {
            return true;
        }
    }
    return false;
}

/* Does jansson read this value (and everything inside) as simdjson did? */
static bool jansson_agrees(element e)
{
    switch (e.type()) {
    case element_type::UINT64: return false;
    case element_type::ARRAY: {
        simdjson::dom::array a;
        if (e.get_array().get(a)) return false;
        for (element v : a)
            if (!jansson_agrees(v)) return false;
        return true;
    }
    case element_type::OBJECT: {
        simdjson::dom::object o;
        if (e.get_object().get(o) || has_duplicate_keys(o)) return false;
        for (auto m : o) {
            if (std::memchr(m.key.data(), '\0', m.key.size())) return false;
            if (!jansson_agrees(m.value)) return false;
        }
        return true;
    }
    default: return true;
    }
}

static void fill(in_json_field *f, element v)
{
    switch (v.type()) {
    case element_type::STRING: {
        std::string_view s;
        if (v.get_string().get(s)) break;
        f->kind = IN_JSON_STRING;
        f->str = s.data();
        f->len = s.size();
        break;
    }
    case element_type::INT64:
        if (v.get_int64().get(f->i)) break;
        f->kind = IN_JSON_INT;
        f->num = (double)f->i;
        break;
    case element_type::DOUBLE:
        if (v.get_double().get(f->num)) break;
        f->kind = IN_JSON_DOUBLE;
        break;
    case element_type::BOOL: {
        bool b;
        if (v.get_bool().get(b)) break;
        f->kind = b ? IN_JSON_TRUE : IN_JSON_FALSE;
        break;
    }
    case element_type::NULL_VALUE: f->kind = IN_JSON_NULL; break;
    case element_type::ARRAY: f->kind = IN_JSON_ARRAY; break;
    case element_type::OBJECT: f->kind = IN_JSON_OBJECT; break;
    case element_type::UINT64: break; /* declined before */
    }
}

extern "C" int in_json_fast_new(in_json_fast **out)
{
    *out = new (std::nothrow) in_json_fast;
    return *out ? 0 : -1;
}

extern "C" void in_json_fast_free(in_json_fast *p) { delete p; }

extern "C" int in_json_fast_object(in_json_fast *p, const char *line, size_t len,
                                   in_json_field *fields, size_t n)
{
    try {
        element root;
        if (len > IN_JSON_FAST_MAX || p->parser.parse(line, len, false).get(root)) return 0;
        simdjson::dom::object obj;
        if (root.get_object().get(obj)) return 0; /* not an object */
        if (has_duplicate_keys(obj)) return 0;
        for (size_t i = 0; i < n; i++) fields[i].kind = IN_JSON_ABSENT;
        for (auto m : obj) {
            if (std::memchr(m.key.data(), '\0', m.key.size())) return 0;
            if (!jansson_agrees(m.value)) return 0;
            for (size_t i = 0; i < n; i++)
                if (fields[i].name && m.key == fields[i].name) fill(&fields[i], m.value);
        }
        return 1;
    } catch (...) {
        return 0;
    }
}
