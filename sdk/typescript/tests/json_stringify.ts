// JSON.stringify inside a tool call answers as Node does (TestJSONStringify).
import { tool } from "adkhost";
import { run } from "./json_cases.js";

tool({ name: "stringify", description: "JSON.stringify of many values, one line each" }, () => {
  const lines: string[] = [];
  run((s: string) => lines.push(s));
  return { lines };
});
