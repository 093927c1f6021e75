/*
 * adkhost.c: the exports every C guest needs (ABI.md §2, §3) and the
 * helpers declared in adkhost.h. Link it into the guest.
 *
 * adkhost_alloc and adkhost_free are malloc and free. The host calls
 * adkhost_alloc re-entrantly from inside a host function; wasi-libc's
 * malloc allows that (nothing of malloc is on the stack at that point).
 */
#include "adkhost.h"

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
