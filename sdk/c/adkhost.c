/*
 * adkhost.c: the exports every C guest needs (ABI.md §2, §3) and the
 * helpers declared in adkhost.h. Link it into the guest.
 *
 * adkhost_alloc and adkhost_free are malloc and free. The host calls
 * adkhost_alloc re-entrantly from inside a host function; wasi-libc's
 * malloc allows that (nothing of malloc is on the stack at that point).
 */
#include "adkhost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The version marker: never called, its presence is the declaration. */
void adkhost_abi_version_1(void) {}

uint32_t adkhost_alloc(uint32_t size) {
  /* Zero-size requests still get a distinct block. */
  return (uint32_t)(uintptr_t)malloc(size ? size : 1);
}

void adkhost_free(uint32_t ptr, uint32_t size) {
  (void)size;
  free((void *)(uintptr_t)ptr);
}

uint64_t adkhost_output(const char *msg, size_t len) {
  if (len == 0) {
    return ADKHOST_NOTHING;
  }
  char *p = malloc(len);
  if (p == NULL) {
    abort(); /* a trap: the host discards the instance and fails the call */
  }
  memcpy(p, msg, len);
  return adkhost_pack(p, (uint32_t)len);
}

uint64_t adkhost_output_str(const char *msg) {
  return adkhost_output(msg, strlen(msg));
}

int32_t adkhost_state_set_str(const char *key, const char *json) {
  return adkhost_state_set(key, (uint32_t)strlen(key), json, (uint32_t)strlen(json));
}

int32_t adkhost_log_str(int32_t level, const char *msg) {
  return adkhost_log(level, msg, (uint32_t)strlen(msg));
}

int32_t adkhost_memory_search_str(const char *query, char **ret_ptr, uint32_t *ret_len) {
  return adkhost_memory_search(query, (uint32_t)strlen(query), ret_ptr, ret_len);
}

uint64_t adkhost_output_error(const char *msg) {
  adkhost_writer w = {0};
  adkhost_w_raw_str(&w, "{\"abiVersion\":1,\"error\":");
  adkhost_w_string_str(&w, msg);
  adkhost_w_raw(&w, "}", 1);
  return adkhost_w_output(&w);
}

/* ---- JSON reading ---------------------------------------------------------
 *
 * Every scanner takes the bytes [p, end) and returns where what it read
 * ends, or NULL when the bytes are not what the grammar (RFC 8259) allows
 * there. Nothing reads at or past end.
 */

static inline int is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* ws skips spaces; the host sends none, so the first test usually ends it. */
static inline const char *ws(const char *p, const char *end) {
  while (p < end && is_ws(*p)) p++;
  return p;
}

static inline int hexval(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 0x20;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* hex4 reads 4 hex digits at p (the caller checked there are 4 bytes). */
static inline int32_t hex4(const char *p) {
  int32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int h = hexval((unsigned char)p[i]);
    if (h < 0) return -1;
    v = v << 4 | h;
  }
  return v;
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* special8 flags the bytes among the 8 at p that a string scan must look
 * at: a quote, a backslash, a control character (word at a time). The
 * lowest flag is exact (a false one can only follow a true one), and the
 * lowest byte comes first in memory: wasm is little-endian. */
static inline uint64_t special8(const char *p) {
  uint64_t v, q, b;
  memcpy(&v, p, 8);
  q = v ^ (ONES * '"');
  b = v ^ (ONES * '\\');
  return (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((v - ONES * 0x20) & ~v)) & HIGHS;
}

static inline int special(unsigned char c) { return c == '"' || c == '\\' || c < 0x20; }

/* scan_string: p at the opening quote; returns just past the closing one.
 * Inlined: it is the inner loop of everything, and a call costs a guest
 * (instrumented by the host) more than a short string does. */
static inline __attribute__((always_inline)) const char *scan_string(const char *p, const char *end) {
  p++;
  for (;;) {
    if (end - p >= 8) {
      uint64_t m = special8(p);
      if (!m) {
        p += 8;
        continue;
      }
      p += __builtin_ctzll(m) >> 3;
    } else {
      while (p < end && !special((unsigned char)*p)) p++;
      if (p >= end) return NULL;
    }
    unsigned char c = (unsigned char)*p;
    if (c == '"') return p + 1;
    if (c != '\\') return NULL; /* a control character */
    if (end - p < 2) return NULL;
    switch (p[1]) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        p += 2;
        continue;
      case 'u':
        if (end - p < 6 || hex4(p + 2) < 0) return NULL;
        p += 6;
        continue;
      default:
        return NULL;
    }
  }
}

