/*
 * main.c: the adkhost JavaScript runtime. QuickJS-ng (the C sources of the
 * rquickjs-sys crate, compiled into this file so that the runtime can set
 * what QuickJS keeps private: the stack limit and Math.random's seed, and
 * read objects' shapes for a faster JSON.stringify) with
 * ABI v1 exports (sdk/c) and a global object, __adkhost, that exposes every
 * host function of ABI.md §4 to JavaScript.
 *
 * `adkhost module build` snapshots this module with wizer: wizer calls
 * adkhost_js_init once, at build time, with the user's bundle (esbuild's
 * output, sdk/typescript bundled in) mounted read-only; QuickJS evaluates
 * it, and wizer writes the initialised memory into a new module. At run
 * time nothing is read from a filesystem: every hook export calls the
 * dispatcher the SDK installs, globalThis.__adkhostDispatch(hook, input),
 * with the input message parsed (or as a string when it is not JSON the
 * runtime's parser takes, for the SDK's JSON.parse).
 */
#include <stdbool.h>

/* The one edit mk/typescript.mk makes to quickjs.c calls this (below). */
struct JSRuntime;
struct JSShape;
static bool js_shape_keep(struct JSRuntime *r, struct JSShape *sh);

#include "quickjs.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adkhost.h"

/* ---- Shapes kept (mk/typescript.mk's edit of quickjs.c): QuickJS frees an object's
 * shape with the last object of it, so every call built the shapes of its
 * objects (the input's, the context's, the result's, every step of an
 * object literal) again and freed them. A shape freed after init is kept
 * instead, up to SHAPES_KEPT of them, the oldest let go first: the next
 * object of the same shape finds it in QuickJS's shape table. A kept shape
 * holds its prototype (the cycle collector sees the reference as one from
 * outside: what it holds stays alive). */
#define SHAPES_KEPT 512
#define SHAPE_KEPT_PROPS 64
static JSShape *shapes_kept[SHAPES_KEPT];
static unsigned shapes_next;
static bool keep_shapes;

static bool js_shape_keep(JSRuntime *r, JSShape *sh) {
  /* Not while the cycle collector frees: it frees the shapes of the
   * objects it frees itself. */
  if (!keep_shapes || r->gc_phase != JS_GC_PHASE_NONE || sh->prop_count > SHAPE_KEPT_PROPS) return false;
  JS_REF_COUNT(sh) = 1;
  JSShape *old = shapes_kept[shapes_next];
  shapes_kept[shapes_next] = sh;
  shapes_next = (shapes_next + 1) % SHAPES_KEPT;
  /* Let go of the oldest (freeing it may free its prototype, whose shape
   * comes back here: the table is consistent by then). */
  if (old != NULL && --JS_REF_COUNT(old) <= 0) js_free_shape0(r, old);
  return true;
}

static JSRuntime *rt;
static JSContext *ctx;
static JSValue dispatch_fn;
/* The SDK's tool entry (tool_call below); without it (tool_entry
 * false) tool calls go to the dispatcher. */
static JSValue tool_call_fn, tool_done_fn, tool_fail_fn;
static bool tool_entry;
static bool ready;     /* the snapshot was taken after a successful init */
static bool building;  /* inside adkhost_js_init: no host to call */
static bool reseeded;

/* The C stack QuickJS may use before it throws RangeError instead of
 * running into the data below the stack (--stack-first): the link gives
 * the runtime 1 MiB. QuickJS sets no limit on WASI by itself. */
#define JS_STACK_BUDGET (768 * 1024)

static void set_stack_limit(void) {
  JS_UpdateStackTop(rt);
  rt->stack_limit = js_get_stack_pointer() - JS_STACK_BUDGET;
}

/* ---- __adkhost: the host functions. Data results are a string on OK and
 * the status code (a number) otherwise; the others answer the status. */

static JSValue data_result(JSContext *c, int32_t st, char *ptr, uint32_t len) {
  if (st != ADKHOST_OK) return JS_NewInt32(c, st);
  JSValue s = JS_NewStringLen(c, ptr ? ptr : "", ptr ? len : 0);
  free(ptr);
  return s;
}

/* arg_str reads argument i as UTF-8; NULL (an exception is pending) if it
 * is not a string. */
static const char *arg_str(JSContext *c, JSValueConst *argv, int argc, int i, size_t *len) {
  if (i >= argc || !JS_IsString(argv[i])) {
    JS_ThrowTypeError(c, "adkhost host function: argument %d must be a string", i + 1);
    return NULL;
  }
  return JS_ToCStringLen(c, len, argv[i]);
}

static JSValue not_building(JSContext *c, const char *fn) {
  return JS_ThrowTypeError(c, "%s: host functions are not available while the module is built "
                              "(call them inside a tool or callback, not at the top of the file)", fn);
}

