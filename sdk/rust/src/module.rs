//! Registration (the describe message) and dispatch of hook calls.

use std::borrow::Cow;
use std::cell::OnceCell;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// The hooks of ABI v1 (ABI.md §1), by their names in `describe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    ToolCall,
    BeforeAgent,
    AfterAgent,
    BeforeModel,
    AfterModel,
    OnModelError,
    BeforeTool,
    AfterTool,
    OnToolError,
    OnUserMessage,
    BeforeRun,
    OnEvent,
    AfterRun,
    OnAgentError,
    OnRunError,
}

impl Hook {
    pub const ALL: [Hook; 15] = [
        Hook::ToolCall,
        Hook::BeforeAgent,
        Hook::AfterAgent,
        Hook::BeforeModel,
        Hook::AfterModel,
        Hook::OnModelError,
        Hook::BeforeTool,
        Hook::AfterTool,
        Hook::OnToolError,
        Hook::OnUserMessage,
        Hook::BeforeRun,
        Hook::OnEvent,
        Hook::AfterRun,
        Hook::OnAgentError,
        Hook::OnRunError,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Hook::ToolCall => "tool_call",
            Hook::BeforeAgent => "before_agent",
            Hook::AfterAgent => "after_agent",
            Hook::BeforeModel => "before_model",
            Hook::AfterModel => "after_model",
            Hook::OnModelError => "on_model_error",
            Hook::BeforeTool => "before_tool",
            Hook::AfterTool => "after_tool",
            Hook::OnToolError => "on_tool_error",
            Hook::OnUserMessage => "on_user_message",
            Hook::BeforeRun => "before_run",
            Hook::OnEvent => "on_event",
            Hook::AfterRun => "after_run",
            Hook::OnAgentError => "on_agent_error",
            Hook::OnRunError => "on_run_error",
        }
    }

    pub fn from_name(name: &str) -> Option<Hook> {
        Hook::ALL.iter().copied().find(|h| h.name() == name)
    }

    // The output field a callback's Some(value) fills, and the input field
    // whose in-place edits are sent back (and under which output field).
    fn result_field(self) -> Option<&'static str> {
        match self {
            Hook::BeforeAgent | Hook::AfterAgent | Hook::BeforeRun => Some("content"),
            Hook::BeforeModel | Hook::AfterModel | Hook::OnModelError => Some("response"),
            Hook::ToolCall | Hook::BeforeTool | Hook::AfterTool | Hook::OnToolError => Some("result"),
            Hook::OnUserMessage => Some("message"),
            Hook::OnEvent => Some("event"),
            Hook::AfterRun | Hook::OnAgentError | Hook::OnRunError => None,
        }
    }

    fn edited_field(self) -> Option<(&'static str, &'static str)> {
        match self {
            Hook::BeforeModel => Some(("request", "request")),
            Hook::AfterModel => Some(("response", "response")),
            Hook::BeforeTool => Some(("args", "args")),
            Hook::AfterTool => Some(("result", "result")),
            Hook::OnUserMessage => Some(("message", "message")),
            Hook::OnEvent => Some(("event", "event")),
            _ => None,
        }
    }
}

/// A hook's failure: the message the engine sees, as a google-adk callback
/// that raises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<&str> for Error {
    fn from(s: &str) -> Error {
        Error(s.to_string())
    }
}
impl From<String> for Error {
    fn from(s: String) -> Error {
        Error(s)
    }
}
impl From<crate::HostError> for Error {
    fn from(e: crate::HostError) -> Error {
        Error(e.to_string())
    }
}
impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error(message(&e))
    }
}