static inline const char *scan_digits(const char *p, const char *end) {
  const char *s = p;
  while (p < end && *p >= '0' && *p <= '9') p++;
  return p == s ? NULL : p;
}

static inline __attribute__((always_inline)) const char *scan_number(const char *p, const char *end) {
  if (p < end && *p == '-') p++;
  if (p >= end) return NULL;
  if (*p == '0') {
    p++;
  } else if (!(p = scan_digits(p, end))) {
    return NULL;
  }
  if (p < end && *p == '.') {
    if (!(p = scan_digits(p + 1, end))) return NULL;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (!(p = scan_digits(p, end))) return NULL;
  }
  return p;
}

static inline const char *scan_word(const char *p, const char *end, const char *w, size_t n) {
  return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 ? p + n : NULL;
}

/*
 * scan_nested: p at the first byte of a value (an object or an array);
 * returns just past it. They are walked with an explicit stack of bits
 * (1: in an object), not by recursion.
 */
static __attribute__((noinline)) const char *scan_nested(const char *p, const char *end) {
  uint64_t stack[ADKHOST_JSON_MAX_DEPTH / 64];
  int depth = 0;
value:
  if (p >= end) return NULL;
  switch (*p) {
    case '"':
      if (!(p = scan_string(p, end))) return NULL;
      break;
    case '{':
    case '[': {
      if (depth == ADKHOST_JSON_MAX_DEPTH) return NULL;
      int obj = *p == '{';
      uint64_t bit = 1ull << (depth & 63);
      stack[depth >> 6] = obj ? stack[depth >> 6] | bit : stack[depth >> 6] & ~bit;
      depth++;
      p = ws(p + 1, end);
      if (p < end && *p == (obj ? '}' : ']')) {
        p++;
        depth--;
        break;
      }
      if (obj) goto key;
      goto value;
    }
    case 't': if (!(p = scan_word(p, end, "true", 4))) return NULL; break;
    case 'f': if (!(p = scan_word(p, end, "false", 5))) return NULL; break;
    case 'n': if (!(p = scan_word(p, end, "null", 4))) return NULL; break;
    default:
      if (!(p = scan_number(p, end))) return NULL;
  }
  /* after a value: close what ends here, or go on to the next member */
  while (depth > 0) {
    p = ws(p, end);
    if (p >= end) return NULL;
    int obj = (stack[(depth - 1) >> 6] >> ((depth - 1) & 63)) & 1;
    if (*p == ',') {
      p = ws(p + 1, end);
      if (obj) goto key;
      goto value;
    }
    if (*p != (obj ? '}' : ']')) return NULL;
    p++;
    depth--;
  }
  return p;
key:
  if (p >= end || *p != '"' || !(p = scan_string(p, end))) return NULL;
  p = ws(p, end);
  if (p >= end || *p != ':') return NULL;
  p = ws(p + 1, end);
  goto value;
}

/* scan_value: p at the first byte of a value; returns just past it. A
 * scalar is read here, inline: in the guest a call costs more than it. */
