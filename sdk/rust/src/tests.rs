// Tests of registration and dispatch, run on the build machine (`cargo
// test`, or `rustc --test src/lib.rs`): hooks run through Module::handle,
// the same code the wasm exports run, with a stand-in host.

use crate::host::{self, use_host, Host, Status};
use crate::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

fn parse(b: &[u8]) -> Value {
    serde_json::from_slice(b).unwrap_or_else(|e| panic!("{}: {}", e, String::from_utf8_lossy(b)))
}

#[derive(Deserialize)]
struct City {
    city: String,
    #[serde(default)]
    days: Option<u32>,
}

#[derive(Serialize)]
struct Forecast {
    city: String,
    days: u32,
    call: String,
}

fn setup(m: &mut Module) {
    m.capability("state").capability("state");
    m.tool("get_weather", "Weather.", json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        |ctx: &Context, c: City| {
            if c.city == "Atlantis" {
                return Err("no weather under water".into());
            }
            state::set("user:last_city", &c.city)?;
            Ok(Forecast { city: c.city, days: c.days.unwrap_or(1), call: ctx.function_call_id().into() })
        });
    m.tool("count", "A non-object result.", json!({}), |_: &Context, _: Value| Ok(3i64));
    m.after_tool(|_, _, result| {
        if result.get("skip").is_some() {
            return Ok(None);
        }
        result["seen"] = json!(1);
        Ok(None)
    });
    m.after_tool(|_, _, _| Ok(Some(json!({"second": true}))));
    m.before_model(|ctx, req| {
        if ctx.agent_name() == "blocked" {
            return Ok(Some(json!({"content": {"role": "model", "parts": [{"text": "no"}]}})));
        }
        if ctx.agent_name() == "failing" {
            return Err("model refused".into());
        }
        if ctx.agent_name() == "editor" {
            req["model"] = json!("edited");
        }
        Ok(None)
    });
    m.on_run_error(|_, e| host::warn(&format!("run failed: {}", e)));
}

