//! adkhost guest SDK for Rust: write adkhost ABI v1 modules (tools, agent
//! and model callbacks, plugin hooks) as plain Rust functions, with serde.
//!
//! Tool arguments decode into your own `#[derive(Deserialize)]` types and
//! results are any `Serialize` type; callbacks see and edit the host's
//! messages as [`serde_json::Value`]s. Build a guest crate (`cdylib`) for
//! `wasm32-wasip1` with current stable Rust (README.md says how, with
//! rustup or with Debian's packages only).
//!
//! A guest registers in a setup function and hands it to [`module!`],
//! which defines the ABI's exports (version marker, `adkhost_alloc`,
//! `adkhost_free`, `adkhost_describe` and every `adkhost_<hook>`):
//!
//! ```
//! use adkhost::{json, Context, Module, Value};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Args { city: String }
//!
//! fn setup(m: &mut Module) {
//!     m.tool("get_weather", "Weather of a city.",
//!         json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
//!         |_ctx: &Context, a: Args| Ok(json!({"city": a.city, "highC": 21.0})));
//!     m.after_tool(|_ctx: &Context, _args: &Value, result: &mut Value| {
//!         result["checked"] = json!(true); // an in-place edit replaces the result
//!         Ok(None)
//!     });
//! }
//! adkhost::module!("checker", "1.0.0", setup);
//! # fn main() {}
//! ```
//!
//! A panic traps (wasm32 aborts on panic): the host fails the call and
//! replaces the instance. Return an [`Error`] to fail a hook cleanly.

pub mod base64;
pub mod host;
mod module;

pub use host::{actions, artifacts, config_get, http, invocation_info, log, memory, state, HostError, Status};
pub use module::{Context, Error, Hook, Module, Result, ToolOptions};
/// The JSON of the host's messages, re-exported so a guest names one
/// version of it.
pub use serde_json::{self, json, Map, Value};

/// Runtime support for the exports [`module!`] defines; not for direct use.
#[doc(hidden)]
pub mod rt {
    #[cfg(target_arch = "wasm32")]
    use super::Hook;
    use super::Module;
    use std::alloc::{alloc, dealloc, Layout};
    use std::cell::RefCell;

    // Every block has alignment 1 and at least one byte, so a block's
    // layout is known from the (ptr, size) pair adkhost_free receives: the
    // host frees its input block with the capacity it asked for, an output
    // block with its length, and a host function result is exactly as long
    // as the host asked adkhost_alloc for.
    fn layout(size: usize) -> Layout {
        // size is at most u32::MAX and align 1: always a valid layout.
        Layout::from_size_align(size.max(1), 1).unwrap()
    }

    pub fn alloc_block(size: usize) -> *mut u8 {
        unsafe { alloc(layout(size)) }
    }

    /// # Safety
    /// ptr must come from alloc_block(size) (or be null).
    pub unsafe fn free_block(ptr: *mut u8, size: usize) {
        if !ptr.is_null() {
            dealloc(ptr, layout(size));
        }
    }

    thread_local! {
        static MODULE: RefCell<Option<&'static Module>> = const { RefCell::new(None) };
    }

