/*
 * A libFuzzer target for the SDK's JSON reader and writer, built natively
 * with AddressSanitizer (sdk_test.go's TestNativeFuzz): any read outside
 * the input, any overflow of a caller's buffer, any trap of undefined
 * behaviour is a crash. It also checks what holds for any input: a value
 * parse accepts iterates and its members are found by get; what the
 * writer writes parses and reads back (a string as its bytes when they
 * are valid UTF-8, a double as itself).
 */
#include "adkhost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The host functions adkhost.c refers to, which a native build lacks. */
int32_t adkhost_state_set(const char *k, uint32_t kl, const char *j, uint32_t jl) {
  (void)k, (void)kl, (void)j, (void)jl;
  return ADKHOST_OK;
}
int32_t adkhost_log(int32_t level, const char *m, uint32_t n) {
  (void)level, (void)m, (void)n;
  return ADKHOST_OK;
}
int32_t adkhost_memory_search(const char *q, uint32_t ql, char **r, uint32_t *rl) {
  (void)q, (void)ql, (void)r, (void)rl;
  return ADKHOST_UNAVAILABLE;
}

#define CHECK(c) \
  do {           \
    if (!(c)) abort(); \
  } while (0)

static int valid_utf8(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t k = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (k == 0 || i + k > n) return 0;
    for (size_t j = 1; j < k; j++) {
      if ((p[i + j] & 0xC0) != 0x80) return 0;
    }
    if ((c == 0xE0 && p[i + 1] < 0xA0) || (c == 0xED && p[i + 1] > 0x9F) || (c == 0xF0 && p[i + 1] < 0x90) ||
        (c == 0xF4 && p[i + 1] > 0x8F)) {
      return 0;
    }
    i += k;
  }
  return 1;
}

/* Every reader on v, into buffers of exact sizes. */
static void read_all(adkhost_json v) {
  size_t n, cap = 3 * v.n + 1;
  char *buf = malloc(cap);
  int st = adkhost_json_string(v, buf, cap, &n);
  CHECK(st == ADKHOST_OK || st == ADKHOST_INVALID_ARGUMENT);
  if (st == ADKHOST_OK) {
    CHECK(n < cap && buf[n] == 0);
    CHECK(adkhost_json_type(v) == ADKHOST_JSON_NULL || adkhost_json_eq(v, buf, n));
    char small[4];
    size_t m;
    st = adkhost_json_string(v, small, sizeof small, &m);
    CHECK(n < sizeof small ? st == ADKHOST_OK : st == ADKHOST_TOO_LARGE);
    CHECK(m < sizeof small && small[m] == 0 && memcmp(small, buf, m) == 0);
  }
  free(buf);
  int64_t i;
  double d;
  int b;
  (void)adkhost_json_int(v, &i);
  (void)adkhost_json_number(v, &d);
  (void)adkhost_json_bool(v, &b);
}

/* walk iterates v and one level below it, checking each member is found. */
static void walk(adkhost_json v, int depth) {
  adkhost_json_iter it = adkhost_json_iterate(v);
  adkhost_json key, val, got;
  while (adkhost_json_next(&it, &key, &val)) {
    read_all(val);
    if (it.kind == '{') {
      size_t n, cap = 3 * key.n + 1;
      char *k = malloc(cap);
      CHECK(adkhost_json_string(key, k, cap, &n) == ADKHOST_OK);
      CHECK(adkhost_json_get_n(v, k, n, &got) == ADKHOST_OK);
      free(k);
    }
    int t = adkhost_json_type(val);
    if (depth < 2 && (t == ADKHOST_JSON_OBJECT || t == ADKHOST_JSON_ARRAY)) walk(val, depth + 1);
  }
  CHECK(it.err == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* exactly size bytes of heap: a read past them is AddressSanitizer's */
  char *in = malloc(size ? size : 1);
  memcpy(in, data, size);
  adkhost_json v, args;
  if (adkhost_json_parse(in, size, &v) == ADKHOST_OK) {
    int t = adkhost_json_type(v);
    if (t == ADKHOST_JSON_OBJECT || t == ADKHOST_JSON_ARRAY) walk(v, 0);
    read_all(v);
    int st = adkhost_tool_args(in, (uint32_t)size, &args);
    CHECK(t == ADKHOST_JSON_OBJECT ? st != ADKHOST_NOT_FOUND : st == ADKHOST_INVALID_ARGUMENT);
  } else {
    CHECK(adkhost_tool_args(in, (uint32_t)size, &args) == ADKHOST_INVALID_ARGUMENT);
    /* readers on a malformed value stay in bounds too */
    adkhost_json raw = {in, size};
    read_all(raw);
    adkhost_json_iter it = adkhost_json_iterate(raw);
    while (adkhost_json_next(&it, NULL, NULL)) {
    }
    adkhost_json got;
    (void)adkhost_json_get(raw, "a", &got);
  }

  /* The writer: any bytes make a string that parses and reads back. */
  adkhost_writer w = {0};
  adkhost_w_raw(&w, in, 0); /* nothing, into a writer with no buffer yet */
  adkhost_w_string(&w, in, size);
  adkhost_json s;
  CHECK(adkhost_json_parse(w.buf, w.len, &s) == ADKHOST_OK && adkhost_json_type(s) == ADKHOST_JSON_STRING);
  size_t n, cap = 3 * s.n + 1;
  char *back = malloc(cap);
  CHECK(adkhost_json_string(s, back, cap, &n) == ADKHOST_OK);
  if (valid_utf8((const unsigned char *)in, size)) CHECK(n == size && memcmp(back, in, size) == 0);
  free(back);
  adkhost_w_free(&w);

  if (size >= 8) {
    double d, r = 0;
    memcpy(&d, data, 8);
    adkhost_w_double(&w, d);
    CHECK(adkhost_json_parse(w.buf, w.len, &s) == ADKHOST_OK);
    if (isfinite(d)) {
      CHECK(adkhost_json_number(s, &r) == ADKHOST_OK && r == d && signbit(r) == signbit(d));
    } else {
      CHECK(w.len == 4 && memcmp(w.buf, "null", 4) == 0);
    }
    adkhost_w_free(&w);
  }
  free(in);
  return 0;
}
