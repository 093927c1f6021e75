/*
 * adkhost.h: ABI v1 for adkhost guests written in C (native transport).
 *
 * The contract is abi/ABI.md; this header is a transcription of its §3
 * (exports), §4 (host functions) and §10 (status codes), plus a few helpers.
 * Build a guest as a WASI reactor with clang and wasi-libc:
 *
 *   clang --target=wasm32-wasi -O2 -mexec-model=reactor \
 *         -I sdk/c -o guest.wasm guest.c sdk/c/adkhost.c
 *
 * (add --sysroot=/usr/share/wasi-sysroot when wasi-libc lives there; the
 * Debian packages clang, lld, wasi-libc and libclang-rt-dev-wasm32 need no
 * --sysroot.) adkhost.c provides the version marker adkhost_abi_version_1
 * and adkhost_alloc / adkhost_free on top of malloc and free; the guest
 * provides adkhost_describe and one export per hook it implements:
 *
 *   #include "adkhost.h"
 *
 *   static const char DESCRIBE[] =
 *     "{\"abiVersion\":1,\"name\":\"guard\",\"hooks\":[\"before_model\"]}";
 *
 *   ADKHOST_DESCRIBE(in, len) { return adkhost_output_str(DESCRIBE); }
 *
 *   ADKHOST_HOOK(before_model, in, len) {
 *     return ADKHOST_NOTHING;            // empty output: nothing to change
 *   }
 *
 * Inputs and outputs are UTF-8 JSON (ABI.md §6). The input block belongs to
 * the host: read it during the hook, never free or keep it. An output built
 * with adkhost_output belongs to the host once the hook returns (it frees
 * it with adkhost_free). A result a host function returns (state_get, ...)
 * belongs to the guest: release it with free().
 */
#ifndef ADKHOST_H
#define ADKHOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes (ABI.md §10). Treat an unknown non-zero code as FAILED. */
enum {
  ADKHOST_OK = 0,
  ADKHOST_NOT_FOUND = 1,
  ADKHOST_INVALID_ARGUMENT = 2,
  ADKHOST_DENIED = 3,
  ADKHOST_UNAVAILABLE = 4,
  ADKHOST_TOO_LARGE = 5,
  ADKHOST_BAD_POINTER = 6,
  ADKHOST_FAILED = 7,
  ADKHOST_ALLOC_FAILED = 8,
};

/* Log levels of the log host function (log/slog levels). */
enum {
  ADKHOST_LOG_DEBUG = -4,
  ADKHOST_LOG_INFO = 0,
  ADKHOST_LOG_WARN = 4,
  ADKHOST_LOG_ERROR = 8,
};

/* ---- Exports (ABI.md §3). */

/* ADKHOST_EXPORT(name) gives a function the wasm export name `name`. */
#define ADKHOST_EXPORT(name) __attribute__((export_name(#name)))

/* The version marker, alloc and free are defined in adkhost.c. */
ADKHOST_EXPORT(adkhost_abi_version_1) void adkhost_abi_version_1(void);
ADKHOST_EXPORT(adkhost_alloc) uint32_t adkhost_alloc(uint32_t size);
ADKHOST_EXPORT(adkhost_free) void adkhost_free(uint32_t ptr, uint32_t size);

/*
 * ADKHOST_DESCRIBE(in, len) { ... } defines adkhost_describe;
 * ADKHOST_HOOK(hook, in, len) { ... } defines adkhost_<hook>, for hook one
 * of tool_call, before_agent, after_agent, before_model, after_model,
 * on_model_error, before_tool, after_tool, on_tool_error, on_user_message,
 * before_run, on_event, after_run. In the body, `in` is a
 * `const char *` to the input message and `len` its length (a uint32_t);
 * the body returns a packed output (adkhost_output, ADKHOST_NOTHING).
 * Each hook must also be listed in the describe message's "hooks".
 */
#define ADKHOST_HOOK(hook, in, len)                                          \
  static uint64_t adkhost_hook_##hook(const char *in, uint32_t len);         \
  ADKHOST_EXPORT(adkhost_##hook)                                             \
  uint64_t adkhost_##hook(uint32_t adkhost_ptr_, uint32_t adkhost_len_) {    \
    return adkhost_hook_##hook((const char *)(uintptr_t)adkhost_ptr_,        \
                               adkhost_len_);                                \
  }                                                                          \
  static uint64_t adkhost_hook_##hook(const char *in, uint32_t len)
#define ADKHOST_DESCRIBE(in, len) ADKHOST_HOOK(describe, in, len)

