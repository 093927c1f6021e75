//! Host functions (ABI.md §4). In a wasm32 guest they are the `adkhost`
//! imports; elsewhere (unit tests on the build machine) they call the
//! [`Host`] installed with [`use_host`], or answer `UNAVAILABLE`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// A non-OK status of a host function (ABI.md §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    NotFound,
    InvalidArgument,
    Denied,
    Unavailable,
    TooLarge,
    BadPointer,
    Failed,
    AllocFailed,
    /// A code this SDK does not know; treat it as `Failed`.
    Other(i32),
}

impl Status {
    /// Ok(()) for 0, the status otherwise.
    pub fn check(code: i32) -> Result<(), Status> {
        Err(match code {
            0 => return Ok(()),
            1 => Status::NotFound,
            2 => Status::InvalidArgument,
            3 => Status::Denied,
            4 => Status::Unavailable,
            5 => Status::TooLarge,
            6 => Status::BadPointer,
            7 => Status::Failed,
            8 => Status::AllocFailed,
            c => Status::Other(c),
        })
    }

    pub fn code(self) -> i32 {
        match self {
            Status::NotFound => 1,
            Status::InvalidArgument => 2,
            Status::Denied => 3,
            Status::Unavailable => 4,
            Status::TooLarge => 5,
            Status::BadPointer => 6,
            Status::Failed => 7,
            Status::AllocFailed => 8,
            Status::Other(c) => c,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Status::NotFound => "NOT_FOUND",
            Status::InvalidArgument => "INVALID_ARGUMENT",
            Status::Denied => "DENIED",
            Status::Unavailable => "UNAVAILABLE",
            Status::TooLarge => "TOO_LARGE",
            Status::BadPointer => "BAD_POINTER",
            Status::Failed | Status::Other(_) => "FAILED",
            Status::AllocFailed => "ALLOC_FAILED",
        }
    }
}

/// A failed host function: which one and its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    pub func: &'static str,
    pub status: Status,
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "adkhost: {}: {} ({})", self.func, self.status.name(), self.status.code())
    }
}

impl std::error::Error for HostError {}

#[cfg(target_arch = "wasm32")]
fn check(func: &'static str, code: i32) -> Result<(), HostError> {
    Status::check(code).map_err(|status| HostError { func, status })
}

/// Log levels of the `log` function (slog's).
pub const DEBUG: i32 = -4;
pub const INFO: i32 = 0;
pub const WARN: i32 = 4;
pub const ERROR: i32 = 8;

/// The host functions as the unit tests' stand-in host sees them: the
/// byte-level contract of §4, without pointers. Every method defaults to
/// `UNAVAILABLE` (log: dropped).
pub trait Host {
    fn state_get(&mut self, _key: &str) -> Result<Vec<u8>, Status> {
        Err(Status::Unavailable)
    }
    fn state_set(&mut self, _key: &str, _value: &[u8]) -> Result<(), Status> {
        Err(Status::Unavailable)
    }
    fn state_delete(&mut self, _key: &str) -> Result<(), Status> {
        Err(Status::Unavailable)
    }
    fn transfer_to_agent(&mut self, _name: &str) -> Result<(), Status> {
        Err(Status::Unavailable)
    }
    fn escalate(&mut self) -> Result<(), Status> {
        Err(Status::Unavailable)
    }
    fn skip_summarization(&mut self) -> Result<(), Status> {
        Err(Status::Unavailable)
    }
    fn request_confirmation(&mut self, _hint: &str, _payload: &[u8]) -> Result<(), Status> {
        Err(Status::Unavailable)
    }
    fn log(&mut self, _level: i32, _msg: &str) {}
    fn invocation_info(&mut self) -> Result<Vec<u8>, Status> {
        Err(Status::Unavailable)
    }
    fn config_get(&mut self, _key: &str) -> Result<Vec<u8>, Status> {
        Err(Status::Unavailable)
    }
    fn artifact_load(&mut self, _name: &str, _version: i32) -> Result<Vec<u8>, Status> {
        Err(Status::Unavailable)
    }
    fn artifact_save(&mut self, _name: &str, _part: &[u8]) -> Result<i32, Status> {
        Err(Status::Unavailable)
    }
    fn artifact_list(&mut self) -> Result<Vec<u8>, Status> {
        Err(Status::Unavailable)
    }
    fn http_request(&mut self, _req: &[u8]) -> Result<Vec<u8>, Status> {
        Err(Status::Unavailable)
    }
    fn memory_search(&mut self, _query: &str) -> Result<Vec<u8>, Status> {
        Err(Status::Unavailable)
    }
    fn memory_add_session(&mut self) -> Result<(), Status> {
        Err(Status::Unavailable)
    }
}