static inline __attribute__((always_inline)) const char *scan_value(const char *p, const char *end) {
  if (p >= end) return NULL;
  switch (*p) {
    case '"': return scan_string(p, end);
    case '{': case '[': return scan_nested(p, end);
    case 't': return scan_word(p, end, "true", 4);
    case 'f': return scan_word(p, end, "false", 5);
    case 'n': return scan_word(p, end, "null", 4);
  }
  return scan_number(p, end);
}

/*
 * step reads the next member of an object (obj) or element of an array at
 * *pp, before end, its closing bracket: 1, with the key's string token at
 * [*k, *ke) and the value at [*v, *pp); 0 at the end; -1 if malformed.
 * Inline, so that the pointers stay in registers: a guest's every memory
 * access is bounds-checked.
 */
static inline __attribute__((always_inline)) int step(const char **pp, const char *end, int obj, int first,
                                                      const char **k, const char **ke, const char **v) {
  const char *p = ws(*pp, end);
  if (p == end) return 0;
  if (!first) {
    if (*p != ',') return -1;
    p = ws(p + 1, end);
  }
  if (obj) {
    *k = p;
    if (p >= end || *p != '"' || !(p = scan_string(p, end))) return -1;
    *ke = p;
    p = ws(p, end);
    if (p >= end || *p != ':') return -1;
    p = ws(p + 1, end);
  }
  *v = p;
  if (!(p = scan_value(p, end))) return -1;
  *pp = p;
  return 1;
}

int adkhost_json_parse(const char *in, size_t len, adkhost_json *v) {
  const char *end = in + len;
  const char *p = ws(in, end);
  const char *e = scan_value(p, end);
  if (!e || ws(e, end) != end) return ADKHOST_INVALID_ARGUMENT;
  v->p = p;
  v->n = (size_t)(e - p);
  return ADKHOST_OK;
}

int adkhost_json_type(adkhost_json v) {
  if (v.n == 0) return ADKHOST_JSON_INVALID;
  switch (v.p[0]) {
    case 'n': return ADKHOST_JSON_NULL;
    case 't': case 'f': return ADKHOST_JSON_BOOL;
    case '"': return ADKHOST_JSON_STRING;
    case '[': return ADKHOST_JSON_ARRAY;
    case '{': return ADKHOST_JSON_OBJECT;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      return ADKHOST_JSON_NUMBER;
  }
  return ADKHOST_JSON_INVALID;
}

adkhost_json_iter adkhost_json_iterate(adkhost_json v) {
  adkhost_json_iter it = {NULL, NULL, 0, 0, 0};
  if (v.n < 2 || !((v.p[0] == '{' && v.p[v.n - 1] == '}') || (v.p[0] == '[' && v.p[v.n - 1] == ']'))) {
    it.err = ADKHOST_INVALID_ARGUMENT;
    return it;
  }
  it.kind = v.p[0];
  it.p = v.p + 1;
  it.end = v.p + v.n - 1;
  return it;
}

int adkhost_json_next(adkhost_json_iter *it, adkhost_json *key, adkhost_json *val) {
  if (it->err || !it->p) return 0;
  const char *p = it->p, *k = NULL, *ke = NULL, *v = NULL;
  int r = step(&p, it->end, it->kind == '{', !it->started, &k, &ke, &v);
  if (r <= 0) {
    if (r < 0) it->err = ADKHOST_INVALID_ARGUMENT;
    it->p = NULL;
    return 0;
  }
  it->started = 1;
  it->p = p;
  if (key) {
    key->p = k ? k : v;
    key->n = (size_t)(ke - k);
  }
  if (val) {
    val->p = v;
    val->n = (size_t)(p - v);
  }
  return 1;
}

/*
 * decode_unit decodes one unit of a string's text at p (before end, the
 * closing quote): a run of plain bytes is the caller's; here one escape
 * (a surrogate pair is one) or one non-ASCII sequence, as encoding/json
 * does: invalid UTF-8 bytes and unpaired surrogates become U+FFFD. It
 * writes up to 4 bytes to out and returns their number, advancing *pp.
 */
