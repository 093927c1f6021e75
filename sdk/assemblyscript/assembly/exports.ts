// The ABI v1 exports (abi/ABI.md §3). Re-export them from your entry file:
//
//   export * from "adkhost-as/assembly/exports";
//
// Every hook is exported; describe lists the ones you registered, and the
// host calls only those.

import { handle } from "./index";

// Memory: blocks are the runtime's raw heap (heap.alloc/heap.free),
// outside the garbage collector, so the host's input block, our output
// blocks and host function results are never collected under anyone.

export function adkhost_abi_version_1(): void {}

export function adkhost_alloc(size: u32): u32 {
  return <u32>heap.alloc(<usize>(size == 0 ? 1 : size));
}

export function adkhost_free(ptr: u32, size: u32): void {
  if (ptr != 0) heap.free(<usize>ptr);
}

function call(hook: string, ptr: u32, len: u32): u64 {
  const input = len == 0 ? "" : String.UTF8.decodeUnsafe(<usize>ptr, <usize>len);
  const out = String.UTF8.encode(handle(hook, input));
  const n = out.byteLength;
  if (n == 0) return 0;
  const p = heap.alloc(<usize>n);
  memory.copy(p, changetype<usize>(out), <usize>n);
  return (<u64>p << 32) | <u64>n;
}

export function adkhost_describe(ptr: u32, len: u32): u64 { return call("describe", ptr, len); }
export function adkhost_tool_call(ptr: u32, len: u32): u64 { return call("tool_call", ptr, len); }
export function adkhost_before_agent(ptr: u32, len: u32): u64 { return call("before_agent", ptr, len); }
export function adkhost_after_agent(ptr: u32, len: u32): u64 { return call("after_agent", ptr, len); }
export function adkhost_before_model(ptr: u32, len: u32): u64 { return call("before_model", ptr, len); }
export function adkhost_after_model(ptr: u32, len: u32): u64 { return call("after_model", ptr, len); }
export function adkhost_on_model_error(ptr: u32, len: u32): u64 { return call("on_model_error", ptr, len); }
export function adkhost_before_tool(ptr: u32, len: u32): u64 { return call("before_tool", ptr, len); }
export function adkhost_after_tool(ptr: u32, len: u32): u64 { return call("after_tool", ptr, len); }
export function adkhost_on_tool_error(ptr: u32, len: u32): u64 { return call("on_tool_error", ptr, len); }
export function adkhost_on_user_message(ptr: u32, len: u32): u64 { return call("on_user_message", ptr, len); }
export function adkhost_before_run(ptr: u32, len: u32): u64 { return call("before_run", ptr, len); }
export function adkhost_on_event(ptr: u32, len: u32): u64 { return call("on_event", ptr, len); }
export function adkhost_after_run(ptr: u32, len: u32): u64 { return call("after_run", ptr, len); }
export function adkhost_on_agent_error(ptr: u32, len: u32): u64 { return call("on_agent_error", ptr, len); }
export function adkhost_on_run_error(ptr: u32, len: u32): u64 { return call("on_run_error", ptr, len); }
