// The runtime parses a hook's input itself (runtime/main.c, parse_input):
// the tool gets value parsed that way and text, the same value's JSON as a
// string, and answers where value differs from JSON.parse(text)
// (TestInputParse).
import { tool } from "adkhost";

function diff(a: unknown, b: unknown, path: string): string | undefined {
  if (typeof a !== typeof b) return `${path}: ${typeof a} vs ${typeof b}`;
  if (a === null || typeof a !== "object") return Object.is(a, b) ? undefined : `${path}: ${String(a)} vs ${String(b)}`;
  const o = b as object;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(o)) return `${path}: prototype`;
  const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(o);
  if (ka.join("\u0001") !== kb.join("\u0001")) return `${path}: keys ${ka.map(String)} vs ${kb.map(String)}`;
  for (const k of ka) {
    const da = Object.getOwnPropertyDescriptor(a, k)!, db = Object.getOwnPropertyDescriptor(o, k)!;
    if (da.enumerable !== db.enumerable || da.writable !== db.writable || da.configurable !== db.configurable) {
      return `${path}.${String(k)}: descriptor`;
    }
    const d = diff(da.value, db.value, `${path}.${String(k)}`);
    if (d) return d;
  }
  return undefined;
}

tool({ name: "compare", description: "value against JSON.parse(text)" }, ({ value, text }: { value: unknown; text: string }) => {
  return { diff: diff(value, JSON.parse(text), "value") ?? "" };
});
