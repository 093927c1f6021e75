// calculator-as: an adkhost ABI v1 tool in AssemblyScript, written with
// the AssemblyScript SDK (sdk/assemblyscript, package "adkhost-as", a
// file: dependency). One tool, calculate, evaluates an arithmetic
// expression: numbers, + - * / %, unary minus and parentheses.
//
//   npm ci && npm run build     (or `make calculator-as` in plugins/examples)

import { Context, Value, module, tool } from "adkhost-as";
// The ABI's exports (version marker, alloc/free, describe, hooks).
export * from "adkhost-as/assembly/exports";

module("calculator-as", "1.0.0");
tool("calculate", "Evaluates an arithmetic expression: numbers, + - * / %, unary minus and parentheses.",
  `{"type":"object","properties":{"expression":{"type":"string","description":"e.g. 2 * (3 + 4)"}},"required":["expression"]}`,
  calculate);

function calculate(ctx: Context, args: Value): Value | null {
  const expr = args.getString("expression");
  if (expr == null) return ctx.fail("calculate needs a string argument expression");
  const e = expr as string;
  const p = new Calc(e);
  const v = p.parse();
  // A failure is the tool failing: the engine runs on_tool_error hooks,
  // then the model sees the message.
  if (p.err.length > 0) return ctx.fail(p.err);
  if (!isFinite(v)) return ctx.fail("the result is not a finite number");
  return Value.newObject().set("expression", Value.fromString(e)).set("value", Value.fromNumber(v));
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