#define ONE_STR(fname, body)                                                     \
  static JSValue js_##fname(JSContext *c, JSValueConst this_val, int argc,     \
                            JSValueConst *argv) {                               \
    if (building) return not_building(c, #fname);                              \
    size_t kl;                                                                  \
    const char *k = arg_str(c, argv, argc, 0, &kl);                             \
    if (k == NULL) return JS_EXCEPTION;                                         \
    JSValue r = body;                                                           \
    JS_FreeCString(c, k);                                                       \
    return r;                                                                   \
  }

#define TWO_STR(fname, body)                                                     \
  static JSValue js_##fname(JSContext *c, JSValueConst this_val, int argc,     \
                            JSValueConst *argv) {                               \
    if (building) return not_building(c, #fname);                              \
    size_t kl, vl;                                                              \
    const char *k = arg_str(c, argv, argc, 0, &kl);                             \
    if (k == NULL) return JS_EXCEPTION;                                         \
    const char *v = arg_str(c, argv, argc, 1, &vl);                             \
    if (v == NULL) { JS_FreeCString(c, k); return JS_EXCEPTION; }               \
    JSValue r = body;                                                           \
    JS_FreeCString(c, k);                                                       \
    JS_FreeCString(c, v);                                                       \
    return r;                                                                   \
  }

#define NO_ARG(fname, body)                                                      \
  static JSValue js_##fname(JSContext *c, JSValueConst this_val, int argc,     \
                            JSValueConst *argv) {                               \
    if (building) return not_building(c, #fname);                              \
    return body;                                                                \
  }

#define DATA(call) ({ char *p = NULL; uint32_t l = 0; int32_t st = call; data_result(c, st, p, l); })

ONE_STR(state_get, DATA(adkhost_state_get(k, kl, &p, &l)))
TWO_STR(state_set, JS_NewInt32(c, adkhost_state_set(k, kl, v, vl)))
ONE_STR(state_delete, JS_NewInt32(c, adkhost_state_delete(k, kl)))
ONE_STR(transfer_to_agent, JS_NewInt32(c, adkhost_transfer_to_agent(k, kl)))
NO_ARG(escalate, JS_NewInt32(c, adkhost_escalate()))
NO_ARG(skip_summarization, JS_NewInt32(c, adkhost_skip_summarization()))
TWO_STR(request_confirmation, JS_NewInt32(c, adkhost_request_confirmation(k, kl, v, vl)))
NO_ARG(artifact_list, DATA(adkhost_artifact_list(&p, &l)))
NO_ARG(invocation_info, DATA(adkhost_invocation_info(&p, &l)))
ONE_STR(config_get, DATA(adkhost_config_get(k, kl, &p, &l)))
ONE_STR(http_request, DATA(adkhost_http_request(k, kl, &p, &l)))
ONE_STR(memory_search, DATA(adkhost_memory_search(k, kl, &p, &l)))
NO_ARG(memory_add_session, JS_NewInt32(c, adkhost_memory_add_session()))

/* artifact_load(name, version): version -1 for the newest. */
static JSValue js_artifact_load(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
  if (building) return not_building(c, "artifact_load");
  size_t kl;
  int32_t version = -1;
  const char *k = arg_str(c, argv, argc, 0, &kl);
  if (k == NULL) return JS_EXCEPTION;
  if (argc > 1 && JS_ToInt32(c, &version, argv[1]) != 0) {
    JS_FreeCString(c, k);
    return JS_EXCEPTION;
  }
  JSValue r = DATA(adkhost_artifact_load(k, kl, version, &p, &l));
  JS_FreeCString(c, k);
  return r;
}

/* artifact_save(name, partJSON): [status, version]. */
static JSValue js_artifact_save(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
  if (building) return not_building(c, "artifact_save");
  size_t kl, vl;
  int32_t version = 0;
  const char *k = arg_str(c, argv, argc, 0, &kl);
  if (k == NULL) return JS_EXCEPTION;
  const char *v = arg_str(c, argv, argc, 1, &vl);
  if (v == NULL) {
    JS_FreeCString(c, k);
    return JS_EXCEPTION;
  }
  int32_t st = adkhost_artifact_save(k, kl, v, vl, &version);
  JS_FreeCString(c, k);
  JS_FreeCString(c, v);
  JSValue arr = JS_NewArray(c);
  JS_SetPropertyUint32(c, arr, 0, JS_NewInt32(c, st));
  JS_SetPropertyUint32(c, arr, 1, JS_NewInt32(c, version));
  return arr;
}

/* log(level, message): to the host at run time, to stderr at build time
 * (console.log at the top of a file shows in the build's output). */
static JSValue js_log(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
  int32_t level = 0;
  size_t ml;
  if (argc < 1 || JS_ToInt32(c, &level, argv[0]) != 0) return JS_EXCEPTION;
  const char *m = arg_str(c, argv, argc, 1, &ml);
  if (m == NULL) return JS_EXCEPTION;
  int32_t st = ADKHOST_OK;
  if (building) {
    fprintf(stderr, "%.*s\n", (int)ml, m);
  } else {
    st = adkhost_log(level, m, ml);
  }
  JS_FreeCString(c, m);
  return JS_NewInt32(c, st);
}

static const JSCFunctionListEntry host_funcs[] = {
    JS_CFUNC_DEF("state_get", 1, js_state_get),
    JS_CFUNC_DEF("state_set", 2, js_state_set),
    JS_CFUNC_DEF("state_delete", 1, js_state_delete),
    JS_CFUNC_DEF("transfer_to_agent", 1, js_transfer_to_agent),
    JS_CFUNC_DEF("escalate", 0, js_escalate),
    JS_CFUNC_DEF("skip_summarization", 0, js_skip_summarization),
    JS_CFUNC_DEF("request_confirmation", 2, js_request_confirmation),
    JS_CFUNC_DEF("artifact_load", 2, js_artifact_load),
    JS_CFUNC_DEF("artifact_save", 2, js_artifact_save),
    JS_CFUNC_DEF("artifact_list", 0, js_artifact_list),
    JS_CFUNC_DEF("log", 2, js_log),
    JS_CFUNC_DEF("invocation_info", 0, js_invocation_info),
    JS_CFUNC_DEF("config_get", 1, js_config_get),
    JS_CFUNC_DEF("http_request", 1, js_http_request),
    JS_CFUNC_DEF("memory_search", 1, js_memory_search),
    JS_CFUNC_DEF("memory_add_session", 0, js_memory_add_session),
};

/* ---- JSON.stringify without a replacer or indent, for the values a tool
 * call answers: plain objects and arrays of strings, numbers, booleans and
 * null. QuickJS's own stringify lists every object's keys as new strings,
 * looks each one up again as an atom, quotes it into a new string, and
 * converts every array index to a string: about 40% of a warm tool call's
 * instructions. This walks the objects' shapes instead and writes into one
 * buffer. It calls no JavaScript and changes nothing, so anything it does
 * not handle (toJSON anywhere on a prototype chain, getters, proxies, other
 * classes, index-like keys, sparse arrays, BigInt, deep nesting, cycles)
 * sends the whole value to QuickJS's stringify, which answers as before. */

enum { FAST_OK = 0, FAST_NO = 1, FAST_ERR = -1 };
#define FAST_MAX_DEPTH 64

/* plain_run answers the end of the run of plain string bytes from p (not
 * '"', '\\', a control character or beyond ASCII), eight at a time. */
static inline const uint8_t *plain_run(const uint8_t *p, const uint8_t *end) {
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  while (end - p >= 8) {
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    /* A high bit per byte that is < 0x20, '"', '\\' or >= 0x80. */
    uint64_t t = ((x - ones * 0x20) | (q - ones) & ~q | (b - ones) & ~b | x) & highs;
    if (t) break;
    p += 8;
  }
  while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
  return p;
}

/* The walk writes UTF-8 into a malloc'd buffer: a tool call's output is
 * that buffer, handed to the host as it is (no JavaScript string, no
 * copy); JSON.stringify makes a string of it. */
typedef struct {
  uint8_t *buf;
  size_t len, cap;
  bool non_ascii;
} Out;

static no_inline int out_grow(Out *o, size_t n) {
  size_t cap = o->cap ? o->cap : 256;
  while (cap - o->len < n) {
    if (cap > SIZE_MAX / 2) return FAST_ERR;
    cap *= 2;
  }
  uint8_t *b = realloc(o->buf, cap);
  if (b == NULL) return FAST_ERR;
  o->buf = b;
  o->cap = cap;
  return FAST_OK;
}

static inline int out_write(Out *o, const void *p, size_t n) {
  if (o->cap - o->len < n && out_grow(o, n)) return FAST_ERR;
  memcpy(o->buf + o->len, p, n);
  o->len += n;
  return FAST_OK;
}

static inline int out_byte(Out *o, uint8_t c) {
  if (o->cap == o->len && out_grow(o, 1)) return FAST_ERR;
  o->buf[o->len++] = c;
  return FAST_OK;
}

#define OUT_LIT(o, s) out_write(o, s, sizeof(s) - 1)

/* out_escape writes character ch's JSON escape (JS_ToQuotedString's). */
static int out_escape(Out *o, uint32_t ch) {
  static const char hex[] = "0123456789abcdef";
  char e[6] = {'\\', 0};
  int n = 2;
  switch (ch) {
  case '"': e[1] = '"'; break;
  case '\\': e[1] = '\\'; break;
  case '\b': e[1] = 'b'; break;
  case '\f': e[1] = 'f'; break;
  case '\n': e[1] = 'n'; break;
  case '\r': e[1] = 'r'; break;
  case '\t': e[1] = 't'; break;
  default:
    e[1] = 'u';
    e[2] = hex[(ch >> 12) & 15];
    e[3] = hex[(ch >> 8) & 15];
    e[4] = hex[(ch >> 4) & 15];
    e[5] = hex[ch & 15];
    n = 6;
  }
  return out_write(o, e, n);
}

/* fast_quote8 writes the JSON string of 8-bit characters, as UTF-8. */
static int fast_quote8(Out *o, const uint8_t *c, uint32_t n) {
  if (o->cap - o->len < (size_t)n + 2 && out_grow(o, (size_t)n + 2)) return FAST_ERR;
  /* Most strings need no escape: copied whole. */
  uint32_t run = plain_run(c, c + n) - c;
  uint8_t *d = o->buf + o->len;
  d[0] = '"';
  memcpy(d + 1, c, run);
  o->len += run + 1;
  if (run == n) {
    d[run + 1] = '"';
    o->len++;
    return FAST_OK;
  }
  for (uint32_t i = run; i < n; i++) {
    uint8_t ch = c[i];
    if (ch >= 0x20 && ch != '"' && ch != '\\' && ch < 0x80) continue;
    if (i > run && out_write(o, c + run, i - run)) return FAST_ERR;
    run = i + 1;
    if (ch >= 0x80) {
      uint8_t u[2] = {0xc0 | (ch >> 6), 0x80 | (ch & 0x3f)};
      o->non_ascii = true;
      if (out_write(o, u, 2)) return FAST_ERR;
    } else if (out_escape(o, ch)) {
      return FAST_ERR;
    }
  }
  if (n > run && out_write(o, c + run, n - run)) return FAST_ERR;
  return out_byte(o, '"');
}

/* fast_quote16 writes the JSON string of a wide string as UTF-8: pairs of
 * surrogates as one character, a lone surrogate escaped. */
static int fast_quote16(Out *o, JSString *p) {
  if (out_byte(o, '"')) return FAST_ERR;
  for (int i = 0; i < (int)p->len;) {
    uint32_t ch = string_getc(p, &i);
    if (ch < 0x80) {
      if (ch >= 0x20 && ch != '"' && ch != '\\') {
        if (out_byte(o, ch)) return FAST_ERR;
      } else if (out_escape(o, ch)) {
        return FAST_ERR;
      }
    } else if (is_surrogate(ch)) {
      if (out_escape(o, ch)) return FAST_ERR;
    } else {
      uint8_t u[UTF8_CHAR_LEN_MAX];
      o->non_ascii = true;
      if (out_write(o, u, utf8_encode(u, ch))) return FAST_ERR;
    }
  }
  return out_byte(o, '"');
}

static int fast_jsstring(Out *o, JSString *p) {
  return p->is_wide_char ? fast_quote16(o, p) : fast_quote8(o, str8(p), p->len);
}

static int fast_string(JSContext *c, Out *o, JSValueConst v) {
  if (JS_VALUE_GET_TAG(v) == JS_TAG_STRING) return fast_jsstring(o, JS_VALUE_GET_STRING(v));
  /* A rope: flattened first. */
  JSValue f = JS_ToString(c, v);
  if (JS_IsException(f)) return FAST_ERR;
  int r = fast_jsstring(o, JS_VALUE_GET_STRING(f));
  JS_FreeValue(c, f);
  return r;
}

/* fast_plain answers whether stringify may read p's own properties as they
 * are: an ordinary object or array none of whose prototypes, ordinary
 * objects and arrays themselves, has a toJSON. */
static bool fast_plain(JSObject *p) {
  for (JSObject *q = p->shape->proto; q != NULL; q = q->shape->proto) {
    if (q->class_id != JS_CLASS_OBJECT && q->class_id != JS_CLASS_ARRAY) return false;
    if (find_own_property1(q, JS_ATOM_toJSON) != NULL) return false;
  }
  return true;
}

static int fast_value(JSContext *c, Out *o, JSValueConst v, int depth);

static int fast_array(JSContext *c, Out *o, JSObject *p, int depth) {
  /* Only "length": an own toJSON or other property is QuickJS's case. */
  if (!p->fast_array || p->shape->prop_count != 1) return FAST_NO;
  JSValue lenv = p->prop[0].u.value;
  if (JS_VALUE_GET_TAG(lenv) != JS_TAG_INT || (uint32_t)JS_VALUE_GET_INT(lenv) != p->u.array.count) return FAST_NO;
  if (out_byte(o, '[')) return FAST_ERR;
  for (uint32_t i = 0; i < p->u.array.count; i++) {
    if (i > 0 && out_byte(o, ',')) return FAST_ERR;
    JSValueConst e = p->u.array.u.values[i];
    int t = JS_VALUE_GET_TAG(e);
    if (t == JS_TAG_UNDEFINED || t == JS_TAG_SYMBOL) {
      if (OUT_LIT(o, "null")) return FAST_ERR;
      continue;
    }
    int r = fast_value(c, o, e, depth + 1);
    if (r != FAST_OK) return r;
  }
  return out_byte(o, ']');
}

static int fast_object(JSContext *c, Out *o, JSObject *p, int depth) {
  JSRuntime *r = c->rt;
  JSShape *sh = p->shape;
  JSShapeProperty *prs = get_shape_prop(sh);
  JSProperty *pr = p->prop;
  bool first = true;
  if (out_byte(o, '{')) return FAST_ERR;
  for (int i = 0; i < sh->prop_count; i++, prs++, pr++) {
    JSAtom a = prs->atom;
    if (a == JS_ATOM_NULL) continue;  /* deleted */
    /* Index keys come first in key order, not in the shape's. */
    if (__JS_AtomIsTaggedInt(a) || a == JS_ATOM_toJSON) return FAST_NO;
    JSAtomStruct *as = r->atom_array[a];
    if (as->atom_type != JS_ATOM_TYPE_STRING) continue;  /* symbols, private names */
    uint32_t idx;
    if (is_num_string(&idx, as)) return FAST_NO;
    if (!(prs->flags & JS_PROP_ENUMERABLE)) continue;
    if ((prs->flags & JS_PROP_TMASK) != JS_PROP_NORMAL) return FAST_NO;  /* getters */
    JSValueConst v = pr->u.value;
    int t = JS_VALUE_GET_TAG(v);
    if (t == JS_TAG_UNDEFINED || t == JS_TAG_SYMBOL) continue;
    if (!first && out_byte(o, ',')) return FAST_ERR;
    first = false;
    int rc = fast_jsstring(o, as);
    if (rc != FAST_OK) return rc;
    if (out_byte(o, ':')) return FAST_ERR;
    rc = fast_value(c, o, v, depth + 1);
    if (rc != FAST_OK) return rc;
  }
  return out_byte(o, '}');
}

static int fast_value(JSContext *c, Out *o, JSValueConst v, int depth) {
  switch (JS_VALUE_GET_NORM_TAG(v)) {
  case JS_TAG_NULL:
    return OUT_LIT(o, "null");
  case JS_TAG_BOOL:
    return JS_VALUE_GET_BOOL(v) ? OUT_LIT(o, "true") : OUT_LIT(o, "false");
  case JS_TAG_INT: {
    char buf[16];
    return out_write(o, buf, i32toa(buf, JS_VALUE_GET_INT(v)));
  }
  case JS_TAG_FLOAT64: {
    double d = JS_VALUE_GET_FLOAT64(v);
    if (!isfinite(d)) return OUT_LIT(o, "null");
    /* Whole numbers below 2^53 print as their digits (-0 as 0), as
     * Number's toString does; others as QuickJS prints them. */
    if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(int64_t)d) {
      char buf[24];
      return out_write(o, buf, i64toa(buf, (int64_t)d));
    }
    JSValue s = JS_ToString(c, v);
    if (JS_IsException(s)) return FAST_ERR;
    JSString *p = JS_VALUE_GET_STRING(s);
    int r = p->is_wide_char ? FAST_NO : out_write(o, str8(p), p->len);
    JS_FreeValue(c, s);
    return r;
  }
  case JS_TAG_STRING:
  case JS_TAG_STRING_ROPE:
    return fast_string(c, o, v);
  case JS_TAG_OBJECT: {
    JSObject *p = JS_VALUE_GET_OBJ(v);
    if (depth >= FAST_MAX_DEPTH) return FAST_NO;  /* maybe a cycle: QuickJS says which */
    if (p->class_id == JS_CLASS_OBJECT) {
      if (!fast_plain(p)) return FAST_NO;
      return fast_object(c, o, p, depth);
    }
    if (p->class_id == JS_CLASS_ARRAY) {
      if (!fast_plain(p)) return FAST_NO;
      return fast_array(c, o, p, depth);
    }
    return FAST_NO;
  }
  default:  /* undefined, symbols, BigInt: QuickJS's answer */
    return FAST_NO;
  }
}

