// get_weather in AssemblyScript against sdk/assemblyscript: the
// AssemblyScript row of make bench-wasm, the twin of the Go benchmark tool
// (bench_test.go's getWeather). TestAssemblyScriptBench compiles it with the
// SDK's own asc as tests/weather.ts beside a link to the SDK's assembly/, so
// the imports are those of the SDK's test guest.

import { Context, Value, Status, module, tool, state } from "../assembly/index";
export * from "../assembly/exports";

module("weather", "1.0.0", ["state"]);
tool("get_weather", "Returns the weather forecast of a city.",
  `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`,
  getWeather);

function getWeather(ctx: Context, args: Value): Value | null {
  const c = args.getString("city");
  if (c == null) return ctx.fail("get_weather needs a string city");
  const city = (c as string).trim();
  let days: i64 = 1;
  const d = args.get("days");
  if (d != null) {
    const n = d.asNumber();
    if (!isNaN(n) && n > 1) days = <i64>n;
  }
  if (days > 3) return ctx.fail("at most 3 days, not " + days.toString());
  const list = Value.newArray();
  for (let i: i64 = 0; i < days; i++) {
    list.push(Value.newObject().set("summary", Value.fromString("sunny")).set("highC", Value.fromInteger(21 + i)));
  }
  const st = state.set("user:last_city", Value.fromString(city));
  if (st != Status.OK) return ctx.fail("state_set: status " + st.toString());
  return Value.newObject().set("city", Value.fromString(city)).set("days", list);
}