static int put_rune(unsigned char *out, uint32_t r) {
  if (r < 0x80) {
    out[0] = (unsigned char)r;
    return 1;
  }
  if (r < 0x800) {
    out[0] = (unsigned char)(0xC0 | r >> 6);
    out[1] = (unsigned char)(0x80 | (r & 0x3F));
    return 2;
  }
  if (r < 0x10000) {
    out[0] = (unsigned char)(0xE0 | r >> 12);
    out[1] = (unsigned char)(0x80 | (r >> 6 & 0x3F));
    out[2] = (unsigned char)(0x80 | (r & 0x3F));
    return 3;
  }
  out[0] = (unsigned char)(0xF0 | r >> 18);
  out[1] = (unsigned char)(0x80 | (r >> 12 & 0x3F));
  out[2] = (unsigned char)(0x80 | (r >> 6 & 0x3F));
  out[3] = (unsigned char)(0x80 | (r & 0x3F));
  return 4;
}

/* utf8_len returns the length of the valid UTF-8 sequence at p (a byte
 * >= 0x80), or 0 (Go's utf8.DecodeRune rules: no overlongs, no surrogates,
 * nothing above U+10FFFF). */
static int utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned char c = p[0];
  long n = end - p;
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return n >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return n >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80 ? 4 : 0;
  }
  return 0;
}

static int decode_unit(const char **pp, const char *end, unsigned char out[4]) {
  const unsigned char *p = (const unsigned char *)*pp;
  const unsigned char *e = (const unsigned char *)end;
  if (*p != '\\') {
    int n = utf8_len(p, e);
    if (n == 0) {
      *pp += 1;
      return put_rune(out, 0xFFFD);
    }
    memcpy(out, p, (size_t)n);
    *pp += n;
    return n;
  }
  /* an escape: scan_string checked its form, but stay in bounds anyway */
  if (e - p < 2) {
    *pp = end;
    return 0;
  }
  switch (p[1]) {
    case 'b': *pp += 2; out[0] = '\b'; return 1;
    case 'f': *pp += 2; out[0] = '\f'; return 1;
    case 'n': *pp += 2; out[0] = '\n'; return 1;
    case 'r': *pp += 2; out[0] = '\r'; return 1;
    case 't': *pp += 2; out[0] = '\t'; return 1;
    case 'u': break;
    default: *pp += 2; out[0] = p[1]; return 1; /* " \ / */
  }
  int32_t r = e - p >= 6 ? hex4((const char *)p + 2) : -1;
  if (r < 0) {
    *pp = end;
    return 0;
  }
  *pp += 6;
  if (r >= 0xD800 && r < 0xE000) {
    /* a high surrogate and a low one make a pair; anything else is U+FFFD
     * and the second escape, if any, is read on its own */
    int32_t r2 = e - p >= 12 && p[6] == '\\' && p[7] == 'u' ? hex4((const char *)p + 8) : -1;
    if (r < 0xDC00 && r2 >= 0xDC00 && r2 < 0xE000) {
      *pp += 6;
      return put_rune(out, 0x10000 + (((uint32_t)r - 0xD800) << 10) + ((uint32_t)r2 - 0xDC00));
    }
    r = 0xFFFD;
  }
  return put_rune(out, (uint32_t)r);
}

/* plain_run returns the end of the run of bytes at p that decode as
 * themselves: ASCII other than a backslash (the caller stops at end). */
static const char *plain_run(const char *p, const char *end) {
  while (p < end && *p != '\\' && (unsigned char)*p < 0x80) p++;
  return p;
}

static int is_null(adkhost_json v) { return v.n == 4 && memcmp(v.p, "null", 4) == 0; }

/* string_body sets [*b, *e) to the text between the quotes of a string
 * value, checking it is one. */