/* JSON.stringify(value, replacer, space), as installed by adkhost_js_init. */
static JSValue js_fast_stringify(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
  if (JS_IsUndefined(argv[1]) && JS_IsUndefined(argv[2])) {
    Out o = {0};
    int r = fast_value(c, &o, argv[0], 0);
    if (r == FAST_OK) {
      JSValue s = o.non_ascii ? JS_NewStringLen(c, (const char *)o.buf, o.len)
                              : js_new_string8_len(c, (const char *)o.buf, o.len);
      free(o.buf);
      return s;
    }
    free(o.buf);
    /* Out of memory in the buffer, or an exception JS_ToString threw. */
    if (r == FAST_ERR) return JS_HasException(c) ? JS_EXCEPTION : JS_ThrowOutOfMemory(c);
  }
  return js_json_stringify(c, this_val, argc, argv);
}

static void fail(const char *what);

static void install_fast_stringify(JSValueConst global) {
  JSValue json = JS_GetPropertyStr(ctx, global, "JSON");
  JSValue fn = JS_NewCFunction2(ctx, js_fast_stringify, "stringify", 3, JS_CFUNC_generic, 0);
  if (JS_DefinePropertyValueStr(ctx, json, "stringify", fn, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0) {
    fail("installing JSON.stringify");
  }
  JS_FreeValue(ctx, json);
}

/* ---- The hook's input message, parsed here from the host's bytes: no
 * JavaScript string of the input, and keys found as the atoms they
 * already are, not built as strings first. The input is JSON from the
 * host; anything this does not take (numbers of more than 64 characters,
 * nesting deeper than 64, invalid JSON, bytes that are not UTF-8) goes
 * to JSON.parse in the SDK, which answers as before. */

typedef struct {
  JSContext *c;
  const uint8_t *p, *end;
  bool non_ascii;  /* in_skip stepped over a byte beyond ASCII */
} FastIn;


#define FAST_FAIL JS_MKVAL(JS_TAG_UNINITIALIZED, 0)

static void in_ws(FastIn *in) {
  while (in->p < in->end && (*in->p == ' ' || *in->p == '\n' || *in->p == '\r' || *in->p == '\t')) in->p++;
}

static int hexval(uint8_t h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}

/* in_string parses a string after its opening quote: a JS string, or
 * FAST_FAIL, or JS_EXCEPTION. */
static JSValue in_string(FastIn *in) {
  const uint8_t *s = in->p;
  in->p = plain_run(in->p, in->end);
  if (in->p < in->end && *in->p == '"') {
    JSValue v = js_new_string8_len(in->c, (const char *)s, in->p - s);
    in->p++;
    return v;
  }
  /* Escapes or UTF-8: character by character, as QuickJS's parser does. */
  StringBuffer b;
  string_buffer_init(in->c, &b, (in->p - s) + 16);
  string_buffer_write8(&b, s, in->p - s);
  for (;;) {
    if (in->p >= in->end) goto fail;
    uint32_t ch = *in->p++;
    if (ch == '"') break;
    if (ch < 0x20) goto fail;
    if (ch == '\\') {
      if (in->p >= in->end) goto fail;
      ch = *in->p++;
      switch (ch) {
      case 'b': ch = '\b'; break;
      case 'f': ch = '\f'; break;
      case 'n': ch = '\n'; break;
      case 'r': ch = '\r'; break;
      case 't': ch = '\t'; break;
      case '"': case '\\': case '/': break;
      case 'u':
        if (in->end - in->p < 4) goto fail;
        ch = 0;
        for (int i = 0; i < 4; i++) {
          int h = hexval(*in->p++);
          if (h < 0) goto fail;
          ch = (ch << 4) | h;
        }
        break;
      default:
        goto fail;
      }
    } else if (ch >= 0x80) {
      /* utf8_decode may read UTF8_CHAR_LEN_MAX bytes: near the end, a
       * zero-padded copy (a zero ends any sequence). */
      const uint8_t *at = in->p - 1, *next;
      uint8_t tail[UTF8_CHAR_LEN_MAX] = {0};
      if (in->end - at < UTF8_CHAR_LEN_MAX) {
        memcpy(tail, at, in->end - at);
        ch = utf8_decode(tail, &next);
        next = at + (next - tail);
      } else {
        ch = utf8_decode(at, &next);
      }
      if (next == in->p) goto fail;  /* not UTF-8 */
      in->p = next;
    }
    if (string_buffer_putc(&b, ch)) {
      string_buffer_free(&b);
      return JS_EXCEPTION;
    }
  }
  return string_buffer_end(&b);
fail:
  string_buffer_free(&b);
  return FAST_FAIL;
}

static JSValue in_number(FastIn *in) {
  const uint8_t *s = in->p;
  bool neg = false, integer = true;
  if (*in->p == '-') {
    neg = true;
    in->p++;
  }
  const uint8_t *digits = in->p;
  while (in->p < in->end && *in->p >= '0' && *in->p <= '9') in->p++;
  size_t nd = in->p - digits;
  if (nd == 0 || (digits[0] == '0' && nd > 1)) return FAST_FAIL;
  if (in->p < in->end && *in->p == '.') {
    integer = false;
    in->p++;
    const uint8_t *f = in->p;
    while (in->p < in->end && *in->p >= '0' && *in->p <= '9') in->p++;
    if (in->p == f) return FAST_FAIL;
  }
  if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
    integer = false;
    in->p++;
    if (in->p < in->end && (*in->p == '+' || *in->p == '-')) in->p++;
    const uint8_t *e = in->p;
    while (in->p < in->end && *in->p >= '0' && *in->p <= '9') in->p++;
    if (in->p == e) return FAST_FAIL;
  }
  if (integer && nd <= 9 && !(neg && digits[0] == '0')) {
    int32_t v = 0;
    for (size_t i = 0; i < nd; i++) v = v * 10 + (digits[i] - '0');
    return JS_NewInt32(in->c, neg ? -v : v);
  }
  /* What QuickJS's JSON.parse does: strtod of the token. */
  char buf[65];
  size_t n = in->p - s;
  if (n >= sizeof buf) return FAST_FAIL;
  memcpy(buf, s, n);
  buf[n] = 0;
  return JS_NewFloat64(in->c, strtod(buf, NULL));
}