/// A serde_json error's message without its " at line L column C": the
/// inputs are one-line JSON, whose positions tell the model nothing.
pub(crate) fn message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    match s.strip_suffix(&at) {
        Some(m) if e.line() > 0 => m.to_string(),
        _ => s,
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// What every hook knows about its call: the input's `context`
/// (InvocationInfo) and, for tool hooks, the tool.
#[derive(Clone, Debug, Default)]
pub struct Context {
    // A tool call keeps the context's JSON text and decodes it on the
    // first info(): most tools never look, and decoding it into a Value
    // (an IndexMap with a hashed String per member) was a good part of
    // the SDK's cost per call.
    info_json: Option<Box<str>>,
    info: OnceCell<Value>,
    /// The tool's name (tool_call and the tool hooks), else empty.
    pub tool: String,
    /// tool_call: the user's answer to an earlier request_confirmation.
    pub confirmation: Option<Value>,
}

impl Context {
    /// A context whose InvocationInfo is info.
    pub fn new(info: Value) -> Context {
        Context { info: OnceCell::from(info), ..Context::default() }
    }

    /// The InvocationInfo as sent: appName, userId, sessionId,
    /// invocationId, agentName, branch, functionCallId, userContent
    /// (decoded on first use; Null if absent).
    pub fn info(&self) -> &Value {
        self.info.get_or_init(|| match &self.info_json {
            Some(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            None => Value::Null,
        })
    }

    fn field(&self, k: &str) -> &str {
        self.info().get(k).and_then(Value::as_str).unwrap_or("")
    }
    pub fn app_name(&self) -> &str {
        self.field("appName")
    }
    pub fn user_id(&self) -> &str {
        self.field("userId")
    }
    pub fn session_id(&self) -> &str {
        self.field("sessionId")
    }
    pub fn invocation_id(&self) -> &str {
        self.field("invocationId")
    }
    pub fn agent_name(&self) -> &str {
        self.field("agentName")
    }
    pub fn function_call_id(&self) -> &str {
        self.field("functionCallId")
    }
}

// Every registered callback, reduced to one shape: it sees the context and
// the whole input object (whose fields it may edit) and returns a result.
type Callback = Box<dyn Fn(&Context, &mut Map<String, Value>) -> Result<Option<Value>>>;

// A tool: the context and the arguments' JSON text ("{}" when absent) in,
// the encoded ToolCallOutput out.
type ToolFn = Box<dyn Fn(&Context, &str) -> Result<Vec<u8>>>;

struct ToolReg {
    decl: Value,
    name: String,
    run: ToolFn,
}

/// A module's registrations: built once, by the setup function given to
/// [`module!`](crate::module), on the instance's first call.
pub struct Module {
    name: String,
    version: String,
    caps: Vec<String>,
    tools: Vec<ToolReg>,
    hooks: Vec<(Hook, Callback)>,
}

/// Options of a tool.
#[derive(Clone, Debug, Default)]
pub struct ToolOptions {
    pub long_running: bool,
    /// A JSON Schema of the response (an object schema).
    pub response: Option<Value>,
}

fn take(input: &mut Map<String, Value>, key: &str) -> Value {
    input.get_mut(key).map(Value::take).unwrap_or(Value::Null)
}

// put restores a field take took, leaving an absent one absent unless the
// callback filled it.
fn put(input: &mut Map<String, Value>, key: &str, v: Value) {
    if let Some(old) = input.get_mut(key) {
        *old = v;
    } else if !v.is_null() {
        input.insert(key.to_string(), v);
    }
}

fn error_text(input: &Map<String, Value>) -> String {
    input.get("error").and_then(Value::as_str).unwrap_or("").to_string()
}

const NULL: Value = Value::Null;

// The tool_call input (ABI.md §5), decoded leniently: unknown fields are
// ignored (§6); args stays JSON text for the tool's own type.
#[derive(Deserialize)]
struct ToolCallInput<'a> {
    #[serde(rename = "abiVersion", borrow, default)]
    abi_version: Option<&'a RawValue>,
    #[serde(borrow, default)]
    context: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool: Cow<'a, str>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
    #[serde(default)]
    confirmation: Option<Value>,
}

#[derive(Serialize)]
struct ToolCallOutput<'a, R: Serialize> {
    #[serde(rename = "abiVersion")]
    abi_version: u32,
    result: &'a R,
}