    /// The module, built by setup on first use and kept for the instance's
    /// life (the host keeps instances between calls).
    pub fn module(name: &str, version: &str, setup: fn(&mut Module)) -> &'static Module {
        MODULE.with(|m| {
            if let Some(m) = *m.borrow() {
                return m;
            }
            let mut built = Module::new(name, version);
            setup(&mut built);
            let leaked: &'static Module = Box::leak(Box::new(built));
            *m.borrow_mut() = Some(leaked);
            leaked
        })
    }

    /// Runs a hook (None: describe) on the input at (ptr, len) and returns
    /// the packed output (ptr << 32) | len, which the host frees.
    ///
    /// # Safety
    /// (ptr, len) must be the host's input block (or (0, 0)).
    #[cfg(target_arch = "wasm32")]
    pub unsafe fn call(m: &Module, hook: Option<Hook>, ptr: u32, len: u32) -> u64 {
        let input: &[u8] = if len == 0 { &[] } else { std::slice::from_raw_parts(ptr as usize as *const u8, len as usize) };
        let mut out = m.handle(hook, input);
        if out.is_empty() {
            return 0;
        }
        // The output's own buffer goes to the host, not a copy: cut to its
        // length (a shrink in place), it is a block of layout(len), which
        // is how the host frees it (adkhost_free(ptr, len)).
        out.shrink_to_fit();
        if out.capacity() != out.len() {
            // Not a layout free_block can release: copy, as before.
            let p = alloc_block(out.len());
            if p.is_null() {
                // An output we cannot allocate: fail loudly, the host replaces us.
                std::process::abort();
            }
            std::ptr::copy_nonoverlapping(out.as_ptr(), p, out.len());
            return ((p as usize as u64) << 32) | out.len() as u64;
        }
        let mut out = std::mem::ManuallyDrop::new(out);
        ((out.as_mut_ptr() as usize as u64) << 32) | out.len() as u64
    }
}

/// Defines the ABI exports of a module named `name` at `version`, whose
/// registrations `setup` makes on the instance's first call. Use it once,
/// in the guest crate (a `cdylib`); on other targets it defines nothing, so
/// the guest's own unit tests build on the host.
#[macro_export]
macro_rules! module {
    ($name:expr, $version:expr, $setup:ident) => {
        #[cfg(target_arch = "wasm32")]
        mod __adkhost_exports {
            use $crate::Hook;
            fn m() -> &'static $crate::Module {
                $crate::rt::module($name, $version, super::$setup)
            }
            extern "C" {
                fn __wasm_call_ctors();
            }
            // A WASI reactor: the host calls _initialize once, before any
            // export. Calling the constructors here (as wasi-libc's reactor
            // crt does) also keeps the linker from wrapping every export in
            // a constructor call of its own, re-entrant adkhost_alloc included.
            #[no_mangle]
            pub unsafe extern "C" fn _initialize() {
                __wasm_call_ctors()
            }
            #[no_mangle]
            pub extern "C" fn adkhost_abi_version_1() {}
            #[no_mangle]
            pub extern "C" fn adkhost_alloc(size: u32) -> u32 {
                $crate::rt::alloc_block(size as usize) as usize as u32
            }
            #[no_mangle]
            pub unsafe extern "C" fn adkhost_free(ptr: u32, size: u32) {
                $crate::rt::free_block(ptr as usize as *mut u8, size as usize)
            }
            #[no_mangle]
            pub unsafe extern "C" fn adkhost_describe(p: u32, n: u32) -> u64 {
                $crate::rt::call(m(), None, p, n)
            }
            $crate::module!(@hooks
                adkhost_tool_call ToolCall, adkhost_before_agent BeforeAgent, adkhost_after_agent AfterAgent,
                adkhost_before_model BeforeModel, adkhost_after_model AfterModel, adkhost_on_model_error OnModelError,
                adkhost_before_tool BeforeTool, adkhost_after_tool AfterTool, adkhost_on_tool_error OnToolError,
                adkhost_on_user_message OnUserMessage, adkhost_before_run BeforeRun, adkhost_on_event OnEvent,
                adkhost_after_run AfterRun, adkhost_on_agent_error OnAgentError, adkhost_on_run_error OnRunError);
        }
        /// The module as the exports build it, for the guest's own tests.
        #[allow(dead_code)]
        pub fn adkhost_module() -> &'static $crate::Module {
            $crate::rt::module($name, $version, $setup)
        }
    };
    (@hooks $($export:ident $hook:ident),*) => {
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $export(p: u32, n: u32) -> u64 {
                $crate::rt::call(m(), Some(Hook::$hook), p, n)
            }
        )*
    };
}

#[cfg(test)]
mod tests;

// The README's examples compile (cargo test runs them as doc tests).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