static JSValue in_value(FastIn *in, int depth);

static JSValue in_object(FastIn *in, int depth) {
  JSContext *c = in->c;
  JSValue obj = JS_NewObject(c);
  if (JS_IsException(obj)) return obj;
  in_ws(in);
  if (in->p < in->end && *in->p == '}') {
    in->p++;
    return obj;
  }
  for (;;) {
    if (in->p >= in->end || *in->p != '"') goto fail;
    in->p++;
    /* A plain key: found among the atoms without a string. */
    const uint8_t *k = in->p;
    in->p = plain_run(in->p, in->end);
    JSAtom atom;
    if (in->p < in->end && *in->p == '"') {
      atom = JS_NewAtomLen(c, (const char *)k, in->p - k);
      in->p++;
    } else {
      in->p = k;
      JSValue ks = in_string(in);
      if (JS_IsException(ks)) goto exception;
      if (JS_VALUE_GET_TAG(ks) == JS_TAG_UNINITIALIZED) goto fail;
      atom = JS_ValueToAtom(c, ks);
      JS_FreeValue(c, ks);
    }
    if (atom == JS_ATOM_NULL) goto exception;
    in_ws(in);
    if (in->p >= in->end || *in->p != ':') {
      JS_FreeAtom(c, atom);
      goto fail;
    }
    in->p++;
    JSValue v = in_value(in, depth + 1);
    if (JS_IsException(v) || JS_VALUE_GET_TAG(v) == JS_TAG_UNINITIALIZED) {
      JS_FreeAtom(c, atom);
      JS_FreeValue(c, obj);
      return v;
    }
    /* A new key of the new object: added as JS_DefinePropertyValue would
     * end up adding it, without its checks; a repeated key replaces. */
    JSObject *po = JS_VALUE_GET_OBJ(obj);
    int r = 0;
    if (find_own_property1(po, atom) == NULL) {
      JSProperty *pr = add_property(c, po, atom, JS_PROP_C_W_E);
      if (pr == NULL) {
        JS_FreeValue(c, v);
        r = -1;
      } else {
        pr->u.value = v;
      }
    } else {
      r = JS_DefinePropertyValue(c, obj, atom, v, JS_PROP_C_W_E);
    }
    JS_FreeAtom(c, atom);
    if (r < 0) goto exception;
    in_ws(in);
    if (in->p >= in->end) goto fail;
    if (*in->p == '}') {
      in->p++;
      return obj;
    }
    if (*in->p++ != ',') goto fail;
    in_ws(in);
  }
fail:
  JS_FreeValue(c, obj);
  return FAST_FAIL;
exception:
  JS_FreeValue(c, obj);
  return JS_EXCEPTION;
}

