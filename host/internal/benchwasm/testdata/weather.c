/*
 * get_weather in C against sdk/c: the C row of make bench-wasm, the twin of
 * the Go benchmark tool (bench_test.go's getWeather). It reads "city" and
 * "days" from args with a small cursor (no allocation, no recursion),
 * answers the same forecast and writes user:last_city with state_set.
 * A city with an escape is refused (so it is written back unescaped
 * safely): the benchmark sends none.
 */
#include "adkhost.h"

#include <stdio.h>
#include <string.h>

static const char DESCRIBE[] =
    "{\"abiVersion\":1,\"name\":\"weather\",\"version\":\"1.0.0\","
    "\"tools\":[{\"name\":\"get_weather\",\"description\":\"Returns the weather forecast of a city.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},"
    "\"days\":{\"type\":\"integer\"}},\"required\":[\"city\"]}}],"
    "\"hooks\":[\"tool_call\"],\"capabilities\":[\"state\"]}";

ADKHOST_DESCRIBE(in, len) {
  (void)in;
  (void)len;
  return adkhost_output(DESCRIBE, sizeof DESCRIBE - 1);
}

static uint64_t fail(const char *msg) {
  char out[256];
  int n = snprintf(out, sizeof out, "{\"abiVersion\":1,\"error\":\"%s\"}", msg);
  return adkhost_output(out, (size_t)n);
}

/* find returns the position just after `"key":` inside the object that
 * follows `"args":`, or NULL. The host encodes with no spaces. */
static const char *find(const char *args, const char *end, const char *key) {
  size_t k = strlen(key);
  for (const char *p = args; p + k + 3 <= end; p++) {
    if (p[0] == '"' && memcmp(p + 1, key, k) == 0 && p[k + 1] == '"' && p[k + 2] == ':') {
      return p + k + 3;
    }
  }
  return NULL;
}

ADKHOST_HOOK(tool_call, in, len) {
  const char *end = in + len;
  const char *args = NULL;
  for (const char *p = in; p + 7 <= end; p++) {
    if (memcmp(p, "\"args\":", 7) == 0) {
      args = p + 7;
      break;
    }
  }
  if (!args) return fail("get_weather: no args");
  const char *c = find(args, end, "city");
  if (!c || *c != '"') return fail("get_weather: city must be a string");
  c++;
  char city[128];
  size_t n = 0;
  while (c < end && *c != '"') {
    char b = *c++;
    if (b == '\\') return fail("get_weather: escapes in city are not supported");
    if (n + 1 >= sizeof city) return fail("get_weather: city too long");
    city[n++] = b;
  }
  /* trim spaces as strings.TrimSpace does for ASCII */
  size_t s = 0;
  while (s < n && (city[s] == ' ' || city[s] == '\t' || city[s] == '\n' || city[s] == '\r')) s++;
  while (n > s && (city[n - 1] == ' ' || city[n - 1] == '\t' || city[n - 1] == '\n' || city[n - 1] == '\r')) n--;
  city[n] = 0;
  const char *name = city + s;

  long days = 1;
  const char *d = find(args, end, "days");
  if (d) {
    days = 0;
    while (d < end && *d >= '0' && *d <= '9') days = days * 10 + (*d++ - '0');
    if (days < 1) days = 1;
  }
  if (days > 3) {
    char msg[64];
    snprintf(msg, sizeof msg, "at most 3 days, not %ld", days);
    return fail(msg);
  }

  char out[512];
  int o = snprintf(out, sizeof out, "{\"abiVersion\":1,\"result\":{\"city\":\"%s\",\"days\":[", name);
  for (long i = 0; i < days; i++) {
    o += snprintf(out + o, sizeof out - (size_t)o, "%s{\"summary\":\"sunny\",\"highC\":%ld}", i ? "," : "", 21 + i);
  }
  o += snprintf(out + o, sizeof out - (size_t)o, "]}}");

  char value[160];
  int v = snprintf(value, sizeof value, "\"%s\"", name);
  if (adkhost_state_set("user:last_city", 14, value, (uint32_t)v) != ADKHOST_OK) {
    return fail("state_set user:last_city failed");
  }
  return adkhost_output(out, (size_t)o);
}
