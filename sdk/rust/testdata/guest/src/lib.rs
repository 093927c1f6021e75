// A test guest of the SDK: sdk_test.go builds it for wasm32-wasip1 with
// cargo and calls its artifact, HTTP and memory tools through the real
// sandbox.

use adkhost::{artifacts, http, json, memory, Context, Module, Result, Value};
use serde::{Deserialize, Serialize};

fn setup(m: &mut Module) {
    m.capability("artifacts").capability("http").capability("memory");
    let any = json!({"type": "object"});
    m.tool("save", "Saves args.part as the next version of args.name.", any.clone(), save);
    m.tool("load", "Loads a version (default: the newest) of args.name.", any.clone(), load);
    m.tool("list", "Lists the artifacts.", any.clone(), list);
    m.tool("fetch", "Sends args.method (default GET) to args.url with args.body.", any.clone(), fetch);
    m.tool("recall", "Searches the memory for args.query.", any.clone(), recall);
    m.tool("remember", "Adds the session to the memory.", any, remember);
}

#[derive(Deserialize)]
struct Save {
    name: String,
    #[serde(default)]
    part: Value,
}

fn save(_: &Context, a: Save) -> Result<Value> {
    Ok(json!({"version": artifacts::save(&a.name, &a.part)?}))
}

#[derive(Deserialize)]
struct Load {
    name: String,
    version: Option<i32>,
}

fn load(_: &Context, a: Load) -> Result<Value> {
    let part = artifacts::load(&a.name, a.version.unwrap_or(artifacts::LATEST))?;
    Ok(json!({"part": part})) // null: NOT_FOUND
}

fn list(_: &Context, _: Value) -> Result<Value> {
    Ok(json!({"names": artifacts::list()?}))
}

#[derive(Deserialize)]
struct Fetch {
    url: String,
    method: Option<String>,
    #[serde(default)]
    body: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fetched {
    status: i64,
    content_type: String,
    body: String,
}

fn fetch(_: &Context, a: Fetch) -> Result<Fetched> {
    let req = http::Request::new(a.method.as_deref().unwrap_or("GET"), &a.url).header("X-Test", "rust").body(a.body);
    let resp = http::request(&req)?; // DENIED fails the call with the status
    Ok(Fetched { status: resp.status, content_type: resp.header("content-type").unwrap_or("").into(), body: resp.text() })
}

#[derive(Deserialize)]
struct Recall {
    #[serde(default)]
    query: String,
}

fn recall(_: &Context, a: Recall) -> Result<Value> {
    let found = memory::search(&a.query)?; // UNAVAILABLE fails the call
    let texts: Vec<String> = found.iter().map(memory::Entry::text).collect();
    Ok(json!({"texts": texts, "memories": found}))
}

fn remember(_: &Context, _: Value) -> Result<Value> {
    memory::add_session()?;
    Ok(json!({"added": true}))
}

adkhost::module!("rust-sdk-test", "0.0.1", setup);