static JSValue in_array(FastIn *in, int depth) {
  JSContext *c = in->c;
  JSValue arr = JS_NewArray(c);
  if (JS_IsException(arr)) return arr;
  in_ws(in);
  if (in->p < in->end && *in->p == ']') {
    in->p++;
    return arr;
  }
  for (uint32_t i = 0;; i++) {
    JSValue v = in_value(in, depth + 1);
    if (JS_IsException(v) || JS_VALUE_GET_TAG(v) == JS_TAG_UNINITIALIZED) {
      JS_FreeValue(c, arr);
      return v;
    }
    if (JS_DefinePropertyValueUint32(c, arr, i, v, JS_PROP_C_W_E) < 0) {
      JS_FreeValue(c, arr);
      return JS_EXCEPTION;
    }
    in_ws(in);
    if (in->p >= in->end) break;
    if (*in->p == ']') {
      in->p++;
      return arr;
    }
    if (*in->p++ != ',') break;
  }
  JS_FreeValue(c, arr);
  return FAST_FAIL;
}

static bool in_word(FastIn *in, const char *w, size_t n) {
  if ((size_t)(in->end - in->p) < n || memcmp(in->p, w, n) != 0) return false;
  in->p += n;
  return true;
}

/* in_value: a value, or FAST_FAIL, or JS_EXCEPTION. */
static JSValue in_value(FastIn *in, int depth) {
  if (depth >= FAST_MAX_DEPTH) return FAST_FAIL;
  in_ws(in);
  if (in->p >= in->end) return FAST_FAIL;
  switch (*in->p) {
  case '{':
    in->p++;
    return in_object(in, depth);
  case '[':
    in->p++;
    return in_array(in, depth);
  case '"':
    in->p++;
    return in_string(in);
  case 't':
    return in_word(in, "true", 4) ? JS_TRUE : FAST_FAIL;
  case 'f':
    return in_word(in, "false", 5) ? JS_FALSE : FAST_FAIL;
  case 'n':
    return in_word(in, "null", 4) ? JS_NULL : FAST_FAIL;
  default:
    if (*in->p == '-' || (*in->p >= '0' && *in->p <= '9')) return in_number(in);
    return FAST_FAIL;
  }
}

/* parse_input answers the input message as JSON.parse would, or the
 * input as a string for the SDK's JSON.parse (which throws its error), or
 * JS_EXCEPTION (out of memory). */
static JSValue parse_input(const char *buf, uint32_t len) {
  FastIn in = {ctx, (const uint8_t *)buf, (const uint8_t *)buf + len};
  JSValue v = in_value(&in, 0);
  if (JS_IsException(v)) return v;
  if (JS_VALUE_GET_TAG(v) != JS_TAG_UNINITIALIZED) {
    in_ws(&in);
    if (in.p == in.end) return v;
    JS_FreeValue(ctx, v);  /* trailing data */
  }
  return JS_NewStringLen(ctx, buf, len);
}

/* ---- Stepping over a value without building it: what in_value takes,
 * and only that (the same grammar, depth and number limits), so that a
 * value stepped over here would have parsed there. 0, or -1 for what
 * in_value does not take. */

