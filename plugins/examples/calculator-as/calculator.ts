// calculator-as: an adkhost ABI v1 tool in AssemblyScript (native
// transport, abi/ABI.md §3). One tool, calculate, evaluates an arithmetic
// expression: numbers, + - * / %, unary minus and parentheses.
//
//   npm ci && npm run build     (or `make calculator-as` in plugins/examples)
//
// Memory: adkhost_alloc/adkhost_free are the runtime's heap.alloc/heap.free
// (raw blocks, outside the garbage collector), so the host's input block
// and our output blocks are never collected under it.

const DESCRIBE = `{"abiVersion":1,"name":"calculator-as","version":"1.0.0",` +
  `"tools":[{"name":"calculate","description":"Evaluates an arithmetic expression: numbers, + - * / %, unary minus and parentheses.",` +
  `"parameters":{"type":"object","properties":{"expression":{"type":"string","description":"e.g. 2 * (3 + 4)"}},"required":["expression"]}}],` +
  `"hooks":["tool_call"]}`;

// abort replaces the default env.abort import (--use abort=calculator/abort):
// a module may import only from adkhost and WASI.
function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  unreachable();
}

export function adkhost_abi_version_1(): void {}

export function adkhost_alloc(size: u32): u32 {
  return <u32>heap.alloc(<usize>(size == 0 ? 1 : size));
}

export function adkhost_free(ptr: u32, size: u32): void {
  heap.free(<usize>ptr);
}

// output copies s (UTF-8) into a fresh block the host frees, packed as
// (ptr << 32) | len.
function output(s: string): u64 {
  const buf = String.UTF8.encode(s);
  const n = buf.byteLength;
  if (n == 0) return 0;
  const p = heap.alloc(<usize>n);
  memory.copy(p, changetype<usize>(buf), <usize>n);
  return (<u64>p << 32) | <u64>n;
}

function failure(msg: string): u64 {
  // msg is our own text: no quotes or backslashes to escape.
  return output(`{"abiVersion":1,"error":"` + msg + `"}`);
}

export function adkhost_describe(ptr: u32, len: u32): u64 {
  return output(DESCRIBE);
}

export function adkhost_tool_call(ptr: u32, len: u32): u64 {
  const input = String.UTF8.decodeUnsafe(<usize>ptr, <usize>len);
  const expr = expressionArg(input);
  if (expr == null) return failure("calculate needs a string argument expression");
  const e = expr as string;
  const p = new Calc(e);
  const v = p.parse();
  if (p.err.length > 0) return failure(p.err);
  if (!isFinite(v)) return failure("the result is not a finite number");
  return output(`{"abiVersion":1,"result":{"expression":` + quote(e) + `,"value":` + v.toString() + `}}`);
}

// ---- a minimal JSON reader: ToolCallInput.args.expression ----------------

class Reader {
  pos: i32 = 0;
  bad: bool = false;
  constructor(public s: string) {}

  ws(): void {
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }
  eat(c: i32): bool {
    this.ws();
    if (this.pos < this.s.length && this.s.charCodeAt(this.pos) == c) {
      this.pos++;
      return true;
    }
    return false;
  }
  peek(): i32 {
    this.ws();
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos) : -1;
  }
  str(): string {
    if (!this.eat(0x22)) { this.bad = true; return ""; }
    let out = "";
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos++);
      if (c == 0x22) return out;
      if (c != 0x5c) { out += String.fromCharCode(c); continue; }
      if (this.pos >= this.s.length) break;
      const e = this.s.charCodeAt(this.pos++);
      if (e == 0x6e) out += "\n";
      else if (e == 0x74) out += "\t";
      else if (e == 0x72) out += "\r";
      else if (e == 0x62) out += "\b";
      else if (e == 0x66) out += "\f";
      else if (e == 0x75) {
        if (this.pos + 4 > this.s.length) break;
        out += String.fromCharCode(<i32>parseInt(this.s.substr(this.pos, 4), 16));
        this.pos += 4;
      } else out += String.fromCharCode(e);
    }
    this.bad = true;
    return out;
  }
  // skip steps over one value of any kind.
  skip(): void {
    const c = this.peek();
    if (c == 0x22) { this.str(); return; }
    if (c == 0x7b || c == 0x5b) {
      let depth = 0;
      while (this.pos < this.s.length) {
        const b = this.s.charCodeAt(this.pos);
        if (b == 0x22) { this.str(); if (this.bad) return; continue; }
        this.pos++;
        if (b == 0x7b || b == 0x5b) depth++;
        if (b == 0x7d || b == 0x5d) { if (--depth == 0) return; }
      }
      this.bad = true;
      return;
    }
    const start = this.pos;
    while (this.pos < this.s.length && ",}] \t\r\n".indexOf(this.s.charAt(this.pos)) < 0) this.pos++;
    if (this.pos == start) this.bad = true;
  }
  // key reads the key of the next member of an object, or null at its end.
  key(first: bool): string | null {
    if (this.eat(0x7d)) return null;
    if (!first && !this.eat(0x2c)) { this.bad = true; return null; }
    const k = this.str();
    if (this.bad || !this.eat(0x3a)) { this.bad = true; return null; }
    return k;
  }
}

