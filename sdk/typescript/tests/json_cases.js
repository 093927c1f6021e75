// The values TestJSONStringify stringifies, as plain JavaScript: Node prints
// the expected lines (tests/json_stringify.golden) with
//   node -e 'import("./tests/json_cases.js").then((m) => m.run(console.log))' > tests/json_stringify.golden
// The runtime's JSON.stringify takes a fast path for plain objects and
// arrays and leaves every other case to QuickJS: these are both kinds.
export function run(print) {
  class P { constructor() { this.a = 1; } }
  class T { constructor() { this.a = 1; } toJSON() { return "T!"; } }
  const withGetter = { a: 1, get b() { return 2; }, c: 3 };
  const del = { a: 1, b: 2, c: 3 }; delete del.b; del.d = 4;
  const idx = { b: 1, 2: "two", a: 3, 1: "one", "4294967294": "big", "4294967295": "notidx" };
  const sparse = [1, , 3];
  const longer = [1, 2]; longer.length = 4;
  const arrProp = [1, 2]; arrProp.x = 5;
  const arrToJSON = [1, 2]; arrToJSON.toJSON = () => "arr";
  const nonEnum = { a: 1 }; Object.defineProperty(nonEnum, "h", { value: 2, enumerable: false });
  const sym = { a: 1, [Symbol("s")]: 2, s: Symbol("v") };
  const nullProto = Object.create(null); nullProto.x = [null, undefined, () => 1];
  const proxy = new Proxy({ a: 1 }, {});
  const cyc = { a: 1 }; cyc.self = cyc;
  let deep = {}; let d = deep; for (let i = 0; i < 80; i++) { d.n = {}; d = d.n; }
  const ownToJSON = { a: 1, toJSON() { return { b: 2 }; } };
  const hiddenToJSON = { a: 1 }; Object.defineProperty(hiddenToJSON, "toJSON", { value: () => "hidden", enumerable: false });
  const protoToJSON = Object.create({ toJSON() { return "proto"; } }); protoToJSON.a = 1;
  class Priv { #x = 1; y = 2; }
  const values = [
    null, true, false, 0, -0, 1, -1, 2147483647, -2147483648, 2147483648, 1.5, -1e-7, 1e21, 123456789012345680000, NaN, Infinity, -Infinity,
    "", "abc", "quote\" back\\ nl\n cr\r tab\t bs\b ff\f nul\0 x1f\x1f del\x7f", "latin é ÿ \u00a0", "wide € 😀", "lone \ud800 x \udc00", "a".repeat(300) + "b",
    [], {}, [[]], [{}], { a: [] }, { a: { b: { c: [1, "x", null, true] } } },
    { city: "Paris", days: [{ summary: "sunny", highC: 21 }, { summary: "sunny", highC: 22.5 }] },
    new P(), new T(), withGetter, del, idx, sparse, longer, arrProp, arrToJSON, nonEnum, sym, nullProto, proxy,
    deep, ownToJSON, hiddenToJSON, protoToJSON, new Priv(), new Date(0), new Map([[1, 2]]), /re/g, new Number(3), new String("s"), new Boolean(false),
    [undefined, function () {}, Symbol("x")], { u: undefined, f() {}, n: null }, { "é": 1, "€": 2, "a\"b": 3, "": 4 },
    undefined, () => 1, Symbol("top"), [new Uint8Array([1, 2])], { e: new Error("x") }, { nested: [[1, [2, [3, [4]]]]] },
    ("con" + "cat" + "enated string ".repeat(10)), { k: "x".repeat(5) + "y".repeat(5) },
    [9007199254740991, 9007199254740992, -9007199254740993, 2 ** 53 + 2, 4503599627370495.5, 1e20, -1e15, 0.5 * 6, 1 / 3, 5e-324, 2 ** 32, -(2 ** 40), -0.0 * 1],
    { "€😀": "\ud83d", "ÿ": ["\udfff€", "é\u0001"] },
  ];
  for (const [i, v] of values.entries()) {
    let s;
    try { s = JSON.stringify(v); } catch (e) { s = "throws " + e.constructor.name; }
    print(i + " " + (s === undefined ? "undefined" : s));
  }
  try { JSON.stringify(cyc); print("cyc no throw"); } catch (e) { print("cyc " + e.constructor.name); }
  try { JSON.stringify({ a: 1n }); print("bigint no throw"); } catch (e) { print("bigint " + e.constructor.name); }
  Object.prototype.toJSON = function () { return "OP"; };
  print("op " + JSON.stringify({ a: [1] }) + " " + JSON.stringify([1]));
  delete Object.prototype.toJSON;
  Array.prototype.toJSON = function () { return "AP"; };
  print("ap " + JSON.stringify({ a: [1] }));
  delete Array.prototype.toJSON;
  print("rep " + JSON.stringify(JSON.stringify({ a: 1, b: [2] }, null, 2)) + " " + JSON.stringify({ a: 1, b: 2 }, ["b"]) + " " + JSON.stringify({ a: 1 }, (k, v) => (k === "a" ? 9 : v)));
  print("meta " + JSON.stringify.name + " " + JSON.stringify.length + " " + Object.getOwnPropertyDescriptor(JSON, "stringify").enumerable + " " + Object.getOwnPropertyDescriptor(JSON, "stringify").writable);
}
