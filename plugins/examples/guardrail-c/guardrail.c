/*
 * guardrail-c: a before_model guardrail written in C against sdk/c.
 *
 * It refuses any model request whose latest user text contains "BLOCK":
 * instead of calling the model, the agent answers with a refusal. Any other
 * request passes unchanged (an empty output).
 *
 * "Latest user text" is the text parts of the last entry of
 * request.contents whose role is "user" and that has at least one text
 * part (a function response, also role "user", carries no text and is
 * skipped). "BLOCK" anywhere else (the system instruction, the model's
 * replies, tool arguments or results, earlier user messages) does not count.
 *
 * JSON handling is deliberately tiny: a cursor that walks the input,
 * descends only into request.contents[*].{role,parts[*].text}, skips every
 * other value without building it, and matches "BLOCK" while decoding the
 * text strings (escapes included, so "\u0042LOCK" counts). There is no
 * recursion and no allocation. An input it cannot read fails the hook
 * (fail closed): the host always sends valid JSON, so this does not happen.
 */
#include "adkhost.h"

#include <string.h>

static const char DESCRIBE[] =
    "{\"abiVersion\":1,\"name\":\"guardrail-c\",\"version\":\"1.0.0\","
    "\"hooks\":[\"before_model\"]}";

static const char REFUSAL[] =
    "{\"abiVersion\":1,\"response\":{\"content\":{\"role\":\"model\","
    "\"parts\":[{\"text\":\"Sorry, I can't help with that: the request was "
    "blocked by policy.\"}]}}}";

static const char UNREADABLE[] =
    "{\"abiVersion\":1,\"error\":\"guardrail-c: cannot read the request\"}";

/* ---- a minimal JSON cursor ---------------------------------------------- */

typedef struct {
  const char *p, *end;
  int err;
} cursor;

static void ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) {
    c->p++;
  }
}

static int peek(cursor *c) {
  ws(c);
  return c->p < c->end ? (unsigned char)*c->p : -1;
}