function expressionArg(input: string): string | null {
  const r = new Reader(input);
  if (!r.eat(0x7b)) return null;
  let result: string | null = null;
  for (let first = true; ; first = false) {
    const k = r.key(first);
    if (k == null) break;
    if (k == "args" && r.peek() == 0x7b) {
      r.pos++;
      for (let f = true; ; f = false) {
        const ak = r.key(f);
        if (ak == null) break;
        if (ak == "expression" && r.peek() == 0x22) result = r.str();
        else r.skip();
        if (r.bad) return null;
      }
    } else r.skip();
    if (r.bad) return null;
  }
  return r.bad ? null : result;
}

function quote(s: string): string {
  let out = "\"";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 0x22) out += "\\\"";
    else if (c == 0x5c) out += "\\\\";
    else if (c < 0x20) out += "\\u00" + (c < 0x10 ? "0" : "") + c.toString(16);
    else out += String.fromCharCode(c);
  }
  return out + "\"";
}

// ---- the calculator: recursive descent, depth-limited --------------------

class Calc {
  pos: i32 = 0;
  depth: i32 = 0;
  err: string = "";
  constructor(public s: string) {}

  parse(): f64 {
    const v = this.sum();
    this.ws();
    if (this.err.length == 0 && this.pos < this.s.length) this.err = "unexpected character at " + this.pos.toString();
    return v;
  }
  ws(): void {
    while (this.pos < this.s.length && this.s.charCodeAt(this.pos) == 0x20) this.pos++;
  }
  sum(): f64 {
    let v = this.product();
    for (;;) {
      this.ws();
      if (this.err.length > 0 || this.pos >= this.s.length) return v;
      const c = this.s.charCodeAt(this.pos);
      if (c == 0x2b) { this.pos++; v += this.product(); }
      else if (c == 0x2d) { this.pos++; v -= this.product(); }
      else return v;
    }
    return v;
  }
  product(): f64 {
    let v = this.unary();
    for (;;) {
      this.ws();
      if (this.err.length > 0 || this.pos >= this.s.length) return v;
      const c = this.s.charCodeAt(this.pos);
      if (c == 0x2a) { this.pos++; v *= this.unary(); }
      else if (c == 0x2f || c == 0x25) {
        this.pos++;
        const d = this.unary();
        if (d == 0) { if (this.err.length == 0) this.err = "division by zero"; return 0; }
        v = c == 0x2f ? v / d : v % d;
      } else return v;
    }
    return v;
  }
  unary(): f64 {
    this.ws();
    if (this.pos < this.s.length && this.s.charCodeAt(this.pos) == 0x2d) { this.pos++; return -this.unary(); }
    return this.atom();
  }
  atom(): f64 {
    this.ws();
    if (this.err.length > 0) return 0;
    if (this.pos < this.s.length && this.s.charCodeAt(this.pos) == 0x28) {
      if (++this.depth > 64) { this.err = "too deeply nested"; return 0; }
      this.pos++;
      const v = this.sum();
      this.ws();
      if (this.pos >= this.s.length || this.s.charCodeAt(this.pos) != 0x29) {
        if (this.err.length == 0) this.err = "missing closing parenthesis";
        return 0;
      }
      this.pos++;
      this.depth--;
      return v;
    }
    const start = this.pos;
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (!((c >= 0x30 && c <= 0x39) || c == 0x2e)) break;
      this.pos++;
    }
    if (this.pos == start) { this.err = "expected a number at " + start.toString(); return 0; }
    return parseFloat(this.s.substring(start, this.pos));
  }
}