#[test]
fn describe_lists_registrations() {
    let m = Module::new("t", "1.2.3");
    assert_eq!(m.describe().to_string(), r#"{"abiVersion":1,"name":"t","version":"1.2.3"}"#);
    let mut m = Module::new("weather", "1.0.0");
    setup(&mut m);
    let d = parse(&m.handle(None, b""));
    assert_eq!(d["hooks"].to_string(), r#"["tool_call","before_model","after_tool","on_run_error"]"#);
    assert_eq!(d["capabilities"].to_string(), r#"["state"]"#);
    assert_eq!(d.pointer("/tools").unwrap().as_array().unwrap().len(), 2);
    assert_eq!(
        d["tools"][0].to_string(),
        r#"{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}"#
    );
}

#[derive(Default)]
struct Fake {
    state: BTreeMap<String, String>,
    logs: Vec<(i32, String)>,
    artifacts: BTreeMap<String, Vec<String>>,
    requests: Vec<String>,
    queries: Vec<String>,
    sessions_added: usize,
    no_memory: bool,
}

struct FakeHost(Rc<RefCell<Fake>>);

impl Host for FakeHost {
    fn state_get(&mut self, key: &str) -> std::result::Result<Vec<u8>, Status> {
        self.0.borrow().state.get(key).map(|v| v.as_bytes().to_vec()).ok_or(Status::NotFound)
    }
    fn state_set(&mut self, key: &str, v: &[u8]) -> std::result::Result<(), Status> {
        self.0.borrow_mut().state.insert(key.into(), String::from_utf8(v.to_vec()).unwrap());
        Ok(())
    }
    fn state_delete(&mut self, key: &str) -> std::result::Result<(), Status> {
        self.state_set(key, b"null")
    }
    fn log(&mut self, level: i32, msg: &str) {
        self.0.borrow_mut().logs.push((level, msg.into()))
    }
    fn artifact_load(&mut self, name: &str, version: i32) -> std::result::Result<Vec<u8>, Status> {
        let f = self.0.borrow();
        let versions = f.artifacts.get(name).ok_or(Status::NotFound)?;
        let v = if version == -1 { versions.len() - 1 } else { version as usize };
        versions.get(v).map(|p| p.as_bytes().to_vec()).ok_or(Status::NotFound)
    }
    fn artifact_save(&mut self, name: &str, part: &[u8]) -> std::result::Result<i32, Status> {
        let mut f = self.0.borrow_mut();
        let versions = f.artifacts.entry(name.into()).or_default();
        versions.push(String::from_utf8(part.to_vec()).unwrap());
        Ok(versions.len() as i32 - 1)
    }
    fn artifact_list(&mut self) -> std::result::Result<Vec<u8>, Status> {
        Ok(serde_json::to_vec(&self.0.borrow().artifacts.keys().collect::<Vec<_>>()).unwrap())
    }
    fn http_request(&mut self, req: &[u8]) -> std::result::Result<Vec<u8>, Status> {
        let r = String::from_utf8(req.to_vec()).unwrap();
        self.0.borrow_mut().requests.push(r.clone());
        if r.contains("denied.example") {
            return Err(Status::Denied);
        }
        Ok(br#"{"status":201,"headers":{"Content-Type":"text/plain"},"body":"aMOpbGxv"}"#.to_vec())
    }
    fn memory_search(&mut self, query: &str) -> std::result::Result<Vec<u8>, Status> {
        let mut f = self.0.borrow_mut();
        f.queries.push(query.into());
        if f.no_memory {
            return Err(Status::Unavailable);
        }
        Ok(match query {
            "tea" => br#"{"memories":[{"content":{"role":"user","parts":[{"text":"I drink "},{"text":"green tea"}]},"custom_metadata":{"k":1},"id":"e1","author":"user","timestamp":"2026-01-02T03:04:05"},{"content":{"role":"user","parts":[{"text":"tea time"}]},"custom_metadata":{}}]}"#.to_vec(),
            "bad" => br#"{"memories":[{"content":{},"custom_metadata":{},"id":7}]}"#.to_vec(),
            _ => br#"{"memories":[]}"#.to_vec(),
        })
    }
    fn memory_add_session(&mut self) -> std::result::Result<(), Status> {
        let mut f = self.0.borrow_mut();
        if f.no_memory {
            return Err(Status::Unavailable);
        }
        f.sessions_added += 1;
        Ok(())
    }
}

fn with_fake<T>(f: impl FnOnce() -> T) -> (T, Rc<RefCell<Fake>>) {
    let fake = Rc::new(RefCell::new(Fake::default()));
    use_host(Some(Box::new(FakeHost(fake.clone()))));
    let r = f();
    use_host(None);
    (r, fake)
}

#[test]
fn tool_call_decodes_args_and_writes_state() {
    let mut m = Module::new("weather", "1.0.0");
    setup(&mut m);
    let input = br#"{"abiVersion":1,"context":{"functionCallId":"c1","newField":1},"tool":"get_weather","args":{"city":"Paris","days":2},"extra":true}"#;
    let (out, fake) = with_fake(|| m.handle(Some(Hook::ToolCall), input));
    assert_eq!(String::from_utf8(out).unwrap(), r#"{"abiVersion":1,"result":{"city":"Paris","days":2,"call":"c1"}}"#);
    assert_eq!(fake.borrow().state.get("user:last_city").map(String::as_str), Some(r#""Paris""#));
    let (out, _) = with_fake(|| m.handle(Some(Hook::ToolCall), br#"{"abiVersion":1,"tool":"count"}"#));
    assert_eq!(out, br#"{"abiVersion":1,"result":3}"#);
}

#[test]
fn tool_call_errors() {
    let mut m = Module::new("weather", "1.0.0");
    setup(&mut m);
    for (input, want) in [
        (&br#"{"abiVersion":1,"tool":"get_weather","args":{}}"#[..], "adkhost: invalid arguments for get_weather: missing field `city`\""),
        (br#"{"abiVersion":1,"tool":"get_weather","args":{"city":3}}"#, "adkhost: invalid arguments for get_weather: invalid type: integer `3`, expected a string\""),
        (br#"{"abiVersion":1,"tool":"get_weather","args":{"city":"x","days":-1}}"#, "invalid value: integer `-1`, expected u32"),
        (br#"{"abiVersion":1,"tool":"get_weather","args":{"city":"Atlantis"}}"#, "no weather under water"),
        (br#"{"abiVersion":1,"tool":"nope"}"#, "unknown tool \\\"nope\\\""),
        (br#"{"abiVersion":2,"tool":"count"}"#, "abiVersion 2 is not 1"),
        (br#"{"abiVersion":1,"tool""#, "adkhost: invalid input: EOF while parsing an object\""),
        (br#"{"abiVersion":1,"tool":"count","args":[1]}"#, "adkhost: invalid arguments for count: not a JSON object\""),
        (br#"{"abiVersion":1,"tool":"get_weather","args":["Paris"]}"#, "adkhost: invalid arguments for get_weather: not a JSON object\""),
        (br#"[1]"#, "not a JSON object"),
    ] {
        let out = String::from_utf8(m.handle(Some(Hook::ToolCall), input)).unwrap();
        assert!(out.starts_with(r#"{"abiVersion":1,"error":""#) && out.contains(want), "{} -> {}", String::from_utf8_lossy(input), out);
    }
    // Without a host, state_set is UNAVAILABLE: the call fails with it.
    let out = String::from_utf8(m.handle(Some(Hook::ToolCall), br#"{"abiVersion":1,"tool":"get_weather","args":{"city":"Rome"}}"#)).unwrap();
    assert_eq!(out, r#"{"abiVersion":1,"error":"adkhost: state_set: UNAVAILABLE (4)"}"#);
}

#[test]
fn tool_call_context_on_demand() {
    // A tool call keeps the context's text and decodes it on first use,
    // escapes and all; without one, info() is null.
    let mut m = Module::new("ctx", "1.0.0");
    m.tool("who", "The context.", json!({}), |ctx: &Context, _: Value| {
        Ok(json!({"app": ctx.app_name(), "user": ctx.user_id(), "tool": ctx.tool, "content": ctx.info()["userContent"]}))
    });
    let input = br#"{"abiVersion":1,"context":{"appName":"we\"ird \u00e9","userId":"u1","userContent":{"role":"user","parts":[{"text":"hi"}]}},"tool":"who"}"#;
    let out = parse(&m.handle(Some(Hook::ToolCall), input));
    assert_eq!(out, json!({"abiVersion": 1, "result": {"app": "we\"ird é", "user": "u1", "tool": "who", "content": {"role": "user", "parts": [{"text": "hi"}]}}}));
    let out = parse(&m.handle(Some(Hook::ToolCall), br#"{"abiVersion":1,"tool":"who"}"#));
    assert_eq!(out, json!({"abiVersion": 1, "result": {"app": "", "user": "", "tool": "who", "content": null}}));
    let out = String::from_utf8(m.handle(Some(Hook::ToolCall), b"{\"tool\":\"who\xff\"}")).unwrap();
    assert_eq!(out, r#"{"abiVersion":1,"error":"adkhost: invalid input: not UTF-8"}"#);
    assert_eq!(Context::new(json!({"agentName": "a"})).agent_name(), "a");
}

#[test]
fn callbacks_chain_and_edits() {
    let mut m = Module::new("weather", "1.0.0");
    setup(&mut m);
    // The first after_tool edits in place, the second returns a value: the
    // returned value wins.
    let out = m.handle(Some(Hook::AfterTool), br#"{"abiVersion":1,"tool":{"name":"x"},"args":{},"result":{"a":1}}"#);
    assert_eq!(out, br#"{"abiVersion":1,"result":{"second":true}}"#);

    let mut only_edit = Module::new("e", "");
    only_edit.after_tool(|ctx, args, result| {
        assert_eq!(ctx.tool, "lookup");
        assert_eq!(args["q"], "z");
        if let Some(s) = result.get_mut("email") {
            *s = json!("[redacted]");
        }
        Ok(None)
    });
    let out = only_edit.handle(Some(Hook::AfterTool), br#"{"abiVersion":1,"tool":{"name":"lookup"},"args":{"q":"z"},"result":{"email":"a@b.co","n":1}}"#);
    assert_eq!(out, br#"{"abiVersion":1,"result":{"email":"[redacted]","n":1}}"#);
    // No edit: empty output, nothing to change.
    let out = only_edit.handle(Some(Hook::AfterTool), br#"{"abiVersion":1,"tool":{"name":"lookup"},"args":{"q":"z"},"result":{"n":1}}"#);
    assert!(out.is_empty());

    let req = |agent: &str| format!(r#"{{"abiVersion":1,"context":{{"agentName":"{}"}},"request":{{"model":"m","contents":[]}}}}"#, agent);
    assert!(m.handle(Some(Hook::BeforeModel), req("root").as_bytes()).is_empty());
    assert_eq!(m.handle(Some(Hook::BeforeModel), req("editor").as_bytes()), br#"{"abiVersion":1,"request":{"model":"edited","contents":[]}}"#);
    assert_eq!(
        m.handle(Some(Hook::BeforeModel), req("blocked").as_bytes()),
        br#"{"abiVersion":1,"response":{"content":{"role":"model","parts":[{"text":"no"}]}}}"#
    );
    assert_eq!(m.handle(Some(Hook::BeforeModel), req("failing").as_bytes()), br#"{"abiVersion":1,"error":"model refused"}"#);
    // A hook nobody registered: nothing to change.
    assert!(m.handle(Some(Hook::OnEvent), br#"{"abiVersion":1,"event":{}}"#).is_empty());
}

#[test]
fn edits_keep_member_order_and_integers() {
    // An in-place edit sends back the host's members in the host's order,
    // and 64-bit integers exactly (2^53 + 1 is no f64).
    let mut m = Module::new("e", "");
    m.after_tool(|_, _, result| {
        result["b"] = json!("edited");
        Ok(None)
    });
    let out = m.handle(Some(Hook::AfterTool), br#"{"abiVersion":1,"result":{"z":9007199254740993,"b":1,"a":-5,"f":1.5,"u":18446744073709551615}}"#);
    assert_eq!(out, br#"{"abiVersion":1,"result":{"z":9007199254740993,"b":"edited","a":-5,"f":1.5,"u":18446744073709551615}}"#);
}

#[test]
fn notifications_answer_empty_and_log() {
    let mut m = Module::new("weather", "1.0.0");
    setup(&mut m);
    let (out, fake) = with_fake(|| m.handle(Some(Hook::OnRunError), br#"{"abiVersion":1,"error":"boom"}"#));
    assert!(out.is_empty());
    assert_eq!(fake.borrow().logs, vec![(host::WARN, "run failed: boom".to_string())]);
}

#[test]
fn state_functions() {
    let ((), fake) = with_fake(|| {
        assert_eq!(state::get::<Value>("k"), Ok(None));
        state::set("k", &json!({"a": [1, "x"]})).unwrap();
        assert_eq!(state::get::<Value>("k").unwrap().unwrap().to_string(), r#"{"a":[1,"x"]}"#);
        // Typed, both ways.
        #[derive(Serialize, Deserialize, Debug, PartialEq)]
        struct Prefs {
            unit: String,
            days: u8,
        }
        state::set("user:prefs", &Prefs { unit: "C".into(), days: 3 }).unwrap();
        assert_eq!(state::get("user:prefs"), Ok(Some(Prefs { unit: "C".into(), days: 3 })));
        // A value that is not a T: INVALID_ARGUMENT.
        assert_eq!(state::get::<u8>("user:prefs"), Err(HostError { func: "state_get", status: Status::InvalidArgument }));
        state::set("n", &7).unwrap();
        assert_eq!(state::get::<i64>("n"), Ok(Some(7)));
        state::delete("k").unwrap();
        assert_eq!(state::get::<Value>("k"), Ok(Some(Value::Null)));
        assert_eq!(state::get::<Option<String>>("k"), Ok(Some(None)));
        // A map with non-string keys has no JSON form.
        let bad: std::collections::HashMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
        assert_eq!(state::set("bad", &bad), Err(HostError { func: "state_set", status: Status::InvalidArgument }));
        let e = actions::escalate().unwrap_err();
        assert_eq!(e, HostError { func: "escalate", status: Status::Unavailable });
        assert_eq!(e.to_string(), "adkhost: escalate: UNAVAILABLE (4)");
    });
    assert_eq!(fake.borrow().state.get("k").map(String::as_str), Some("null"));
    assert_eq!(fake.borrow().state.get("user:prefs").map(String::as_str), Some(r#"{"unit":"C","days":3}"#));
    assert!(!fake.borrow().state.contains_key("bad"));
    assert_eq!(Status::check(42), Err(Status::Other(42)));
    assert_eq!(Status::Other(42).name(), "FAILED");
}

#[test]
fn hook_names() {
    for h in Hook::ALL {
        assert_eq!(Hook::from_name(h.name()), Some(h));
    }
    assert_eq!(Hook::from_name("nope"), None);
}

#[test]
fn artifact_functions() {
    let ((), fake) = with_fake(|| {
        assert_eq!(artifacts::load("a.txt", artifacts::LATEST), Ok(None));
        assert_eq!(artifacts::save("a.txt", &json!({"text": "one"})), Ok(0));
        assert_eq!(artifacts::save("a.txt", &json!({"text": "two"})), Ok(1));
        assert_eq!(artifacts::save("b.bin", &json!({"inlineData": {"mimeType": "x", "data": "AQI="}})), Ok(0));
        assert_eq!(artifacts::load("a.txt", artifacts::LATEST).unwrap().unwrap().to_string(), r#"{"text":"two"}"#);
        assert_eq!(artifacts::load("a.txt", 0).unwrap().unwrap().to_string(), r#"{"text":"one"}"#);
        assert_eq!(artifacts::load("a.txt", 7), Ok(None));
        assert_eq!(artifacts::list(), Ok(vec!["a.txt".to_string(), "b.bin".to_string()]));
    });
    assert_eq!(fake.borrow().artifacts["a.txt"].len(), 2);
    // Without a host: UNAVAILABLE, an error.
    assert_eq!(artifacts::list(), Err(HostError { func: "artifact_list", status: Status::Unavailable }));
    assert_eq!(artifacts::save("x", &Value::Null).unwrap_err().status, Status::Unavailable);
}

#[test]
fn http_function() {
    let ((), fake) = with_fake(|| {
        let r = http::request(&http::Request::new("POST", "https://api.example/v1").header("X-A", "b").body("hi!")).unwrap();
        assert_eq!(r.status, 201);
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.text(), "héllo");
        let e = http::get("https://denied.example/").unwrap_err();
        assert_eq!(e, HostError { func: "http_request", status: Status::Denied });
    });
    assert_eq!(
        fake.borrow().requests,
        vec![
            r#"{"method":"POST","url":"https://api.example/v1","headers":{"X-A":"b"},"body":"aGkh"}"#.to_string(),
            r#"{"method":"GET","url":"https://denied.example/"}"#.to_string(),
        ]
    );
}

#[test]
fn memory_functions() {
    let ((), fake) = with_fake(|| {
        let found = memory::search("tea").unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].text(), "I drink green tea");
        assert_eq!((found[0].id.as_str(), found[0].author.as_str(), found[0].timestamp.as_str()), ("e1", "user", "2026-01-02T03:04:05"));
        assert_eq!(found[0].custom_metadata.to_string(), r#"{"k":1}"#);
        assert_eq!(
            serde_json::to_string(&found[0]).unwrap(),
            r#"{"content":{"role":"user","parts":[{"text":"I drink "},{"text":"green tea"}]},"custom_metadata":{"k":1},"id":"e1","author":"user","timestamp":"2026-01-02T03:04:05"}"#
        );
        assert_eq!(serde_json::to_string(&found[1]).unwrap(), r#"{"content":{"role":"user","parts":[{"text":"tea time"}]},"custom_metadata":{}}"#);
        assert_eq!(found[1].id, "");
        assert_eq!(memory::search(""), Ok(vec![]));
        // A result that is not a SearchMemoryResponse: the host failed.
        assert_eq!(memory::search("bad"), Err(HostError { func: "memory_search", status: Status::Failed }));
        assert_eq!(memory::add_session(), Ok(()));
    });
    assert_eq!(fake.borrow().queries, vec!["tea".to_string(), "".to_string(), "bad".to_string()]);
    assert_eq!(fake.borrow().sessions_added, 1);
    fake.borrow_mut().no_memory = true;
    use_host(Some(Box::new(FakeHost(fake.clone()))));
    assert_eq!(memory::search("tea"), Err(HostError { func: "memory_search", status: Status::Unavailable }));
    assert_eq!(memory::add_session(), Err(HostError { func: "memory_add_session", status: Status::Unavailable }));
    use_host(None);
    assert_eq!(fake.borrow().sessions_added, 1);
    // Without a host: UNAVAILABLE.
    assert_eq!(memory::add_session().unwrap_err().status, Status::Unavailable);
}

#[test]
fn base64() {
    use crate::base64::{decode as base64_decode, encode as base64_encode};
    for (raw, enc) in [(&b""[..], ""), (b"f", "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v"), (b"foob", "Zm9vYg=="), (&[0xff, 0xfe, 0x00][..], "//4A")] {
        assert_eq!(base64_encode(raw), enc);
        assert_eq!(base64_decode(enc).as_deref(), Some(raw));
    }
    assert_eq!(base64_decode("Zm9vYg").as_deref(), Some(&b"foob"[..]));
    for bad in ["Z", "Zm9v!", "Z=m9"] {
        assert_eq!(base64_decode(bad), None, "{}", bad);
    }
}
