// A small JSON value type with a strict parser and a compact serializer:
// enough for ABI messages, with no dependency. Objects keep member order;
// numbers keep their source text, so integers beyond 2^53 pass through
// unchanged.

export enum Kind { Null, Bool, Number, String, Array, Object }

// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH = 512;

let lastError: string = "";

/** Why the last Value.parse returned null. */
export function parseError(): string {
  return lastError;
}

export class Value {
  kind: Kind = Kind.Null;
  bool: bool = false;
  /** A Number's JSON text. */
  num: string = "";
  str: string = "";
  /** An Array's items. */
  items: Array<Value> = [];
  /** An Object's keys and values, in order. */
  keys: Array<string> = [];
  vals: Array<Value> = [];

  static makeNull(): Value { return new Value(); }
  static fromBool(b: bool): Value { const v = new Value(); v.kind = Kind.Bool; v.bool = b; return v; }
  static fromString(s: string): Value { const v = new Value(); v.kind = Kind.String; v.str = s; return v; }
  /** A number; NaN and infinities, which JSON lacks, are null. */
  static fromNumber(f: f64): Value {
    if (!isFinite(f)) return new Value();
    const v = new Value();
    v.kind = Kind.Number;
    v.num = f == Math.trunc(f) && Math.abs(f) < 1e15 ? (<i64>f).toString() : f.toString();
    return v;
  }
  static fromInteger(i: i64): Value { const v = new Value(); v.kind = Kind.Number; v.num = i.toString(); return v; }
  static newArray(): Value { const v = new Value(); v.kind = Kind.Array; return v; }
  static newObject(): Value { const v = new Value(); v.kind = Kind.Object; return v; }

  /** Parses exactly one JSON value; null if the text is not JSON (see parseError). */
  static parse(text: string): Value | null {
    const p = new Parser(text);
    p.ws();
    const v = p.value();
    if (v != null) {
      p.ws();
      if (p.pos != text.length) { p.fail("trailing data after the value"); return null; }
    }
    return v;
  }

  get isNull(): bool { return this.kind == Kind.Null; }
  get isObject(): bool { return this.kind == Kind.Object; }

  /** The number as an f64 (NaN if not a number). */
  asNumber(): f64 { return this.kind == Kind.Number ? parseFloat(this.num) : NaN; }

  /** The member key of an object (the last one if repeated), or null. */
  get(key: string): Value | null {
    if (this.kind != Kind.Object) return null;
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) return this.vals[i];
    }
    return null;
  }

  /** The string member key, or null if absent or not a string. */
  getString(key: string): string | null {
    const v = this.get(key);
    if (v == null || v.kind != Kind.String) return null;
    return v.str;
  }

  /** Sets member key, in place if present; a non-object becomes an object. */
  set(key: string, v: Value): Value {
    if (this.kind != Kind.Object) { this.kind = Kind.Object; this.keys = []; this.vals = []; }
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) { this.vals[i] = v; return this; }
    }
    this.keys.push(key);
    this.vals.push(v);
    return this;
  }

  /** Removes member key; true if it was there. */
  remove(key: string): bool {
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) { this.keys.splice(i, 1); this.vals.splice(i, 1); return true; }
    }
    return false;
  }

  push(v: Value): Value {
    if (this.kind != Kind.Array) { this.kind = Kind.Array; this.items = []; }
    this.items.push(v);
    return this;
  }

  /** A deep copy. */
  clone(): Value {
    const v = new Value();
    v.kind = this.kind; v.bool = this.bool; v.num = this.num; v.str = this.str;
    for (let i = 0; i < this.items.length; i++) v.items.push(this.items[i].clone());
    for (let i = 0; i < this.keys.length; i++) { v.keys.push(this.keys[i]); v.vals.push(this.vals[i].clone()); }
    return v;
  }

  /** The compact JSON text. */
  toJSON(): string {
    const parts = new Array<string>();
    this.write(parts);
    return parts.join("");
  }

  write(out: Array<string>): void {
    switch (this.kind) {
      case Kind.Null: out.push("null"); break;
      case Kind.Bool: out.push(this.bool ? "true" : "false"); break;
      case Kind.Number: out.push(this.num); break;
      case Kind.String: out.push(quote(this.str)); break;
      case Kind.Array: {
        out.push("[");
        for (let i = 0; i < this.items.length; i++) {
          if (i > 0) out.push(",");
          this.items[i].write(out);
        }
        out.push("]");
        break;
      }
      default: {
        out.push("{");
        for (let i = 0; i < this.keys.length; i++) {
          if (i > 0) out.push(",");
          out.push(quote(this.keys[i]));
          out.push(":");
          this.vals[i].write(out);
        }
        out.push("}");
      }
    }
  }
}