// A result the host sent that does not parse: the host failed.
fn bad_result(func: &'static str) -> HostError {
    HostError { func, status: Status::Failed }
}

// encode is serde_json's encoding of a value the guest passes; one that
// has no JSON form (a map with non-string keys) is the guest's mistake.
fn encode<T: Serialize + ?Sized>(func: &'static str, v: &T) -> Result<Vec<u8>, HostError> {
    serde_json::to_vec(v).map_err(|_| HostError { func, status: Status::InvalidArgument })
}

/// Session state (capability `state`), as JSON values: anything
/// `Serialize` in, anything `Deserialize` out.
pub mod state {
    use super::*;

    /// The value of key decoded as T ([`Value`] for any), None if the key
    /// is absent (`NOT_FOUND`). A key deleted in this invocation holds
    /// null: `Some(Value::Null)`, or `Some(None)` as an `Option<T>`. A
    /// value that does not decode as T is `Status::InvalidArgument`.
    pub fn get<T: DeserializeOwned>(key: &str) -> Result<Option<T>, HostError> {
        match raw::state_get(key) {
            Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|_| HostError { func: "state_get", status: Status::InvalidArgument }),
            Err(HostError { status: Status::NotFound, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Records value for key in the state delta of the hook's event.
    pub fn set<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<(), HostError> {
        raw::state_set(key, &encode("state_set", value)?)
    }

    /// Records null for key (google-adk's delta has no removal).
    pub fn delete(key: &str) -> Result<(), HostError> {
        raw::state_delete(key)
    }
}

/// Event actions (capability `actions`).
pub mod actions {
    use super::*;

    pub fn transfer_to_agent(name: &str) -> Result<(), HostError> {
        raw::transfer_to_agent(name)
    }
    pub fn escalate() -> Result<(), HostError> {
        raw::escalate()
    }
    pub fn skip_summarization() -> Result<(), HostError> {
        raw::skip_summarization()
    }
    /// Asks the user to confirm the current tool call; payload None for none.
    pub fn request_confirmation(hint: &str, payload: Option<&Value>) -> Result<(), HostError> {
        let p = match payload {
            Some(p) => encode("request_confirmation", p)?,
            None => Vec::new(),
        };
        raw::request_confirmation(hint, &p)
    }
}

/// Writes a log line at level (DEBUG, INFO, WARN, ERROR or any slog level).
/// Failures are ignored: logging must not fail a hook.
pub fn log(level: i32, msg: &str) {
    let _ = raw::log(level, msg);
}

pub fn debug(msg: &str) {
    log(DEBUG, msg)
}
pub fn info(msg: &str) {
    log(INFO, msg)
}
pub fn warn(msg: &str) {
    log(WARN, msg)
}
pub fn error(msg: &str) {
    log(ERROR, msg)
}

/// The InvocationInfo of the current call (every hook's context has it too).
pub fn invocation_info() -> Result<Value, HostError> {
    let b = raw::invocation_info()?;
    serde_json::from_slice(&b).map_err(|_| bad_result("invocation_info"))
}

/// The granted config value of key (capability `config`), None if absent.
pub fn config_get(key: &str) -> Result<Option<String>, HostError> {
    match raw::config_get(key) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(HostError { status: Status::NotFound, .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The session's artifacts (capability `artifacts`). A part is a JSON
/// `Part` (`{"text": …}`, `{"inlineData": {"mimeType": …, "data": base64}}`, …).
pub mod artifacts {
    use super::*;

    /// The version argument of [`load`] for the newest version.
    pub const LATEST: i32 = -1;

    /// The Part of a version of name ([`LATEST`] for the newest); None if
    /// there is no such artifact or version (`NOT_FOUND`).
    pub fn load(name: &str, version: i32) -> Result<Option<Value>, HostError> {
        match raw::artifact_load(name, version) {
            Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|_| bad_result("artifact_load")),
            Err(HostError { status: Status::NotFound, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Stores part (a `Part`: a [`Value`], or your own `Serialize` type) as
    /// the next version of name and returns that version.
    pub fn save<T: Serialize + ?Sized>(name: &str, part: &T) -> Result<i32, HostError> {
        raw::artifact_save(name, &encode("artifact_save", part)?)
    }

    /// The names of the artifacts the session sees.
    pub fn list() -> Result<Vec<String>, HostError> {
        serde_json::from_slice(&raw::artifact_list()?).map_err(|_| bad_result("artifact_list"))
    }
}

// Bytes as JSON carries them: a base64 string (null or absent: none).
mod b64 {
    use super::*;

    pub fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::base64::encode(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(Vec::new()),
            Some(s) => crate::base64::decode(&s).ok_or_else(|| serde::de::Error::custom("body is not base64")),
        }
    }
}

// A string that may be null or absent: "" then.
fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// HTTP through the host (capability `http`), to the destinations the
/// embedder grants; others are `DENIED`. WASI has no sockets: this is the
/// only way out.
pub mod http {
    use super::*;

    /// An HTTP request: `Request::get(url)`, or `Request::new(method, url)`
    /// with `.header(name, value)` and `.body(bytes)`. It serializes as the
    /// `HTTPRequest` message of ABI.md §4.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct Request {
        pub method: String,
        pub url: String,
        /// One value per name; join repeated values with ", ".
        #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "headers")]
        pub headers: Vec<(String, String)>,
        #[serde(skip_serializing_if = "Vec::is_empty", with = "b64")]
        pub body: Vec<u8>,
    }

    fn headers<S: serde::Serializer>(h: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(h.iter().map(|(k, v)| (k, v)))
    }

    impl Request {
        pub fn new(method: &str, url: &str) -> Request {
            let method = if method.is_empty() { "GET" } else { method };
            Request { method: method.into(), url: url.into(), ..Request::default() }
        }
        pub fn get(url: &str) -> Request {
            Request::new("GET", url)
        }
        pub fn header(mut self, name: &str, value: &str) -> Request {
            self.headers.push((name.into(), value.into()));
            self
        }
        pub fn body(mut self, body: impl Into<Vec<u8>>) -> Request {
            self.body = body.into();
            self
        }
    }

    /// An HTTP response (any status: a 404 is a response, not an error),
    /// decoded from the `HTTPResponse` message of ABI.md §4.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
    pub struct Response {
        pub status: i64,
        #[serde(default, deserialize_with = "response_headers")]
        pub headers: Vec<(String, String)>,
        #[serde(default, with = "b64")]
        pub body: Vec<u8>,
    }

    fn response_headers<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
        let m = Option::<serde_json::Map<String, Value>>::deserialize(d)?.unwrap_or_default();
        m.into_iter()
            .map(|(k, v)| match v {
                Value::String(v) => Ok((k, v)),
                _ => Err(serde::de::Error::custom("a header value is not a string")),
            })
            .collect()
    }

    impl Response {
        /// The value of a header, its name matched case-insensitively.
        pub fn header(&self, name: &str) -> Option<&str> {
            self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
        }
        /// The body as text (invalid UTF-8 replaced).
        pub fn text(&self) -> String {
            String::from_utf8_lossy(&self.body).into_owned()
        }
    }

    /// Performs req through the host.
    pub fn request(req: &Request) -> Result<Response, HostError> {
        let b = raw::http_request(&encode("http_request", req)?)?;
        serde_json::from_slice(&b).map_err(|_| bad_result("http_request"))
    }

    /// A GET of url.
    pub fn get(url: &str) -> Result<Response, HostError> {
        request(&Request::get(url))
    }
}

/// The user's memory across sessions (capability `memory`), as google-adk's
/// `search_memory` and `add_session_to_memory`. Without a memory service in
/// the runner, and in the run-level plugin hooks, both are `Err` with
/// `Status::Unavailable`.
pub mod memory {
    use super::*;

    /// A `MemoryEntry` of ABI.md §4 (google-adk's wire format). It
    /// serializes with its empty texts left out.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Entry {
        /// The `Content` (`{"role": …, "parts": […]}`), `Value::Null` if absent.
        #[serde(default)]
        pub content: Value,
        /// `custom_metadata`, a free-form object (`{}` if absent).
        #[serde(default = "empty_object", deserialize_with = "null_as_object")]
        pub custom_metadata: Value,
        /// Each empty when absent.
        #[serde(default, deserialize_with = "null_as_empty", skip_serializing_if = "String::is_empty")]
        pub id: String,
        #[serde(default, deserialize_with = "null_as_empty", skip_serializing_if = "String::is_empty")]
        pub author: String,
        /// As google-adk's `datetime.isoformat` writes it.
        #[serde(default, deserialize_with = "null_as_empty", skip_serializing_if = "String::is_empty")]
        pub timestamp: String,
    }

    fn empty_object() -> Value {
        Value::Object(serde_json::Map::new())
    }

    fn null_as_object<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        Ok(Option::<Value>::deserialize(d)?.unwrap_or_else(empty_object))
    }

    impl Entry {
        /// The text of the content's parts, concatenated.
        pub fn text(&self) -> String {
            let parts = self.content.get("parts").and_then(Value::as_array);
            parts.into_iter().flatten().filter_map(|p| p.get("text").and_then(Value::as_str)).collect()
        }
    }

    #[derive(Deserialize)]
    struct SearchMemoryResponse {
        memories: Vec<Entry>,
    }

    /// The user's memories matching query, best first (empty when nothing
    /// matches); the query may be empty.
    pub fn search(query: &str) -> Result<Vec<Entry>, HostError> {
        let r: SearchMemoryResponse = serde_json::from_slice(&raw::memory_search(query)?).map_err(|_| bad_result("memory_search"))?;
        Ok(r.memories)
    }

    /// Adds the current session to the memory service.
    pub fn add_session() -> Result<(), HostError> {
        raw::memory_add_session()
    }
}

#[cfg(target_arch = "wasm32")]
mod raw {
    use super::{check, HostError};

    // The imports, in their own module so the safe wrappers below can take
    // their names.
    mod ffi {
        #[link(wasm_import_module = "adkhost")]
        extern "C" {
            pub fn state_get(kp: *const u8, kl: usize, rp: *mut u32, rl: *mut u32) -> i32;
            pub fn state_set(kp: *const u8, kl: usize, vp: *const u8, vl: usize) -> i32;
            pub fn state_delete(kp: *const u8, kl: usize) -> i32;
            pub fn transfer_to_agent(np: *const u8, nl: usize) -> i32;
            pub fn escalate() -> i32;
            pub fn skip_summarization() -> i32;
            pub fn request_confirmation(hp: *const u8, hl: usize, pp: *const u8, pl: usize) -> i32;
            pub fn log(level: i32, mp: *const u8, ml: usize) -> i32;
            pub fn invocation_info(rp: *mut u32, rl: *mut u32) -> i32;
            pub fn config_get(kp: *const u8, kl: usize, rp: *mut u32, rl: *mut u32) -> i32;
            pub fn artifact_load(np: *const u8, nl: usize, version: i32, rp: *mut u32, rl: *mut u32) -> i32;
            pub fn artifact_save(np: *const u8, nl: usize, pp: *const u8, pl: usize, rv: *mut i32) -> i32;
            pub fn artifact_list(rp: *mut u32, rl: *mut u32) -> i32;
            pub fn http_request(qp: *const u8, ql: usize, rp: *mut u32, rl: *mut u32) -> i32;
            pub fn memory_search(qp: *const u8, ql: usize, rp: *mut u32, rl: *mut u32) -> i32;
            pub fn memory_add_session() -> i32;
        }
    }

    // result takes ownership of a block the host allocated with our
    // adkhost_alloc (align 1, exactly len bytes), as a Vec of that layout.
    unsafe fn result(p: u32, n: u32) -> Vec<u8> {
        if n == 0 {
            return Vec::new();
        }
        Vec::from_raw_parts(p as usize as *mut u8, n as usize, n as usize)
    }

    macro_rules! ret {
        ($name:literal, $call:expr, $p:ident, $n:ident) => {{
            let (mut $p, mut $n) = (0u32, 0u32);
            let code = unsafe { $call };
            check($name, code)?;
            Ok(unsafe { result($p, $n) })
        }};
    }

    pub fn state_get(key: &str) -> Result<Vec<u8>, HostError> {
        ret!("state_get", ffi::state_get(key.as_ptr(), key.len(), &mut p, &mut n), p, n)
    }
    pub fn state_set(key: &str, v: &[u8]) -> Result<(), HostError> {
        check("state_set", unsafe { ffi::state_set(key.as_ptr(), key.len(), v.as_ptr(), v.len()) })
    }
    pub fn state_delete(key: &str) -> Result<(), HostError> {
        check("state_delete", unsafe { ffi::state_delete(key.as_ptr(), key.len()) })
    }
    pub fn transfer_to_agent(name: &str) -> Result<(), HostError> {
        check("transfer_to_agent", unsafe { ffi::transfer_to_agent(name.as_ptr(), name.len()) })
    }
    pub fn escalate() -> Result<(), HostError> {
        check("escalate", unsafe { ffi::escalate() })
    }
    pub fn skip_summarization() -> Result<(), HostError> {
        check("skip_summarization", unsafe { ffi::skip_summarization() })
    }
    pub fn request_confirmation(hint: &str, payload: &[u8]) -> Result<(), HostError> {
        check("request_confirmation", unsafe {
            ffi::request_confirmation(hint.as_ptr(), hint.len(), payload.as_ptr(), payload.len())
        })
    }
    pub fn log(level: i32, msg: &str) -> Result<(), HostError> {
        check("log", unsafe { ffi::log(level, msg.as_ptr(), msg.len()) })
    }
    pub fn invocation_info() -> Result<Vec<u8>, HostError> {
        ret!("invocation_info", ffi::invocation_info(&mut p, &mut n), p, n)
    }
    pub fn config_get(key: &str) -> Result<Vec<u8>, HostError> {
        ret!("config_get", ffi::config_get(key.as_ptr(), key.len(), &mut p, &mut n), p, n)
    }
    pub fn artifact_load(name: &str, version: i32) -> Result<Vec<u8>, HostError> {
        ret!("artifact_load", ffi::artifact_load(name.as_ptr(), name.len(), version, &mut p, &mut n), p, n)
    }
    pub fn artifact_save(name: &str, part: &[u8]) -> Result<i32, HostError> {
        // The host writes the version here, a little-endian i32 (as wasm's).
        let mut version = 0i32;
        check("artifact_save", unsafe {
            ffi::artifact_save(name.as_ptr(), name.len(), part.as_ptr(), part.len(), &mut version)
        })?;
        Ok(version)
    }
    pub fn artifact_list() -> Result<Vec<u8>, HostError> {
        ret!("artifact_list", ffi::artifact_list(&mut p, &mut n), p, n)
    }
    pub fn http_request(req: &[u8]) -> Result<Vec<u8>, HostError> {
        ret!("http_request", ffi::http_request(req.as_ptr(), req.len(), &mut p, &mut n), p, n)
    }
    pub fn memory_search(query: &str) -> Result<Vec<u8>, HostError> {
        ret!("memory_search", ffi::memory_search(query.as_ptr(), query.len(), &mut p, &mut n), p, n)
    }
    pub fn memory_add_session() -> Result<(), HostError> {
        check("memory_add_session", unsafe { ffi::memory_add_session() })
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod raw {
    use super::{Host, HostError, Status};
    use std::cell::RefCell;

    thread_local! {
        pub(super) static HOST: RefCell<Option<Box<dyn Host>>> = const { RefCell::new(None) };
    }

    fn with<T>(func: &'static str, f: impl FnOnce(&mut dyn Host) -> Result<T, Status>) -> Result<T, HostError> {
        HOST.with(|h| match h.borrow_mut().as_mut() {
            Some(h) => f(h.as_mut()),
            None => Err(Status::Unavailable),
        })
        .map_err(|status| HostError { func, status })
    }

    pub fn state_get(key: &str) -> Result<Vec<u8>, HostError> {
        with("state_get", |h| h.state_get(key))
    }
    pub fn state_set(key: &str, v: &[u8]) -> Result<(), HostError> {
        with("state_set", |h| h.state_set(key, v))
    }
    pub fn state_delete(key: &str) -> Result<(), HostError> {
        with("state_delete", |h| h.state_delete(key))
    }
    pub fn transfer_to_agent(name: &str) -> Result<(), HostError> {
        with("transfer_to_agent", |h| h.transfer_to_agent(name))
    }
    pub fn escalate() -> Result<(), HostError> {
        with("escalate", |h| h.escalate())
    }
    pub fn skip_summarization() -> Result<(), HostError> {
        with("skip_summarization", |h| h.skip_summarization())
    }
    pub fn request_confirmation(hint: &str, payload: &[u8]) -> Result<(), HostError> {
        with("request_confirmation", |h| h.request_confirmation(hint, payload))
    }
    pub fn log(level: i32, msg: &str) -> Result<(), HostError> {
        with("log", |h| {
            h.log(level, msg);
            Ok(())
        })
    }
    pub fn invocation_info() -> Result<Vec<u8>, HostError> {
        with("invocation_info", |h| h.invocation_info())
    }
    pub fn config_get(key: &str) -> Result<Vec<u8>, HostError> {
        with("config_get", |h| h.config_get(key))
    }
    pub fn artifact_load(name: &str, version: i32) -> Result<Vec<u8>, HostError> {
        with("artifact_load", |h| h.artifact_load(name, version))
    }
    pub fn artifact_save(name: &str, part: &[u8]) -> Result<i32, HostError> {
        with("artifact_save", |h| h.artifact_save(name, part))
    }
    pub fn artifact_list() -> Result<Vec<u8>, HostError> {
        with("artifact_list", |h| h.artifact_list())
    }
    pub fn http_request(req: &[u8]) -> Result<Vec<u8>, HostError> {
        with("http_request", |h| h.http_request(req))
    }
    pub fn memory_search(query: &str) -> Result<Vec<u8>, HostError> {
        with("memory_search", |h| h.memory_search(query))
    }
    pub fn memory_add_session() -> Result<(), HostError> {
        with("memory_add_session", |h| h.memory_add_session())
    }
}

/// Serves the host functions with h on this thread (outside WebAssembly
/// only: a wasm32 guest always talks to the real host). Returns the host
/// installed before, if any.
#[cfg(not(target_arch = "wasm32"))]
pub fn use_host(h: Option<Box<dyn Host>>) -> Option<Box<dyn Host>> {
    raw::HOST.with(|slot| std::mem::replace(&mut *slot.borrow_mut(), h))
}