static int string_body(adkhost_json v, const char **b, const char **e) {
  if (v.n < 2 || v.p[0] != '"' || scan_string(v.p, v.p + v.n) != v.p + v.n) return 0;
  *b = v.p + 1;
  *e = v.p + v.n - 1;
  return 1;
}

int adkhost_json_string(adkhost_json v, char *buf, size_t cap, size_t *len) {
  const char *p, *end;
  size_t n = 0;
  int st = ADKHOST_OK;
  if (is_null(v)) {
    p = end = NULL;
  } else if (!string_body(v, &p, &end)) {
    if (cap) buf[0] = 0;
    if (len) *len = 0;
    return ADKHOST_INVALID_ARGUMENT;
  }
  if (cap == 0) return ADKHOST_TOO_LARGE;
  while (p < end) {
    const char *r = plain_run(p, end);
    size_t k = (size_t)(r - p);
    if (k) {
      if (k >= cap - n) {
        st = ADKHOST_TOO_LARGE;
        break;
      }
      memcpy(buf + n, p, k);
      n += k;
      p = r;
      continue;
    }
    unsigned char u[4];
    int m = decode_unit(&p, end, u);
    if ((size_t)m >= cap - n) {
      st = ADKHOST_TOO_LARGE;
      break;
    }
    memcpy(buf + n, u, (size_t)m);
    n += (size_t)m;
  }
  buf[n] = 0;
  if (len) *len = n;
  return st;
}

/* body_eq reports whether the string text [p, end) decodes to s[0..n). */
static int body_eq(const char *p, const char *end, const char *s, size_t n) {
  size_t i = 0;
  while (p < end) {
    const char *r = plain_run(p, end);
    size_t k = (size_t)(r - p);
    if (k) {
      if (k > n - i || memcmp(p, s + i, k) != 0) return 0;
      i += k;
      p = r;
      continue;
    }
    unsigned char u[4];
    int m = decode_unit(&p, end, u);
    if ((size_t)m > n - i || memcmp(u, s + i, (size_t)m) != 0) return 0;
    i += (size_t)m;
  }
  return i == n;
}

int adkhost_json_eq(adkhost_json v, const char *s, size_t n) {
  const char *p, *end;
  return string_body(v, &p, &end) && body_eq(p, end, s, n);
}

/* plain reports whether s[0..n) is ASCII without a backslash: text that
 * only the same bytes, unescaped, decode to. */
static int plain(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if ((unsigned char)s[i] >= 0x80 || s[i] == '\\') return 0;
  }
  return 1;
}

int adkhost_json_get_n(adkhost_json obj, const char *key, size_t klen, adkhost_json *val) {
  if (obj.n < 2 || obj.p[0] != '{' || obj.p[obj.n - 1] != '}') return ADKHOST_INVALID_ARGUMENT;
  const char *p = obj.p + 1, *end = obj.p + obj.n - 1, *k, *ke, *v, *found = NULL, *found_end = NULL;
  int fast = plain(key, klen), r;
  for (int first = 1; (r = step(&p, end, 1, first, &k, &ke, &v)) > 0; first = 0) {
    /* [k, ke) is a checked string token. A plain key matches the same
     * bytes, or text with escapes that decodes to them (text without
     * escapes but of another length holds other bytes, or non-ASCII). */
    const char *b = k + 1;
    size_t bn = (size_t)(ke - k) - 2;
    int eq = fast && bn == klen ? memcmp(b, key, klen) == 0
             : (!fast || memchr(b, '\\', bn)) && body_eq(b, b + bn, key, klen);
    /* the last of duplicate keys wins, as in encoding/json */
    if (eq) {
      found = v;
      found_end = p;
    }
  }
  if (r < 0) return ADKHOST_INVALID_ARGUMENT;
  if (!found) return ADKHOST_NOT_FOUND;
  val->p = found;
  val->n = (size_t)(found_end - found);
  return ADKHOST_OK;
}

