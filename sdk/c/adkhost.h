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

#ifdef __cplusplus
}
#endif

#endif /* ADKHOST_H */
