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
 * It reads the input with the SDK's JSON reader (adkhost.h): it checks the
 * whole input, looks only at request.contents[*].{role,parts[*].text}, and
 * matches "BLOCK" in the decoded text (escapes included, so "\u0042LOCK"
 * counts). An input it cannot read fails the hook (fail closed): the host
 * always sends valid JSON, so this does not happen.
 */
#include "adkhost.h"

#include <stdlib.h>
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

static const char NEEDLE[] = "BLOCK";

/* has_block reports whether the string v holds NEEDLE once decoded. */
static int has_block(adkhost_json v, int *err) {
  size_t cap = 3 * v.n + 1, n; /* the longest text v can decode to */
  char *text = malloc(cap);
  if (text == NULL || adkhost_json_string(v, text, cap, &n) != ADKHOST_OK) {
    free(text);
    *err = 1;
    return 0;
  }
  int found = 0;
  for (size_t i = 0; !found && i + sizeof NEEDLE - 1 <= n; i++) {
    found = memcmp(text + i, NEEDLE, sizeof NEEDLE - 1) == 0;
  }
  free(text);
  return found;
}

/* blocked reports whether the BeforeModelInput's latest user text has
 * BLOCK: the text parts of the last content whose role is "user" and that
 * has a text part. */
static int blocked(const char *in, uint32_t len, int *err) {
  adkhost_json msg, request, contents, content, v, parts, part;
  if (adkhost_json_parse(in, len, &msg) != ADKHOST_OK || adkhost_json_type(msg) != ADKHOST_JSON_OBJECT) {
    *err = 1;
    return 0;
  }
  if (adkhost_json_get(msg, "request", &request) != ADKHOST_OK || adkhost_json_type(request) != ADKHOST_JSON_OBJECT ||
      adkhost_json_get(request, "contents", &contents) != ADKHOST_OK || adkhost_json_type(contents) != ADKHOST_JSON_ARRAY) {
    return 0; /* no contents: nothing to block */
  }
  int verdict = 0;
  adkhost_json_iter cs = adkhost_json_iterate(contents);
  while (adkhost_json_next(&cs, NULL, &content)) {
    if (adkhost_json_type(content) != ADKHOST_JSON_OBJECT) continue;
    int is_user = adkhost_json_get(content, "role", &v) == ADKHOST_OK && adkhost_json_eq(v, "user", 4);
    int has_text = 0, found = 0;
    if (adkhost_json_get(content, "parts", &parts) == ADKHOST_OK && adkhost_json_type(parts) == ADKHOST_JSON_ARRAY) {
      adkhost_json_iter ps = adkhost_json_iterate(parts);
      while (adkhost_json_next(&ps, NULL, &part)) {
        if (adkhost_json_type(part) == ADKHOST_JSON_OBJECT && adkhost_json_get(part, "text", &v) == ADKHOST_OK &&
            adkhost_json_type(v) == ADKHOST_JSON_STRING) {
          has_text = 1;
          found |= has_block(v, err); /* parts are matched separately */
        }
      }
    }
    if (is_user && has_text) verdict = found; /* the latest one wins */
  }
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
