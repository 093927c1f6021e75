/*
 * probe: a test guest for sdk_test.go. Its tool "probe" reads the input
 * with the SDK's JSON reader and says what it read, with the SDK's writer:
 *
 *   {"abiVersion":1,"result":{"valid":<adkhost_json_parse>,
 *     "args":<adkhost_tool_args status>, "members":[
 *       {"key":"<decoded key>","type":N,"s":"<string>","i":<int>,
 *        "f":<number>,"b":<bool>,"len":<elements or members>,
 *        "get":<adkhost_json_get of the key, as it is>,"eq":<adkhost_json_eq>}, ...],
 *     "iter":<iteration status>}}
 *
 * with each of s, i, f, b only when that reader accepts the value.
 */
#include "adkhost.h"

static const char DESCRIBE[] =
    "{\"abiVersion\":1,\"name\":\"probe\",\"version\":\"1.0.0\","
    "\"tools\":[{\"name\":\"probe\",\"description\":\"Says what the SDK reads.\","
    "\"parameters\":{\"type\":\"object\"}}],\"hooks\":[\"tool_call\"]}";

ADKHOST_DESCRIBE(in, len) {
  (void)in;
  (void)len;
  return adkhost_output(DESCRIBE, sizeof DESCRIBE - 1);
}

static char text[1 << 16];

ADKHOST_HOOK(tool_call, in, len) {
  adkhost_writer w = {0};
  adkhost_json msg, args;
  adkhost_w_raw_str(&w, "{\"abiVersion\":1,\"result\":{\"valid\":");
  adkhost_w_raw_str(&w, adkhost_json_parse(in, len, &msg) == ADKHOST_OK ? "true" : "false");
  int st = adkhost_tool_args(in, len, &args);
  adkhost_w_raw_str(&w, ",\"args\":");
  adkhost_w_int(&w, st);
  if (st != ADKHOST_OK) {
    adkhost_w_raw_str(&w, "}}");
    return adkhost_w_output(&w);
  }
  adkhost_w_raw_str(&w, ",\"members\":[");
  adkhost_json_iter it = adkhost_json_iterate(args);
  adkhost_json key, val, got;
  for (int i = 0; adkhost_json_next(&it, &key, &val); i++) {
    size_t n;
    if (i) adkhost_w_raw(&w, ",", 1);
    adkhost_w_raw_str(&w, "{\"key\":");
    if (adkhost_json_string(key, text, sizeof text, &n) != ADKHOST_OK) return adkhost_output_error("probe: a key does not decode");
    adkhost_w_string(&w, text, n);
    if (adkhost_json_get_n(args, text, n, &got) != ADKHOST_OK) return adkhost_output_error("probe: get misses a key");
    adkhost_w_raw_str(&w, ",\"get\":");
    adkhost_w_json(&w, got);
    adkhost_w_raw_str(&w, ",\"eq\":");
    adkhost_w_raw_str(&w, adkhost_json_eq(key, text, n) ? "true" : "false");
    adkhost_w_raw_str(&w, ",\"type\":");
    adkhost_w_int(&w, adkhost_json_type(val));
    if (adkhost_json_type(val) == ADKHOST_JSON_STRING) {
      int s = adkhost_json_string(val, text, sizeof text, &n);
      if (s == ADKHOST_OK) {
        adkhost_w_raw_str(&w, ",\"s\":");
        adkhost_w_string(&w, text, n);
      } else if (s != ADKHOST_TOO_LARGE || 3 * val.n < sizeof text) {
        return adkhost_output_error("probe: a string does not decode");
      }
    }
    int64_t iv;
    double fv;
    int bv;
    if (adkhost_json_type(val) != ADKHOST_JSON_NULL) {
      if (adkhost_json_int(val, &iv) == ADKHOST_OK) {
        adkhost_w_raw_str(&w, ",\"i\":");
        adkhost_w_int(&w, iv);
      }
      if (adkhost_json_number(val, &fv) == ADKHOST_OK) {
        adkhost_w_raw_str(&w, ",\"f\":");
        adkhost_w_double(&w, fv);
      }
      if (adkhost_json_bool(val, &bv) == ADKHOST_OK) {
        adkhost_w_raw_str(&w, bv ? ",\"b\":true" : ",\"b\":false");
      }
    }
    int t = adkhost_json_type(val);
    if (t == ADKHOST_JSON_ARRAY || t == ADKHOST_JSON_OBJECT) {
      adkhost_json_iter sub = adkhost_json_iterate(val);
      int64_t count = 0;
      while (adkhost_json_next(&sub, NULL, NULL)) count++;
      if (sub.err) return adkhost_output_error("probe: a checked value does not iterate");
      adkhost_w_raw_str(&w, ",\"len\":");
      adkhost_w_int(&w, count);
    }
    adkhost_w_raw(&w, "}", 1);
  }
  adkhost_w_raw_str(&w, "],\"iter\":");
  adkhost_w_int(&w, it.err);
  adkhost_w_raw_str(&w, "}}");
  return adkhost_w_output(&w);
}