int adkhost_tool_args(const char *in, uint32_t len, adkhost_json *args) {
  static const char empty[] = "{}";
  const char *end = in + len;
  adkhost_json msg;
  msg.p = ws(in, end);
  while (end > msg.p && is_ws(end[-1])) end--;
  msg.n = (size_t)(end - msg.p);
  if (msg.n == 0 || msg.p[0] != '{') return ADKHOST_INVALID_ARGUMENT;
  adkhost_json v;
  int st = adkhost_json_get_n(msg, "args", 4, &v);
  if (st == ADKHOST_NOT_FOUND || (st == ADKHOST_OK && is_null(v))) {
    args->p = empty;
    args->n = 2;
    return ADKHOST_OK;
  }
  if (st != ADKHOST_OK || v.p[0] != '{') return ADKHOST_INVALID_ARGUMENT;
  *args = v;
  return ADKHOST_OK;
}

int adkhost_json_int(adkhost_json v, int64_t *out) {
  if (is_null(v)) return ADKHOST_OK;
  const char *p = v.p, *end = v.p + v.n;
  if (scan_number(p, end) != end || v.n == 0) return ADKHOST_INVALID_ARGUMENT;
  int neg = *p == '-';
  if (neg) p++;
  uint64_t u = 0;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9') return ADKHOST_INVALID_ARGUMENT; /* . e E */
    unsigned d = (unsigned)(*p - '0');
    if (u > (UINT64_MAX - d) / 10) return ADKHOST_INVALID_ARGUMENT;
    u = u * 10 + d;
  }
  if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX) return ADKHOST_INVALID_ARGUMENT;
  *out = neg ? (int64_t)(0 - u) : (int64_t)u;
  return ADKHOST_OK;
}

int adkhost_json_number(adkhost_json v, double *out) {
  if (is_null(v)) return ADKHOST_OK;
  if (v.n == 0 || scan_number(v.p, v.p + v.n) != v.p + v.n) return ADKHOST_INVALID_ARGUMENT;
  char buf[401];
  if (v.n >= sizeof buf) return ADKHOST_TOO_LARGE;
  memcpy(buf, v.p, v.n);
  buf[v.n] = 0;
  double d = strtod(buf, NULL);
  if (isinf(d)) return ADKHOST_INVALID_ARGUMENT;
  *out = d;
  return ADKHOST_OK;
}

int adkhost_json_bool(adkhost_json v, int *out) {
  if (v.n == 4 && memcmp(v.p, "true", 4) == 0) {
    *out = 1;
  } else if (v.n == 5 && memcmp(v.p, "false", 5) == 0) {
    *out = 0;
  } else if (!is_null(v)) {
    return ADKHOST_INVALID_ARGUMENT;
  }
  return ADKHOST_OK;
}

/* ---- JSON writing --------------------------------------------------------- */

void adkhost_w_grow(adkhost_writer *w, size_t n) {
  size_t c = w->cap ? w->cap : 256;
  while (c - w->len < n) {
    if (c > SIZE_MAX / 2) abort();
    c *= 2;
  }
  char *b = realloc(w->buf, c);
  if (b == NULL) abort(); /* a trap, as adkhost_output */
  w->buf = b;
  w->cap = c;
}


void adkhost_w_json(adkhost_writer *w, adkhost_json v) { adkhost_w_raw(w, v.p, v.n); }

void adkhost_w_string(adkhost_writer *w, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  /* the worst case, every byte as \ufffd, reserved once */
  if (n > (SIZE_MAX - 2) / 6) abort();
  adkhost_w_reserve(w, 6 * n + 2);
  char *o = w->buf + w->len;
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  *o++ = '"';
  while (p < end) {
    unsigned char c = *p;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      *o++ = (char)c;
      p++;
      continue;
    }
    if (c < 0x80) {
      *o++ = '\\';
      switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        default:
          memcpy(o, "u00", 3);
          o[3] = hex[c >> 4];
          o[4] = hex[c & 15];
          o += 5;
      }
      p++;
      continue;
    }
    int k = utf8_len(p, end);
    if (k == 0) {
      memcpy(o, "\\ufffd", 6);
      o += 6;
      p++;
    } else if (k == 3 && p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
      /* U+2028, U+2029: valid JSON, but not JavaScript; Go escapes them */
      memcpy(o, p[2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
      o += 6;
      p += 3;
    } else {
      memcpy(o, p, (size_t)k);
      o += k;
      p += k;
    }
  }
  *o++ = '"';
  w->len = (size_t)(o - w->buf);
}


