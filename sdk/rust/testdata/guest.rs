// A test guest of the SDK's artifact, HTTP and memory functions: sdk_test.go
// builds it for wasm32 with rustc and calls it through the real sandbox.

use adkhost::{artifacts, http, memory, optional_f64, required_str, Context, Module, Result, Value};

fn setup(m: &mut Module) {
    m.capability("artifacts").capability("http").capability("memory");
    m.tool("save", "Saves args.part as the next version of args.name.", "{}", save);
    m.tool("load", "Loads a version (default: the newest) of args.name.", "{}", load);
    m.tool("list", "Lists the artifacts.", "{}", list);
    m.tool("fetch", "Sends args.method (default GET) to args.url with args.body.", "{}", fetch);
    m.tool("recall", "Searches the memory for args.query.", "{}", recall);
    m.tool("remember", "Adds the session to the memory.", "{}", remember);
}

fn save(_: &Context, a: Value) -> Result<Value> {
    let part = a.get("part").cloned().unwrap_or(Value::Null);
    let version = artifacts::save(&required_str(&a, "name")?, &part)?;
    let mut r = Value::object();
    r.set("version", version.into());
    Ok(r)
}

fn load(_: &Context, a: Value) -> Result<Value> {
    let version = optional_f64(&a, "version")?.map(|v| v as i32).unwrap_or(artifacts::LATEST);
    let part = artifacts::load(&required_str(&a, "name")?, version)?;
    let mut r = Value::object();
    r.set("part", part.unwrap_or(Value::Null)); // null: NOT_FOUND
    Ok(r)
}

fn list(_: &Context, _: Value) -> Result<Value> {
    let names: Vec<Value> = artifacts::list()?.into_iter().map(Value::from).collect();
    let mut r = Value::object();
    r.set("names", Value::Array(names));
    Ok(r)
}

fn fetch(_: &Context, a: Value) -> Result<Value> {
    let req = http::Request::new(a.get_str("method").unwrap_or("GET"), &required_str(&a, "url")?)
        .header("X-Test", "rust")
        .body(a.get_str("body").unwrap_or(""));
    let resp = http::request(&req)?; // DENIED fails the call with the status
    let mut r = Value::object();
    r.set("status", Value::from_i64(resp.status))
        .set("contentType", resp.header("content-type").unwrap_or("").into())
        .set("body", resp.text().into());
    Ok(r)
}

fn recall(_: &Context, a: Value) -> Result<Value> {
    let found = memory::search(a.get_str("query").unwrap_or(""))?; // UNAVAILABLE fails the call
    let mut r = Value::object();
    r.set("texts", found.iter().map(|e| Value::from(e.text())).collect::<Vec<_>>().into())
        .set("memories", found.iter().map(memory::Entry::to_json).collect::<Vec<_>>().into());
    Ok(r)
}

fn remember(_: &Context, _: Value) -> Result<Value> {
    memory::add_session()?;
    let mut r = Value::object();
    r.set("added", true.into());
    Ok(r)
}

adkhost::module!("rust-sdk-test", "0.0.1", setup);