static int in_skip_string(FastIn *in) {
  for (;;) {
    in->p = plain_run(in->p, in->end);
    if (in->p >= in->end) return -1;
    uint32_t ch = *in->p++;
    if (ch == '"') return 0;
    if (ch < 0x20) return -1;
    if (ch == '\\') {
      if (in->p >= in->end) return -1;
      switch (*in->p++) {
      case 'b': case 'f': case 'n': case 'r': case 't': case '"': case '\\': case '/':
        break;
      case 'u':
        if (in->end - in->p < 4) return -1;
        for (int i = 0; i < 4; i++) {
          if (hexval(*in->p++) < 0) return -1;
        }
        break;
      default:
        return -1;
      }
    } else if (ch >= 0x80) {
      in->non_ascii = true;
      /* As in_string: a zero-padded copy near the end. */
      const uint8_t *at = in->p - 1, *next;
      uint8_t tail[UTF8_CHAR_LEN_MAX] = {0};
      if (in->end - at < UTF8_CHAR_LEN_MAX) {
        memcpy(tail, at, in->end - at);
        utf8_decode(tail, &next);
        next = at + (next - tail);
      } else {
        utf8_decode(at, &next);
      }
      if (next == in->p) return -1;
      in->p = next;
    }
  }
}

static int in_skip(FastIn *in, int depth) {
  if (depth >= FAST_MAX_DEPTH) return -1;
  in_ws(in);
  if (in->p >= in->end) return -1;
  switch (*in->p) {
  case '{':
    in->p++;
    in_ws(in);
    if (in->p < in->end && *in->p == '}') {
      in->p++;
      return 0;
    }
    for (;;) {
      if (in->p >= in->end || *in->p != '"') return -1;
      in->p++;
      if (in_skip_string(in)) return -1;
      in_ws(in);
      if (in->p >= in->end || *in->p != ':') return -1;
      in->p++;
      if (in_skip(in, depth + 1)) return -1;
      in_ws(in);
      if (in->p >= in->end) return -1;
      if (*in->p == '}') {
        in->p++;
        return 0;
      }
      if (*in->p++ != ',') return -1;
      in_ws(in);
    }
  case '[':
    in->p++;
    in_ws(in);
    if (in->p < in->end && *in->p == ']') {
      in->p++;
      return 0;
    }
    for (;;) {
      if (in_skip(in, depth + 1)) return -1;
      in_ws(in);
      if (in->p >= in->end) return -1;
      if (*in->p == ']') {
        in->p++;
        return 0;
      }
      if (*in->p++ != ',') return -1;
    }
  case '"':
    in->p++;
    return in_skip_string(in);
  case 't':
    return in_word(in, "true", 4) ? 0 : -1;
  case 'f':
    return in_word(in, "false", 5) ? 0 : -1;
  case 'n':
    return in_word(in, "null", 4) ? 0 : -1;
  default:
    /* A number is no heap value: nothing to free. */
    if (*in->p == '-' || (*in->p >= '0' && *in->p <= '9')) {
      return JS_VALUE_GET_TAG(in_number(in)) == JS_TAG_UNINITIALIZED ? -1 : 0;
    }
    return -1;
  }
}

/* ---- A tool call's input, {"tool", "args", "context", "confirmation"}
 * (ABI.md §6), taken apart here for the SDK's tool entry
 * (__adkhostToolCall): no message object is built, other fields
 * (abiVersion) are stepped over, and the context, which most tools never
 * read, is handed on as its JSON text, parsed by the SDK when the tool
 * reads it. The fields are parsed as parse_input parses them. */

enum { TOOL_TOOL, TOOL_ARGS, TOOL_CONTEXT, TOOL_CONFIRMATION, TOOL_FIELDS };

static int tool_field(const uint8_t *k, size_t n) {
  switch (n) {
  case 4:
    if (memcmp(k, "tool", 4) == 0) return TOOL_TOOL;
    if (memcmp(k, "args", 4) == 0) return TOOL_ARGS;
    break;
  case 7:
    if (memcmp(k, "context", 7) == 0) return TOOL_CONTEXT;
    break;
  case 12:
    if (memcmp(k, "confirmation", 12) == 0) return TOOL_CONFIRMATION;
    break;
  }
  return -1;
}

/* parse_tool_input fills v (undefined for an absent field; a repeated
 * field's last value, as JSON.parse keeps): 1, or 0 for an input it leaves
 * to parse_input (not JSON it takes, a key with escapes or beyond ASCII, a
 * context that is not an object), or -1 (out of memory). */
static int parse_tool_input(const char *buf, uint32_t len, JSValue v[TOOL_FIELDS]) {
  FastIn in = {ctx, (const uint8_t *)buf, (const uint8_t *)buf + len};
  int rc = 0;
  in_ws(&in);
  if (in.p >= in.end || *in.p++ != '{') return 0;
  in_ws(&in);
  if (in.p < in.end && *in.p == '}') {
    in.p++;
    goto end;
  }
  for (;;) {
    if (in.p >= in.end || *in.p != '"') goto out;
    const uint8_t *k = ++in.p;
    while (in.p < in.end && *in.p >= 0x20 && *in.p < 0x80 && *in.p != '"' && *in.p != '\\') in.p++;
    if (in.p >= in.end || *in.p != '"') goto out;
    int f = tool_field(k, in.p - k);
    in.p++;
    in_ws(&in);
    if (in.p >= in.end || *in.p != ':') goto out;
    in.p++;
    JSValue val;
    if (f < 0) {
      if (in_skip(&in, 1)) goto out;
      val = JS_UNDEFINED;
    } else if (f == TOOL_CONTEXT) {
      in_ws(&in);
      if (in.p >= in.end || *in.p != '{') goto out;
      const uint8_t *start = in.p;
      in.non_ascii = false;
      if (in_skip(&in, 1)) goto out;
      /* Plain ASCII (escapes are ASCII too) is its own string. */
      val = in.non_ascii ? JS_NewStringLen(ctx, (const char *)start, in.p - start)
                         : js_new_string8_len(ctx, (const char *)start, in.p - start);
    } else {
      val = in_value(&in, 1);
      if (JS_VALUE_GET_TAG(val) == JS_TAG_UNINITIALIZED) goto out;
    }
    if (JS_IsException(val)) {
      rc = -1;
      goto out;
    }
    if (f >= 0) {
      JS_FreeValue(ctx, v[f]);
      v[f] = val;
    }
    in_ws(&in);
    if (in.p >= in.end) goto out;
    if (*in.p == '}') {
      in.p++;
      break;
    }
    if (*in.p++ != ',') goto out;
    in_ws(&in);
  }
end:
  in_ws(&in);
  if (in.p == in.end) return 1;
out:
  for (int i = 0; i < TOOL_FIELDS; i++) {
    JS_FreeValue(ctx, v[i]);
    v[i] = JS_UNDEFINED;
  }
  return rc;
}

/* ---- Initialisation (run by wizer at build time). */