fn check_version(v: Option<&str>) -> Result<()> {
    match v {
        None | Some("1") => Ok(()),
        Some(v) => Err(Error(format!("adkhost: input abiVersion {} is not 1", v))),
    }
}

fn starts_object(input: &[u8]) -> bool {
    input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

impl Module {
    pub fn new(name: &str, version: &str) -> Module {
        Module { name: name.into(), version: version.into(), caps: Vec::new(), tools: Vec::new(), hooks: Vec::new() }
    }

    /// Asks for a capability (ABI.md §8): "state", "actions", "config", ...
    pub fn capability(&mut self, cap: &str) -> &mut Self {
        if !self.caps.iter().any(|c| c == cap) {
            self.caps.push(cap.into());
        }
        self
    }

    /// Registers a tool. `parameters` is its JSON Schema (an object schema,
    /// usually written with [`json!`]). The arguments are decoded into `A`
    /// with serde (`#[derive(Deserialize)]`, or [`Value`] for any JSON):
    /// arguments that do not fit fail the call, with serde's message,
    /// before f runs. The result is any `Serialize` type: an object is the
    /// function response as is, another value v reaches the model as
    /// `{"result": v}`.
    pub fn tool<A, R, F>(&mut self, name: &str, description: &str, parameters: Value, f: F) -> &mut Self
    where
        A: DeserializeOwned + 'static,
        R: Serialize + 'static,
        F: Fn(&Context, A) -> Result<R> + 'static,
    {
        self.tool_with(name, description, parameters, ToolOptions::default(), f)
    }

    /// [`tool`](Module::tool) with options.
    pub fn tool_with<A, R, F>(&mut self, name: &str, description: &str, parameters: Value, opts: ToolOptions, f: F) -> &mut Self
    where
        A: DeserializeOwned + 'static,
        R: Serialize + 'static,
        F: Fn(&Context, A) -> Result<R> + 'static,
    {
        let mut decl = json!({"name": name, "description": description, "parameters": parameters});
        if let Some(r) = opts.response {
            decl["response"] = r;
        }
        if opts.long_running {
            decl["longRunning"] = Value::Bool(true);
        }
        let tool = name.to_string();
        let run: ToolFn = Box::new(move |ctx, args| {
            let a: A = serde_json::from_str(args)
                .map_err(|e| Error(format!("adkhost: invalid arguments for {}: {}", tool, message(&e))))?;
            let r = f(ctx, a)?;
            // Room for a typical result at once, not a realloc per doubling.
            let mut out = Vec::with_capacity(256);
            serde_json::to_writer(&mut out, &ToolCallOutput { abi_version: 1, result: &r })
                .map_err(|e| Error(format!("adkhost: the result of {} is not JSON: {}", tool, message(&e))))?;
            Ok(out)
        });
        self.tools.push(ToolReg { decl, name: name.into(), run });
        self
    }

    fn on(&mut self, hook: Hook, cb: Callback) -> &mut Self {
        self.hooks.push((hook, cb));
        self
    }

    /// before_agent: Some(content) skips the agent and is its answer.
    pub fn before_agent(&mut self, f: impl Fn(&Context) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::BeforeAgent, Box::new(move |c, _| f(c)))
    }
    /// after_agent: Some(content) is an extra event after the agent.
    pub fn after_agent(&mut self, f: impl Fn(&Context) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::AfterAgent, Box::new(move |c, _| f(c)))
    }
    /// before_model: Some(response) skips the model call; edits to the
    /// request (an LlmRequest) are what the model receives.
    pub fn before_model(&mut self, f: impl Fn(&Context, &mut Value) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::BeforeModel, edit("request", f))
    }
    /// after_model: Some(response), or edits to it, replace the response.
    pub fn after_model(&mut self, f: impl Fn(&Context, &mut Value) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::AfterModel, edit("response", f))
    }
    /// on_model_error: Some(response) is used instead of failing.
    pub fn on_model_error(&mut self, f: impl Fn(&Context, &Value, &str) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::OnModelError, Box::new(move |c, input| f(c, input.get("request").unwrap_or(&NULL), &error_text(input))))
    }
    /// before_tool: Some(result) skips the tool; edits to args are what the
    /// tool receives.
    pub fn before_tool(&mut self, f: impl Fn(&Context, &mut Value) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::BeforeTool, edit("args", f))
    }
    /// after_tool: f(ctx, args, result). Some(result), or edits to result,
    /// replace the tool's result.
    pub fn after_tool(&mut self, f: impl Fn(&Context, &Value, &mut Value) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(
            Hook::AfterTool,
            Box::new(move |c, input| {
                let mut result = take(input, "result");
                let r = f(c, input.get("args").unwrap_or(&NULL), &mut result);
                put(input, "result", result);
                r
            }),
        )
    }
    /// on_tool_error: f(ctx, args, error); Some(result) is used instead of
    /// failing.
    pub fn on_tool_error(&mut self, f: impl Fn(&Context, &Value, &str) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::OnToolError, Box::new(move |c, input| f(c, input.get("args").unwrap_or(&NULL), &error_text(input))))
    }
    /// on_user_message: Some(content), or edits, replace the user's message.
    pub fn on_user_message(&mut self, f: impl Fn(&Context, &mut Value) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::OnUserMessage, edit("message", f))
    }
    /// before_run: Some(content) ends the run with this answer.
    pub fn before_run(&mut self, f: impl Fn(&Context) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::BeforeRun, Box::new(move |c, _| f(c)))
    }
    /// on_event: Some(event), or edits, replace the event.
    pub fn on_event(&mut self, f: impl Fn(&Context, &mut Value) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::OnEvent, edit("event", f))
    }
    /// after_run: only an error.
    pub fn after_run(&mut self, f: impl Fn(&Context) -> Result<()> + 'static) -> &mut Self {
        self.on(Hook::AfterRun, Box::new(move |c, _| f(c).map(|_| None)))
    }
    /// on_agent_error: told that an agent failed; changes nothing.
    pub fn on_agent_error(&mut self, f: impl Fn(&Context, &str) + 'static) -> &mut Self {
        self.on(Hook::OnAgentError, Box::new(move |c, input| {
            f(c, &error_text(input));
            Ok(None)
        }))
    }
    /// on_run_error: told that the run failed; changes nothing.
    pub fn on_run_error(&mut self, f: impl Fn(&Context, &str) + 'static) -> &mut Self {
        self.on(Hook::OnRunError, Box::new(move |c, input| {
            f(c, &error_text(input));
            Ok(None)
        }))
    }

    /// The hooks describe lists: tool_call when there are tools, then each
    /// registered hook once, in ABI order.
    pub fn hooks(&self) -> Vec<Hook> {
        Hook::ALL
            .iter()
            .copied()
            .filter(|h| if *h == Hook::ToolCall { !self.tools.is_empty() } else { self.hooks.iter().any(|(x, _)| x == h) })
            .collect()
    }

    /// The Describe message.
    pub fn describe(&self) -> Value {
        let mut d = Map::new();
        d.insert("abiVersion".into(), json!(1));
        d.insert("name".into(), json!(self.name));
        if !self.version.is_empty() {
            d.insert("version".into(), json!(self.version));
        }
        if !self.tools.is_empty() {
            d.insert("tools".into(), Value::Array(self.tools.iter().map(|t| t.decl.clone()).collect()));
        }
        let hooks = self.hooks();
        if !hooks.is_empty() {
            d.insert("hooks".into(), hooks.iter().map(|h| h.name()).collect());
        }
        if !self.caps.is_empty() {
            d.insert("capabilities".into(), json!(self.caps));
        }
        Value::Object(d)
    }

    /// Runs one hook call as its export does: input is the hook's message,
    /// the return value its output (empty: nothing to change). `hook` None
    /// is describe.
    pub fn handle(&self, hook: Option<Hook>, input: &[u8]) -> Vec<u8> {
        let hook = match hook {
            None => return self.describe().to_string().into_bytes(),
            Some(h) => h,
        };
        let out = if hook == Hook::ToolCall { self.tool_call(input).map(Some) } else { self.run(hook, input) };
        match out {
            Ok(None) => Vec::new(),
            Ok(Some(v)) => v,
            Err(e) => {
                if matches!(hook, Hook::OnAgentError | Hook::OnRunError) {
                    return Vec::new(); // notification only: nothing to report
                }
                serde_json::to_vec(&json!({"abiVersion": 1, "error": e.0})).unwrap_or_default()
            }
        }
    }

    fn tool_call(&self, input: &[u8]) -> Result<Vec<u8>> {
        if !starts_object(input) {
            return Err("adkhost: the input is not a JSON object".into());
        }
        // Checked as UTF-8 once, not string by string as from_slice does.
        let input = std::str::from_utf8(input).map_err(|_| Error("adkhost: invalid input: not UTF-8".into()))?;
        let call: ToolCallInput = serde_json::from_str(input).map_err(|e| Error(format!("adkhost: invalid input: {}", message(&e))))?;
        check_version(call.abi_version.map(RawValue::get))?;
        let ctx = Context {
            info_json: call.context.map(|c| c.get().into()),
            info: OnceCell::new(),
            tool: call.tool.into_owned(),
            confirmation: call.confirmation.filter(|c| !c.is_null()),
        };
        let t = self
            .tools
            .iter()
            .find(|t| t.name == ctx.tool)
            .ok_or_else(|| Error(format!("adkhost: unknown tool {:?}", ctx.tool)))?;
        let args = call.args.map(RawValue::get).filter(|a| *a != "null").unwrap_or("{}");
        // An object, as google-adk's args dict (serde would also fill a
        // struct from an array, by position).
        if !starts_object(args.as_bytes()) {
            return Err(Error(format!("adkhost: invalid arguments for {}: not a JSON object", t.name)));
        }
        (t.run)(&ctx, args)
    }

    fn run(&self, hook: Hook, input: &[u8]) -> Result<Option<Vec<u8>>> {
        // Decoded leniently: unknown fields are ignored (ABI.md §6).
        let mut input: Map<String, Value> = if input.is_empty() {
            Map::new()
        } else if !starts_object(input) {
            return Err("adkhost: the input is not a JSON object".into());
        } else {
            serde_json::from_slice(input).map_err(|e| Error(format!("adkhost: invalid input: {}", message(&e))))?
        };
        if let Some(v) = input.get("abiVersion") {
            check_version(Some(&v.to_string()))?;
        }
        let mut ctx = Context::new(take(&mut input, "context"));
        if let Some(Value::Object(t)) = input.get("tool") {
            ctx.tool = t.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        }
        let edited = hook.edited_field();
        let before = edited.and_then(|(f, _)| input.get(f).cloned());
        let mut out = Map::new();
        out.insert("abiVersion".into(), json!(1));
        for (h, cb) in &self.hooks {
            if *h != hook {
                continue;
            }
            if let Some(v) = cb(&ctx, &mut input)? {
                if let Some(field) = hook.result_field() {
                    out.insert(field.into(), v);
                    return Ok(Some(Value::Object(out).to_string().into_bytes()));
                }
            }
        }
        // No replacement: send edits made in place, if any.
        if let Some((f, of)) = edited {
            let now = input.get(f);
            if now != before.as_ref() {
                out.insert(of.into(), now.cloned().unwrap_or(Value::Null));
                return Ok(Some(Value::Object(out).to_string().into_bytes()));
            }
        }
        Ok(None)
    }
}

// edit wraps a callback that edits the input field `field` in place.
fn edit(field: &'static str, f: impl Fn(&Context, &mut Value) -> Result<Option<Value>> + 'static) -> Callback {
    Box::new(move |c, input| {
        let mut v = take(input, field);
        let r = f(c, &mut v);
        put(input, field, v);
        r
    })
}