const HEX = "0123456789abcdef";

/** s as a JSON string literal: quotes, backslashes and control characters escaped. */
export function quote(s: string): string {
  let out = "\"";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
    out += s.substring(from, i);
    from = i + 1;
    if (c == 0x22) out += "\\\"";
    else if (c == 0x5c) out += "\\\\";
    else if (c == 0x0a) out += "\\n";
    else if (c == 0x0d) out += "\\r";
    else if (c == 0x09) out += "\\t";
    else out += "\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
  }
  return out + s.substring(from) + "\"";
}

class Parser {
  pos: i32 = 0;
  depth: i32 = 0;
  constructor(public s: string) {}

  fail(msg: string): void {
    lastError = "invalid JSON at offset " + this.pos.toString() + ": " + msg;
  }

  ws(): void {
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  peek(): i32 { return this.pos < this.s.length ? this.s.charCodeAt(this.pos) : -1; }

  literal(word: string, v: Value): Value | null {
    if (this.s.substr(this.pos, word.length) == word) { this.pos += word.length; return v; }
    this.fail("invalid literal");
    return null;
  }

  value(): Value | null {
    const c = this.peek();
    if (c == 0x6e) return this.literal("null", Value.makeNull());
    if (c == 0x74) return this.literal("true", Value.fromBool(true));
    if (c == 0x66) return this.literal("false", Value.fromBool(false));
    if (c == 0x22) {
      const s = this.string();
      return s == null ? null : Value.fromString(s);
    }
    if (c == 0x5b) return this.array();
    if (c == 0x7b) return this.object();
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    this.fail(c < 0 ? "unexpected end of input" : "unexpected character");
    return null;
  }

  enter(): bool {
    if (++this.depth > MAX_DEPTH) { this.fail("nesting too deep"); return false; }
    this.pos++;
    this.ws();
    return true;
  }

  array(): Value | null {
    if (!this.enter()) return null;
    const a = Value.newArray();
    if (this.peek() == 0x5d) { this.pos++; this.depth--; return a; }
    for (;;) {
      const v = this.value();
      if (v == null) return null;
      a.items.push(v);
      this.ws();
      const c = this.peek();
      if (c == 0x2c) { this.pos++; this.ws(); continue; }
      if (c == 0x5d) { this.pos++; this.depth--; return a; }
      this.fail("expected ',' or ']'");
      return null;
    }
  }

  object(): Value | null {
    if (!this.enter()) return null;
    const o = Value.newObject();
    if (this.peek() == 0x7d) { this.pos++; this.depth--; return o; }
    for (;;) {
      if (this.peek() != 0x22) { this.fail("expected a string key"); return null; }
      const k = this.string();
      if (k == null) return null;
      this.ws();
      if (this.peek() != 0x3a) { this.fail("expected ':'"); return null; }
      this.pos++;
      this.ws();
      const v = this.value();
      if (v == null) return null;
      o.keys.push(k);
      o.vals.push(v);
      this.ws();
      const c = this.peek();
      if (c == 0x2c) { this.pos++; this.ws(); continue; }
      if (c == 0x7d) { this.pos++; this.depth--; return o; }
      this.fail("expected ',' or '}'");
      return null;
    }
  }

  digits(): i32 {
    const start = this.pos;
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c < 0x30 || c > 0x39) break;
      this.pos++;
    }
    return this.pos - start;
  }

  number(): Value | null {
    const start = this.pos;
    if (this.peek() == 0x2d) this.pos++;
    const c = this.peek();
    if (c == 0x30) this.pos++;
    else if (c >= 0x31 && c <= 0x39) this.digits();
    else { this.fail("invalid number"); return null; }
    if (this.peek() == 0x2e) {
      this.pos++;
      if (this.digits() == 0) { this.fail("invalid number"); return null; }
    }
    const e = this.peek();
    if (e == 0x65 || e == 0x45) {
      this.pos++;
      const sign = this.peek();
      if (sign == 0x2b || sign == 0x2d) this.pos++;
      if (this.digits() == 0) { this.fail("invalid number"); return null; }
    }
    const v = new Value();
    v.kind = Kind.Number;
    v.num = this.s.substring(start, this.pos);
    return v;
  }

  hex4(): i32 {
    if (this.pos + 4 > this.s.length) return -1;
    let n = 0;
    for (let i = 0; i < 4; i++) {
      const c = this.s.charCodeAt(this.pos++);
      let d = -1;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      if (d < 0) return -1;
      n = n * 16 + d;
    }
    return n;
  }

  string(): string | null {
    this.pos++; // the opening quote
    let out = "";
    let from = this.pos;
    for (;;) {
      if (this.pos >= this.s.length) { this.fail("unterminated string"); return null; }
      const c = this.s.charCodeAt(this.pos);
      if (c == 0x22) {
        out += this.s.substring(from, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) { this.fail("control character in string"); return null; }
      // A lone surrogate cannot be sent back as UTF-8.
      if (c >= 0xd800 && c < 0xdc00) {
        const lo = this.pos + 1 < this.s.length ? this.s.charCodeAt(this.pos + 1) : 0;
        if (lo < 0xdc00 || lo >= 0xe000) { this.fail("invalid UTF-8"); return null; }
        this.pos += 2;
        continue;
      }
      if (c >= 0xdc00 && c < 0xe000) { this.fail("invalid UTF-8"); return null; }
      if (c != 0x5c) { this.pos++; continue; }
      out += this.s.substring(from, this.pos);
      this.pos++;
      const e = this.peek();
      this.pos++;
      if (e == 0x22) out += "\"";
      else if (e == 0x5c) out += "\\";
      else if (e == 0x2f) out += "/";
      else if (e == 0x62) out += "\b";
      else if (e == 0x66) out += "\f";
      else if (e == 0x6e) out += "\n";
      else if (e == 0x72) out += "\r";
      else if (e == 0x74) out += "\t";
      else if (e == 0x75) {
        const hi = this.hex4();
        if (hi < 0) { this.fail("invalid \\u escape"); return null; }
        if (hi >= 0xd800 && hi < 0xdc00) {
          // A high surrogate must be followed by an escaped low one.
          if (this.s.substr(this.pos, 2) != "\\u") { this.fail("unpaired surrogate"); return null; }
          this.pos += 2;
          const lo = this.hex4();
          if (lo < 0xdc00 || lo >= 0xe000) { this.fail("unpaired surrogate"); return null; }
          out += String.fromCharCode(hi) + String.fromCharCode(lo);
        } else if (hi >= 0xdc00 && hi < 0xe000) {
          this.fail("unpaired surrogate");
          return null;
        } else out += String.fromCharCode(hi);
      } else { this.fail(e < 0 ? "unterminated string" : "invalid escape"); return null; }
      from = this.pos;
    }
    return null; // not reached: the loop returns
  }
}

// ---- base64 (how JSON carries bytes: Part.inlineData.data, HTTP bodies) ----

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Standard padded base64 of b. */
export function base64Encode(b: Uint8Array): string {
  const out = new Array<i32>();
  for (let i = 0; i < b.length; i += 3) {
    const left = b.length - i;
    const n = (<i32>b[i] << 16) | (left > 1 ? <i32>b[i + 1] << 8 : 0) | (left > 2 ? <i32>b[i + 2] : 0);
    for (let j = 0; j < 4; j++) {
      out.push(j <= left ? B64.charCodeAt((n >> (18 - 6 * j)) & 63) : 0x3d); // '='
    }
  }
  return String.fromCharCodes(out);
}

/** Decodes standard base64 (padding optional); null if s is not base64. */
export function base64Decode(s: string): Uint8Array | null {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) == 0x3d) end--;
  if (end % 4 == 1) return null;
  const out = new Uint8Array(end * 3 / 4);
  let acc = 0, bits = 0, k = 0;
  for (let i = 0; i < end; i++) {
    const d = B64.indexOf(s.charAt(i));
    if (d < 0) return null;
    acc = (acc << 6) | d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[k++] = <u8>(acc >> bits);
    }
  }
  return out;
}