static void print_exception(void) {
  JSValue exc = JS_GetException(ctx);
  const char *s = JS_ToCString(ctx, exc);
  fprintf(stderr, "%s\n", s ? s : "(an exception that cannot be printed)");
  if (s) JS_FreeCString(ctx, s);
  JSValue stack = JS_GetPropertyStr(ctx, exc, "stack");
  if (JS_IsString(stack)) {
    const char *st = JS_ToCString(ctx, stack);
    if (st) {
      fprintf(stderr, "%s", st);
      JS_FreeCString(ctx, st);
    }
  }
  JS_FreeValue(ctx, stack);
  JS_FreeValue(ctx, exc);
}

static void fail(const char *what) {
  fprintf(stderr, "adkhost js runtime: %s\n", what);
  if (ctx && JS_HasException(ctx)) print_exception();
  abort();
}

static void set_env_string(JSValue obj, const char *prop, const char *env) {
  const char *v = getenv(env);
  JS_SetPropertyStr(ctx, obj, prop, JS_NewString(ctx, v ? v : ""));
}

/* settle runs the job queue until promise p is no longer pending: the
 * sandbox has no event loop, so a promise that waits for anything but
 * other promises never settles. Answers the result (owned) or
 * JS_EXCEPTION with the rejection thrown; settle_state also says the
 * promise's state (pending: it never settled). */
static JSValue settle_state(JSValue p, int *state) {
  JSContext *c1;
  while (JS_PromiseState(ctx, p) == JS_PROMISE_PENDING && JS_IsJobPending(rt)) {
    if (JS_ExecutePendingJob(rt, &c1) < 0) {
      /* An exception in a job nobody awaits: report it, go on. */
      print_exception();
    }
  }
  JSPromiseStateEnum st = JS_PromiseState(ctx, p);
  *state = st;
  if (st == JS_PROMISE_PENDING) {
    JS_FreeValue(ctx, p);
    return JS_ThrowTypeError(ctx, "a promise never settled: the sandbox has no event loop "
                                  "(no timers, sockets or Node APIs), only other promises can resolve one");
  }
  JSValue r = JS_PromiseResult(ctx, p);
  JS_FreeValue(ctx, p);
  if (st == JS_PROMISE_REJECTED) return JS_Throw(ctx, r);
  return r;
}

static JSValue settle(JSValue p) {
  int st;
  return settle_state(p, &st);
}

/*
 * The bundle to evaluate is the file ADKHOST_JS_BUNDLE; ADKHOST_JS_NAME and
 * ADKHOST_JS_CAPABILITIES (comma-separated) are what `module build` was
 * told. All three are given to wizer with --inherit-env.
 */
__attribute__((export_name("adkhost_js_init"))) void adkhost_js_init(void) {
  building = true;
  rt = JS_NewRuntime();
  if (rt == NULL) fail("JS_NewRuntime");
  ctx = JS_NewContext(rt);
  if (ctx == NULL) fail("JS_NewContext");
  set_stack_limit();

  JSValue global = JS_GetGlobalObject(ctx);
  JSValue host = JS_NewObject(ctx);
  JS_SetPropertyFunctionList(ctx, host, host_funcs, countof(host_funcs));
  set_env_string(host, "buildName", "ADKHOST_JS_NAME");
  set_env_string(host, "buildCapabilities", "ADKHOST_JS_CAPABILITIES");
  JS_DefinePropertyValueStr(ctx, global, "__adkhost", host, 0);
  install_fast_stringify(global);

  const char *path = getenv("ADKHOST_JS_BUNDLE");
  if (path == NULL) fail("ADKHOST_JS_BUNDLE is not set");
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "adkhost js runtime: cannot open %s\n", path);
    abort();
  }
  size_t cap = 1 << 16, n = 0;
  char *src = malloc(cap);
  for (;;) {
    if (src == NULL) fail("out of memory reading the bundle");
    n += fread(src + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    cap *= 2;
    src = realloc(src, cap);
  }
  fclose(f);
  src[n] = 0;

  JSValue r = JS_Eval(ctx, src, n, "bundle.js", JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_ASYNC);
  free(src);
  if (JS_IsException(r)) fail("evaluating the module failed");
  /* JS_EVAL_FLAG_ASYNC: the script's completion is a promise (top-level
   * await in the bundle). */
  r = settle(r);
  if (JS_IsException(r)) fail("evaluating the module failed");
  JS_FreeValue(ctx, r);

  dispatch_fn = JS_GetPropertyStr(ctx, global, "__adkhostDispatch");
  tool_call_fn = JS_GetPropertyStr(ctx, global, "__adkhostToolCall");
  tool_done_fn = JS_GetPropertyStr(ctx, global, "__adkhostToolDone");
  tool_fail_fn = JS_GetPropertyStr(ctx, global, "__adkhostToolFail");
  tool_entry = JS_IsFunction(ctx, tool_call_fn) && JS_IsFunction(ctx, tool_done_fn) && JS_IsFunction(ctx, tool_fail_fn);
  JS_FreeValue(ctx, global);
  if (!JS_IsFunction(ctx, dispatch_fn)) {
    fail("the module declares nothing: import { tool } from \"adkhost\" and declare a tool, "
         "callback or plugin (sdk/typescript/README.md)");
  }
  /* The SDK builds the describe message now, so that a bad declaration
   * fails the build, not the load. */
  JSValue args[2] = {JS_NewString(ctx, "__init"), JS_NewString(ctx, "")};
  r = JS_Call(ctx, dispatch_fn, JS_UNDEFINED, 2, args);
  JS_FreeValue(ctx, args[0]);
  JS_FreeValue(ctx, args[1]);
  if (JS_IsException(r)) fail("declaring the module failed");
  JS_FreeValue(ctx, r);
  JS_RunGC(rt);
  building = false;
  ready = true;
  keep_shapes = true;
}

/* ---- Hooks: every one goes to __adkhostDispatch(hook, input), which
 * answers a string (or a promise of one) and never throws. */

static uint64_t error_output(const char *prefix) {
  /* JSON-encode "prefix: message" with QuickJS itself. */
  JSValue exc = JS_GetException(ctx);
  const char *m = JS_ToCString(ctx, exc);
  JS_FreeValue(ctx, exc);
  JSValue obj = JS_NewObject(ctx);
  JS_SetPropertyStr(ctx, obj, "abiVersion", JS_NewInt32(ctx, 1));
  char buf[1024];
  snprintf(buf, sizeof buf, "%s: %s", prefix, m ? m : "an exception that cannot be printed");
  if (m) JS_FreeCString(ctx, m);
  JS_SetPropertyStr(ctx, obj, "error", JS_NewString(ctx, buf));
  JSValue js = JS_JSONStringify(ctx, obj, JS_UNDEFINED, JS_UNDEFINED);
  JS_FreeValue(ctx, obj);
  size_t len;
  const char *s = JS_ToCStringLen(ctx, &len, js);
  uint64_t out = s ? adkhost_output(s, len)
                   : adkhost_output_str("{\"abiVersion\":1,\"error\":\"internal error in the JavaScript runtime\"}");
  if (s) JS_FreeCString(ctx, s);
  JS_FreeValue(ctx, js);
  return out;
}