/* The empty output: "nothing to change" (ABI.md §6). */
#define ADKHOST_NOTHING ((uint64_t)0)

/* adkhost_pack packs an output block as a hook returns it. */
static inline uint64_t adkhost_pack(const void *ptr, uint32_t len) {
  return ((uint64_t)(uintptr_t)ptr << 32) | (uint64_t)len;
}

/*
 * adkhost_output copies len bytes into a fresh block and returns it packed;
 * the host frees it. adkhost_output_str does the same for a C string. They
 * return ADKHOST_NOTHING for no bytes, and a trap (abort) if out of memory.
 */
uint64_t adkhost_output(const char *msg, size_t len);
uint64_t adkhost_output_str(const char *msg);

/* ---- Host functions (ABI.md §4), imported from module "adkhost". */

#define ADKHOST_IMPORT(name) \
  __attribute__((import_module("adkhost"), import_name(#name)))

/*
 * Functions that return data take ret_ptr and ret_len: on ADKHOST_OK the
 * host writes there the address and length of a block it allocated with
 * adkhost_alloc (0, 0 for an empty result). The guest owns it: free() it.
 */
ADKHOST_IMPORT(state_get)
int32_t adkhost_state_get(const char *key, uint32_t key_len, char **ret_ptr, uint32_t *ret_len);
ADKHOST_IMPORT(state_set)
int32_t adkhost_state_set(const char *key, uint32_t key_len, const char *json, uint32_t json_len);
ADKHOST_IMPORT(state_delete)
int32_t adkhost_state_delete(const char *key, uint32_t key_len);
ADKHOST_IMPORT(transfer_to_agent)
int32_t adkhost_transfer_to_agent(const char *name, uint32_t name_len);
ADKHOST_IMPORT(escalate)
int32_t adkhost_escalate(void);
ADKHOST_IMPORT(skip_summarization)
int32_t adkhost_skip_summarization(void);
ADKHOST_IMPORT(request_confirmation)
int32_t adkhost_request_confirmation(const char *hint, uint32_t hint_len, const char *payload, uint32_t payload_len);
/* version -1: the newest. */
ADKHOST_IMPORT(artifact_load)
int32_t adkhost_artifact_load(const char *name, uint32_t name_len, int32_t version, char **ret_ptr, uint32_t *ret_len);
ADKHOST_IMPORT(artifact_save)
int32_t adkhost_artifact_save(const char *name, uint32_t name_len, const char *part, uint32_t part_len, int32_t *ret_version);
ADKHOST_IMPORT(artifact_list)
int32_t adkhost_artifact_list(char **ret_ptr, uint32_t *ret_len);
ADKHOST_IMPORT(log)
int32_t adkhost_log(int32_t level, const char *msg, uint32_t msg_len);
ADKHOST_IMPORT(invocation_info)
int32_t adkhost_invocation_info(char **ret_ptr, uint32_t *ret_len);
/* The value is raw bytes, not JSON. */
ADKHOST_IMPORT(config_get)
int32_t adkhost_config_get(const char *key, uint32_t key_len, char **ret_ptr, uint32_t *ret_len);
ADKHOST_IMPORT(http_request)
int32_t adkhost_http_request(const char *req, uint32_t req_len, char **ret_ptr, uint32_t *ret_len);
/*
 * Capability "memory" (added within v1: a host that predates it refuses the
 * module at load). The result is the JSON of a SearchMemoryResponse,
 * {"memories": [...]}; ADKHOST_UNAVAILABLE when the runner has no memory
 * service.
 */
ADKHOST_IMPORT(memory_search)
int32_t adkhost_memory_search(const char *query, uint32_t query_len, char **ret_ptr, uint32_t *ret_len);
ADKHOST_IMPORT(memory_add_session)
int32_t adkhost_memory_add_session(void);

/* Helpers for C strings: a key, and a JSON value or log message. */
int32_t adkhost_state_set_str(const char *key, const char *json);
int32_t adkhost_log_str(int32_t level, const char *msg);
int32_t adkhost_memory_search_str(const char *query, char **ret_ptr, uint32_t *ret_len);

/* ---- JSON: reading a message, writing an output.
 *
 * The host sends compact, valid UTF-8 JSON, but what is inside it (a
 * model's tool arguments, a user's text) is anyone's. These functions read
 * it without allocating and without recursion: every read is bounded by
 * the value's length, nesting deeper than ADKHOST_JSON_MAX_DEPTH (within
 * the value a function reads) is refused, and whatever a function steps
 * over is checked against the JSON
 * grammar (malformed input is ADKHOST_INVALID_ARGUMENT, never a crash).
 * On valid JSON they answer as Go's encoding/json does: the last of
 * duplicate keys wins, strings decode with invalid UTF-8 and unpaired
 * surrogate escapes as U+FFFD, integers are exact int64 literals.
 *
 *   ADKHOST_HOOK(tool_call, in, len) {
 *     adkhost_json args, v;
 *     char city[128];
 *     int64_t days = 1;
 *     if (adkhost_tool_args(in, len, &args) != ADKHOST_OK)
 *       return adkhost_output_error("get_weather: unreadable input");
 *     if (adkhost_json_get(args, "city", &v) != ADKHOST_OK ||
 *         adkhost_json_string(v, city, sizeof city, NULL) != ADKHOST_OK)
 *       return adkhost_output_error("get_weather: city must be a string");
 *     if (adkhost_json_get(args, "days", &v) == ADKHOST_OK &&
 *         adkhost_json_int(v, &days) != ADKHOST_OK)
 *       return adkhost_output_error("get_weather: days must be an integer");
 *     adkhost_writer w = {0};
 *     adkhost_w_raw_str(&w, "{\"abiVersion\":1,\"result\":{\"city\":");
 *     adkhost_w_string_str(&w, city);
 *     adkhost_w_raw_str(&w, ",\"days\":");
 *     adkhost_w_int(&w, days);
 *     adkhost_w_raw_str(&w, "}}");
 *     return adkhost_w_output(&w);
 *   }
 */

/* A JSON value inside a message: its text, p[0] to p[n - 1], no spaces
 * around. It points into the message: valid while the message is. */
typedef struct {
  const char *p;
  size_t n;
} adkhost_json;

/* The deepest nesting of objects and arrays a value may have. */
#define ADKHOST_JSON_MAX_DEPTH 1024

/* What a value is, from its first byte (adkhost_json_type). */
enum {
  ADKHOST_JSON_INVALID = 0, /* empty, or not the start of a JSON value */
  ADKHOST_JSON_NULL,
  ADKHOST_JSON_BOOL,
  ADKHOST_JSON_NUMBER,
  ADKHOST_JSON_STRING,
  ADKHOST_JSON_ARRAY,
  ADKHOST_JSON_OBJECT,
};

/* adkhost_json_parse checks that in[0..len) is one JSON value (spaces
 * around allowed) and sets *v to it. ADKHOST_OK or ADKHOST_INVALID_ARGUMENT. */
int adkhost_json_parse(const char *in, size_t len, adkhost_json *v);

/* adkhost_tool_args sets *args to the "args" object of a tool_call input
 * (ABI.md §5), or to {} when it is absent or null, checking the whole
 * input on the way (one pass). ADKHOST_INVALID_ARGUMENT when the input is
 * not a JSON object or args is not an object. */
int adkhost_tool_args(const char *in, uint32_t len, adkhost_json *args);

/* adkhost_json_get sets *val to the member `key` (a C string, compared
 * with the decoded key) of the object obj: the last one if the key repeats.
 * ADKHOST_OK, ADKHOST_NOT_FOUND, or ADKHOST_INVALID_ARGUMENT when obj is not
 * a well-formed object. adkhost_json_get_n takes a key of klen bytes. */
int adkhost_json_get_n(adkhost_json obj, const char *key, size_t klen, adkhost_json *val);
static inline int adkhost_json_get(adkhost_json obj, const char *key, adkhost_json *val) {
  return adkhost_json_get_n(obj, key, __builtin_strlen(key), val);
}

/* adkhost_json_type says what v is: ADKHOST_JSON_NULL, ... (first byte only). */
int adkhost_json_type(adkhost_json v);

/*
 * adkhost_json_string decodes the string v into buf, escapes resolved, as
 * UTF-8 followed by a NUL (the text may itself hold NULs: *len, if not
 * NULL, is its length without the final NUL). A null v decodes as "" (as
 * encoding/json leaves a Go string). ADKHOST_TOO_LARGE when the text and
 * its NUL do not fit in cap bytes (buf then holds a NUL-terminated
 * prefix), ADKHOST_INVALID_ARGUMENT when v is not a string. The decoded text
 * is never longer than 3 * v.n bytes.
 */
int adkhost_json_string(adkhost_json v, char *buf, size_t cap, size_t *len);

/* adkhost_json_eq reports whether the string v decodes to the n bytes s. */
int adkhost_json_eq(adkhost_json v, const char *s, size_t n);

/* adkhost_json_int reads an integer: a number without fraction or exponent
 * that fits in int64 (as encoding/json decodes into an int64), else
 * ADKHOST_INVALID_ARGUMENT; null leaves *out as it is and is ADKHOST_OK.
 * adkhost_json_number reads any number as the nearest double (strtod),
 * ADKHOST_INVALID_ARGUMENT beyond the double range or for a non-number,
 * ADKHOST_TOO_LARGE for a number of more than 400 characters (the host
 * never sends one). adkhost_json_bool reads true or false into *out (1, 0).
 * For these two, null too leaves *out as it is. */
int adkhost_json_int(adkhost_json v, int64_t *out);
int adkhost_json_number(adkhost_json v, double *out);
int adkhost_json_bool(adkhost_json v, int *out);

/*
 * Iterating over an object's members or an array's elements, in order:
 *
 *   adkhost_json_iter it = adkhost_json_iterate(obj);
 *   adkhost_json key, val;
 *   while (adkhost_json_next(&it, &key, &val)) {
 *     if (adkhost_json_eq(key, "role", 4)) ...
 *   }
 *   if (it.err) ... malformed (ADKHOST_INVALID_ARGUMENT)
 *
 * For an array key is set to an empty value (n == 0); key may be NULL.
 * A value that is neither an object nor an array has no members (err is
 * set). Each member's value is checked as the iteration steps over it.
 */
typedef struct {
  const char *p, *end; /* the rest, and the closing bracket */
  char kind;           /* '{' or '[' */
  char started;
  int err;
} adkhost_json_iter;

adkhost_json_iter adkhost_json_iterate(adkhost_json v);
int adkhost_json_next(adkhost_json_iter *it, adkhost_json *key, adkhost_json *val);

/*
 * adkhost_writer builds an output message in the block it hands to the
 * host, growing it as needed (doubling; a trap when out of memory, as with
 * adkhost_output). Start from a zeroed writer (adkhost_writer w = {0};),
 * write, and return adkhost_w_output(&w) from the hook; or release an
 * unfinished one with adkhost_w_free. The writer adds no separators: the
 * caller writes the commas and colons with adkhost_w_raw.
 */
typedef struct {
  char *buf;
  size_t len, cap;
} adkhost_writer;

void adkhost_w_grow(adkhost_writer *w, size_t n);
/* Reserve room for at least n more bytes (one allocation up front). */
static inline void adkhost_w_reserve(adkhost_writer *w, size_t n) {
  if (w->cap - w->len < n) adkhost_w_grow(w, n);
}
/* Bytes as they are (JSON the caller vouches for). Inline, so that a
 * literal's length and copy are the compiler's. */
static inline void adkhost_w_raw(adkhost_writer *w, const char *s, size_t n) {
  if (n == 0) return; /* an empty writer has no buffer to copy to */
  adkhost_w_reserve(w, n);
  __builtin_memcpy(w->buf + w->len, s, n);
  w->len += n;
}
static inline void adkhost_w_raw_str(adkhost_writer *w, const char *s) {
  adkhost_w_raw(w, s, __builtin_strlen(s));
}
/* A JSON string of the n bytes s: quoted and escaped (", \, control
 * characters, U+2028 and U+2029), invalid UTF-8 as U+FFFD, as Go writes. */
void adkhost_w_string(adkhost_writer *w, const char *s, size_t n);
static inline void adkhost_w_string_str(adkhost_writer *w, const char *s) {
  adkhost_w_string(w, s, __builtin_strlen(s));
}
void adkhost_w_int(adkhost_writer *w, int64_t v);
/* A double as Go's encoding/json writes a float64: the shortest text that
 * reads back as v ("21", "0.1", "1e+21", "1e-7"); NaN and infinities,
 * which JSON lacks, as null (as JSON.stringify). */
void adkhost_w_double(adkhost_writer *w, double v);
/* A value read from a message, as it is. */
void adkhost_w_json(adkhost_writer *w, adkhost_json v);
/* The packed output (the host frees it); the writer is empty again. */
uint64_t adkhost_w_output(adkhost_writer *w);
void adkhost_w_free(adkhost_writer *w);

/* adkhost_output_error returns {"abiVersion":1,"error":"<msg>"}: the hook
 * fails with msg (a C string). */
uint64_t adkhost_output_error(const char *msg);

#ifdef __cplusplus
}
#endif

#endif /* ADKHOST_H */
