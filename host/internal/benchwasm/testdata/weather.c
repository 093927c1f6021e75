/*
 * get_weather in C against sdk/c: the C row of make bench-wasm, the twin of
 * the Go benchmark tool (bench_test.go's getWeather), written as a C author
 * would with the SDK's JSON reader and writer: it reads "city" and "days"
 * from args (escapes decoded), answers the same forecast and writes
 * user:last_city with state_set.
 */
#include "adkhost.h"

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

static int space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

ADKHOST_HOOK(tool_call, in, len) {
  adkhost_json args, v;
  if (adkhost_tool_args(in, len, &args) != ADKHOST_OK) {
    return adkhost_output_error("get_weather: the input is not a tool call");
  }
  /* city: a string, "" when absent or null (as a Go string field) */
  char city[256];
  size_t n = 0;
  city[0] = 0;
  if (adkhost_json_get(args, "city", &v) == ADKHOST_OK) {
    int st = adkhost_json_string(v, city, sizeof city, &n);
    if (st == ADKHOST_TOO_LARGE) return adkhost_output_error("get_weather: city is too long");
    if (st != ADKHOST_OK) return adkhost_output_error("get_weather: city must be a string");
  }
  /* trimmed as strings.TrimSpace does for ASCII spaces */
  const char *name = city;
  while (n > 0 && space(*name)) name++, n--;
  while (n > 0 && space(name[n - 1])) n--;

  int64_t days = 0;
  if (adkhost_json_get(args, "days", &v) == ADKHOST_OK && adkhost_json_int(v, &days) != ADKHOST_OK) {
    return adkhost_output_error("get_weather: days must be an integer");
  }
  if (days < 1) days = 1;
  if (days > 3) {
    adkhost_writer e = {0};
    adkhost_w_raw_str(&e, "{\"abiVersion\":1,\"error\":\"at most 3 days, not ");
    adkhost_w_int(&e, days);
    adkhost_w_raw_str(&e, "\"}");
    return adkhost_w_output(&e);
  }

  adkhost_writer w = {0};
  adkhost_w_raw_str(&w, "{\"abiVersion\":1,\"result\":{\"city\":");
  size_t at = w.len; /* the city's JSON, which state_set stores too */
  adkhost_w_string(&w, name, n);
  size_t city_len = w.len - at;
  adkhost_w_raw_str(&w, ",\"days\":[");
  for (int64_t i = 0; i < days; i++) {
    adkhost_w_raw_str(&w, i ? ",{\"summary\":\"sunny\",\"highC\":" : "{\"summary\":\"sunny\",\"highC\":");
    adkhost_w_double(&w, 21.0 + (double)i);
    adkhost_w_raw(&w, "}", 1);
  }
  adkhost_w_raw_str(&w, "]}}");
  if (adkhost_state_set("user:last_city", 14, w.buf + at, (uint32_t)city_len) != ADKHOST_OK) {
    adkhost_w_free(&w);
    return adkhost_output_error("get_weather: state_set user:last_city failed");
  }
  return adkhost_w_output(&w);
}