/* enter prepares a call: false (with the output in *out) if the runtime
 * was not initialised. */
static bool enter(uint64_t *out) {
  if (!ready) {
    *out = adkhost_output_str("{\"abiVersion\":1,\"error\":\"the JavaScript runtime was not initialised: build the module with adkhost module build\"}");
    return false;
  }
  set_stack_limit();
  if (!reseeded) {
    /* The snapshot holds Math.random's state from build time: every
     * instance would draw the same numbers. WASI's random_get is real
     * randomness under the `random` grant, deterministic without. */
    uint64_t seed = 0;
    if (getentropy(&seed, sizeof seed) == 0 && seed != 0) ctx->random_state = seed;
    reseeded = true;
  }
  return true;
}

/* run_jobs runs the jobs a hook left behind (promises nobody awaited)
 * now, not in the next call. */
static void run_jobs(void) {
  JSContext *c1;
  while (JS_IsJobPending(rt)) {
    if (JS_ExecutePendingJob(rt, &c1) < 0) print_exception();
  }
}

/* string_output answers r (owned), the output message's JSON, as the
 * hook's output. */
static uint64_t string_output(JSValue r) {
  if (JS_IsException(r)) return error_output("internal error in the JavaScript runtime");
  if (!JS_IsString(r)) {
    JS_FreeValue(ctx, r);
    return adkhost_output_str("{\"abiVersion\":1,\"error\":\"internal error in the JavaScript runtime: the dispatcher answered no string\"}");
  }
  if (JS_VALUE_GET_TAG(r) == JS_TAG_STRING) {
    /* ASCII (most outputs: JSON escapes the rest of the ASCII range) is
     * already UTF-8: copied once, into the output block. */
    JSString *p = JS_VALUE_GET_STRING(r);
    if (!p->is_wide_char) {
      const uint8_t *b = str8(p);
      uint32_t i = 0;
      while (i < p->len && b[i] < 0x80) i++;
      if (i == p->len) {
        uint64_t out = adkhost_output((const char *)b, p->len);
        JS_FreeValue(ctx, r);
        return out;
      }
    }
  }
  size_t n;
  const char *s = JS_ToCStringLen(ctx, &n, r);
  JS_FreeValue(ctx, r);
  if (s == NULL) return error_output("internal error in the JavaScript runtime");
  uint64_t out = adkhost_output(s, n);
  JS_FreeCString(ctx, s);
  return out;
}

static uint64_t call(const char *hook, const char *in, uint32_t len) {
  uint64_t out;
  if (!enter(&out)) return out;
  /* The input goes to the dispatcher parsed (parse_input). */
  JSValue args[2] = {JS_NewString(ctx, hook), in && len > 0 ? parse_input(in, len) : JS_NewString(ctx, "")};
  if (JS_IsException(args[1])) {
    JS_FreeValue(ctx, args[0]);
    return error_output("internal error in the JavaScript runtime");
  }
  JSValue r = JS_Call(ctx, dispatch_fn, JS_UNDEFINED, 2, args);
  JS_FreeValue(ctx, args[0]);
  JS_FreeValue(ctx, args[1]);
  if (!JS_IsException(r) && JS_IsPromise(r)) r = settle(r);
  run_jobs();
  return string_output(r);
}

/* tool_fail answers the output of a tool call that threw, or whose
 * result's promise was rejected, with the exception pending: the SDK's
 * __adkhostToolFail(e) words it, as the dispatcher does. */
static uint64_t tool_fail(void) {
  JSValue e = JS_GetException(ctx);
  JSValue r = JS_Call(ctx, tool_fail_fn, JS_UNDEFINED, 1, &e);
  JS_FreeValue(ctx, e);
  run_jobs();
  return string_output(r);
}

/* tool_call answers a tool call through the SDK's tool entry,
 * __adkhostToolCall(tool, args, contextJSON, confirmation), which answers
 * the tool's result (or a promise of it) or throws. The output,
 * {"result": ..., "abiVersion": 1}, is written here with the fast
 * stringify; a result it leaves to QuickJS's goes back to the SDK
 * (__adkhostToolDone), which answers the output as the dispatcher does.
 * An input parse_tool_input does not take goes to the dispatcher. */
static uint64_t tool_call(const char *in, uint32_t len) {
  uint64_t out;
  if (!tool_entry) return call("tool_call", in, len);
  if (!enter(&out)) return out;
  JSValue v[TOOL_FIELDS] = {JS_UNDEFINED, JS_UNDEFINED, JS_UNDEFINED, JS_UNDEFINED};
  int st = in && len > 0 ? parse_tool_input(in, len, v) : 0;
  if (st == 0) return call("tool_call", in, len);
  if (st < 0) return error_output("internal error in the JavaScript runtime");
  JSValue r = JS_Call(ctx, tool_call_fn, JS_UNDEFINED, TOOL_FIELDS, v);
  for (int i = 0; i < TOOL_FIELDS; i++) JS_FreeValue(ctx, v[i]);
  if (JS_IsException(r)) return tool_fail();
  if (JS_IsPromise(r)) {
    r = settle_state(r, &st);
    if (JS_IsException(r)) {
      if (st == JS_PROMISE_PENDING) {
        run_jobs();
        return error_output("internal error in the JavaScript runtime");
      }
      return tool_fail();
    }
  }
  Out o = {0};
  int rc = OUT_LIT(&o, "{\"result\":");
  if (rc == FAST_OK) {
    /* At depth 1, as in the object the SDK would encode. */
    rc = JS_IsUndefined(r) ? OUT_LIT(&o, "null") : fast_value(ctx, &o, r, 1);
  }
  if (rc == FAST_OK) rc = OUT_LIT(&o, ",\"abiVersion\":1}");
  if (rc != FAST_OK) {
    free(o.buf);
    if (rc == FAST_ERR) {
      JS_FreeValue(ctx, r);
      if (!JS_HasException(ctx)) JS_ThrowOutOfMemory(ctx);
      return tool_fail();
    }
    JSValue s = JS_Call(ctx, tool_done_fn, JS_UNDEFINED, 1, &r);
    JS_FreeValue(ctx, r);
    run_jobs();
    return string_output(s);
  }
  JS_FreeValue(ctx, r);
  run_jobs();
  /* The buffer is the output block (malloc'd: the host frees it with
   * adkhost_free). */
  return adkhost_pack(o.buf, (uint32_t)o.len);
}

ADKHOST_HOOK(tool_call, in, len) { return tool_call(in, len); }

#define JS_HOOK(h) ADKHOST_HOOK(h, in, len) { return call(#h, in, len); }
JS_HOOK(describe)
JS_HOOK(before_agent)
JS_HOOK(after_agent)
JS_HOOK(before_model)
JS_HOOK(after_model)
JS_HOOK(on_model_error)
JS_HOOK(before_tool)
JS_HOOK(after_tool)
JS_HOOK(on_tool_error)
JS_HOOK(on_user_message)
JS_HOOK(before_run)
JS_HOOK(on_event)
JS_HOOK(after_run)
JS_HOOK(on_agent_error)
JS_HOOK(on_run_error)