void adkhost_w_int(adkhost_writer *w, int64_t v) {
  char b[20];
  int i = sizeof b;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    b[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  adkhost_w_reserve(w, 21);
  if (v < 0) w->buf[w->len++] = '-';
  adkhost_w_raw(w, b + i, sizeof b - (size_t)i);
}

void adkhost_w_double(adkhost_writer *w, double v) {
  if (isnan(v) || isinf(v)) {
    adkhost_w_raw(w, "null", 4);
    return;
  }
  double a = fabs(v);
  /* whole numbers below 2^53: their digits, as Go writes them */
  if (a < 9007199254740992.0 && v == (double)(int64_t)v && !(v == 0 && signbit(v))) {
    adkhost_w_int(w, (int64_t)v);
    return;
  }
  /* The shortest digits that read back as v. For a normal double, 15
   * significant digits always do when any shorter text does (rounded to
   * 15, the shorter text comes back); else 16 or 17. A subnormal has fewer
   * significant bits: try from 1. */
  char e[40];
  int prec = a < 2.2250738585072014e-308 ? 1 : 15;
  for (; prec < 17; prec++) {
    snprintf(e, sizeof e, "%.*e", prec - 1, a);
    if (strtod(e, NULL) == a) break;
  }
  if (prec == 17) snprintf(e, sizeof e, "%.16e", a);
  /* e is d.ddd...e±x: collect the digits, drop trailing zeros */
  char dig[20];
  int nd = 0;
  const char *q = e;
  for (; *q && *q != 'e'; q++) {
    if (*q >= '0' && *q <= '9') dig[nd++] = *q;
  }
  int exp10 = atoi(q + 1); /* v = d.ddd × 10^exp10 */
  while (nd > 1 && dig[nd - 1] == '0') nd--;
  char out[48];
  int o = 0;
  if (signbit(v)) out[o++] = '-';
  if (a != 0 && (a < 1e-6 || a >= 1e21)) {
    /* Go's 'e' format, exponent without leading zeros: 1e+21, 1.5e-7 */
    out[o++] = dig[0];
    if (nd > 1) {
      out[o++] = '.';
      memcpy(out + o, dig + 1, (size_t)nd - 1);
      o += nd - 1;
    }
    o += snprintf(out + o, sizeof out - (size_t)o, "e%c%d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  } else if (exp10 < 0) {
    /* 0.000ddd */
    out[o++] = '0';
    out[o++] = '.';
    for (int i = -1; i > exp10; i--) out[o++] = '0';
    memcpy(out + o, dig, (size_t)nd);
    o += nd;
  } else {
    /* ddd.ddd or ddd000 */
    for (int i = 0; i < nd || i <= exp10; i++) {
      if (i == exp10 + 1) out[o++] = '.';
      out[o++] = i < nd ? dig[i] : '0';
    }
  }
  adkhost_w_raw(w, out, (size_t)o);
}

uint64_t adkhost_w_output(adkhost_writer *w) {
  uint64_t out = w->len ? adkhost_pack(w->buf, (uint32_t)w->len) : ADKHOST_NOTHING;
  if (!w->len) free(w->buf);
  w->buf = NULL;
  w->len = w->cap = 0;
  return out;
}

void adkhost_w_free(adkhost_writer *w) {
  free(w->buf);
  w->buf = NULL;
  w->len = w->cap = 0;
}