static int eat(cursor *c, char ch) {
  if (peek(c) == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

static int hexval(int ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/*
 * A sink receives the decoded bytes of a string. Non-ASCII \u escapes are
 * delivered as 0xFF: they cannot be part of "BLOCK" nor of a key we look for.
 */
typedef void (*sink)(void *ctx, unsigned char b);

/* string reads a JSON string at the cursor, feeding its bytes to emit. */
static void string(cursor *c, sink emit, void *ctx) {
  if (!eat(c, '"')) {
    c->err = 1;
    return;
  }
  while (c->p < c->end) {
    unsigned char b = (unsigned char)*c->p++;
    if (b == '"') {
      return;
    }
    if (b == '\\') {
      if (c->p >= c->end) break;
      unsigned char e = (unsigned char)*c->p++;
      switch (e) {
        case 'n': b = '\n'; break;
        case 't': b = '\t'; break;
        case 'r': b = '\r'; break;
        case 'b': b = '\b'; break;
        case 'f': b = '\f'; break;
        case 'u': {
          if (c->end - c->p < 4) {
            c->err = 1;
            return;
          }
          int v = 0;
          for (int i = 0; i < 4; i++) {
            int h = hexval((unsigned char)*c->p++);
            if (h < 0) {
              c->err = 1;
              return;
            }
            v = v << 4 | h;
          }
          b = v < 0x80 ? (unsigned char)v : 0xFF;
          break;
        }
        default: b = e; /* \" \\ \/ */
      }
    }
    if (emit) emit(ctx, b);
  }
  c->err = 1; /* unterminated */
}

/* skip steps over one JSON value of any kind, without recursion. */
static void skip(cursor *c) {
  int ch = peek(c);
  if (ch == '"') {
    string(c, NULL, NULL);
    return;
  }
  if (ch == '{' || ch == '[') {
    long depth = 0;
    while (c->p < c->end) {
      char b = *c->p;
      if (b == '"') {
        string(c, NULL, NULL);
        if (c->err) return;
        continue;
      }
      c->p++;
      if (b == '{' || b == '[') depth++;
      if (b == '}' || b == ']') {
        if (--depth == 0) return;
      }
    }
    c->err = 1;
    return;
  }
  /* number, true, false, null */
  const char *start = c->p;
  while (c->p < c->end && !strchr(",}] \t\r\n", *c->p)) c->p++;
  if (c->p == start) c->err = 1;
}

/* A key buffer: keys longer than we care about never match. */
typedef struct {
  char s[16];
  unsigned n;
} keybuf;

static void key_sink(void *ctx, unsigned char b) {
  keybuf *k = ctx;
  if (k->n < sizeof k->s - 1) k->s[k->n] = (char)b;
  k->n++;
}

/*
 * member reads `"key":` of an object member into k (after the opening brace
 * or a comma). It returns 0 at the closing brace.
 */
static int member(cursor *c, keybuf *k, int first) {
  if (eat(c, '}')) return 0;
  if (!first && !eat(c, ',')) {
    c->err = 1;
    return 0;
  }
  k->n = 0;
  memset(k->s, 0, sizeof k->s);
  string(c, key_sink, k);
  if (k->n >= sizeof k->s) k->s[0] = '\0'; /* too long: matches nothing */
  if (c->err || !eat(c, ':')) {
    c->err = 1;
    return 0;
  }
  return 1;
}

/* element reads the separator before an array element; 0 at the end. */
static int element(cursor *c, int first) {
  if (eat(c, ']')) return 0;
  if (!first && !eat(c, ',')) {
    c->err = 1;
    return 0;
  }
  return 1;
}

/* ---- the guardrail -------------------------------------------------------- */

static const char NEEDLE[] = "BLOCK";

/* A streaming matcher of NEEDLE (no proper prefix of it is also a suffix). */
typedef struct {
  unsigned k;
  int found;
} matcher;

static void match_sink(void *ctx, unsigned char b) {
  matcher *m = ctx;
  if (b == (unsigned char)NEEDLE[m->k]) {
    if (++m->k == sizeof NEEDLE - 1) {
      m->found = 1;
      m->k = 0;
    }
  } else {
    m->k = b == (unsigned char)NEEDLE[0] ? 1 : 0;
  }
}

static void role_sink(void *ctx, unsigned char b) { key_sink(ctx, b); }

/* part reads one Part: whether it has a text, and whether that has BLOCK. */
static void part(cursor *c, int *has_text, int *found) {
  keybuf k;
  if (!eat(c, '{')) {
    c->err = 1;
    return;
  }
  for (int first = 1; member(c, &k, first); first = 0) {
    if (strcmp(k.s, "text") == 0 && peek(c) == '"') {
      matcher m = {0, 0};
      string(c, match_sink, &m); /* parts are matched separately */
      *has_text = 1;
      *found |= m.found;
    } else {
      skip(c);
    }
    if (c->err) return;
  }
}

/* content reads one Content of request.contents. */
static void content(cursor *c, int *is_user, int *has_text, int *found) {
  keybuf k;
  *is_user = *has_text = *found = 0;
  if (!eat(c, '{')) {
    c->err = 1;
    return;
  }
  for (int first = 1; member(c, &k, first); first = 0) {
    if (strcmp(k.s, "role") == 0 && peek(c) == '"') {
      keybuf role = {{0}, 0};
      string(c, role_sink, &role);
      *is_user = role.n == 4 && strcmp(role.s, "user") == 0;
    } else if (strcmp(k.s, "parts") == 0 && peek(c) == '[') {
      c->p++;
      for (int f = 1; element(c, f); f = 0) {
        if (peek(c) == '{') {
          part(c, has_text, found);
        } else {
          skip(c); /* null */
        }
        if (c->err) return;
      }
    } else {
      skip(c);
    }
    if (c->err) return;
  }
}

/* contents reads request.contents; *blocked is the verdict. */
static void contents(cursor *c, int *blocked) {
  if (!eat(c, '[')) {
    skip(c); /* null */
    return;
  }
  for (int first = 1; element(c, first); first = 0) {
    if (peek(c) == '{') {
      int is_user, has_text, found;
      content(c, &is_user, &has_text, &found);
      if (is_user && has_text) *blocked = found; /* the latest one wins */
    } else {
      skip(c);
    }
    if (c->err) return;
  }
}

/* blocked reports whether the BeforeModelInput's latest user text has BLOCK. */
static int blocked(const char *in, uint32_t len, int *err) {
  cursor c = {in, in + len, 0};
  int verdict = 0;
  keybuf k;
  if (!eat(&c, '{')) {
    *err = 1;
    return 0;
  }
  for (int first = 1; member(&c, &k, first); first = 0) {
    if (strcmp(k.s, "request") == 0 && peek(&c) == '{') {
      c.p++;
      keybuf rk;
      for (int f = 1; member(&c, &rk, f); f = 0) {
        if (strcmp(rk.s, "contents") == 0) {
          contents(&c, &verdict);
        } else {
          skip(&c);
        }
        if (c.err) break;
      }
    } else {
      skip(&c);
    }
    if (c.err) break;
  }
  *err = c.err;
  return verdict;
}

ADKHOST_DESCRIBE(in, len) {
  (void)in;
  (void)len;
  return adkhost_output(DESCRIBE, sizeof DESCRIBE - 1);
}

ADKHOST_HOOK(before_model, in, len) {
  int err = 0;
  int verdict = blocked(in, len, &err);
  if (err) {
    return adkhost_output(UNREADABLE, sizeof UNREADABLE - 1);
  }
  if (!verdict) {
    return ADKHOST_NOTHING; /* call the model with the request as is */
  }
  adkhost_log_str(ADKHOST_LOG_WARN, "guardrail-c: request blocked");
  return adkhost_output(REFUSAL, sizeof REFUSAL - 1);
}
