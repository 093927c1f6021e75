//! Registration (the describe message) and dispatch of hook calls.

use crate::json::Value;

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
impl From<crate::json::ParseError> for Error {
    fn from(e: crate::json::ParseError) -> Error {
        Error(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Decodes a tool's arguments (a JSON object) into a Rust type.
pub trait FromJson: Sized {
    fn from_json(v: &Value) -> Result<Self>;
}

/// Encodes a tool's result. An object is the function response as is; any
/// other value v reaches the model as {"result": v}.
pub trait ToJson {
    fn to_json(&self) -> Value;
}

impl FromJson for Value {
    fn from_json(v: &Value) -> Result<Self> {
        Ok(v.clone())
    }
}
impl ToJson for Value {
    fn to_json(&self) -> Value {
        self.clone()
    }
}
impl ToJson for String {
    fn to_json(&self) -> Value {
        Value::String(self.clone())
    }
}
impl ToJson for &str {
    fn to_json(&self) -> Value {
        Value::String(self.to_string())
    }
}
impl ToJson for f64 {
    fn to_json(&self) -> Value {
        Value::from_f64(*self)
    }
}
impl ToJson for i64 {
    fn to_json(&self) -> Value {
        Value::from_i64(*self)
    }
}
impl ToJson for bool {
    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
}
impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(ToJson::to_json).collect())
    }
}
impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToJson::to_json)
    }
}

/// Helpers for FromJson implementations: a required or optional member of
/// the arguments object, with the error message the model sees.
pub fn required_str(args: &Value, key: &str) -> Result<String> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(Error(format!("missing required argument {:?}", key))),
        Some(_) => Err(Error(format!("argument {:?} must be a string", key))),
    }
}

pub fn optional_f64(args: &Value, key: &str) -> Result<Option<f64>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| Error(format!("argument {:?} must be a number", key))),
    }
}

/// What every hook knows about its call: the input's `context`
/// (InvocationInfo) and, for tool hooks, the tool.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// The InvocationInfo as sent: appName, userId, sessionId,
    /// invocationId, agentName, branch, functionCallId, userContent.
    pub info: Value,
    /// The tool's name (tool_call and the tool hooks), else empty.
    pub tool: String,
    /// tool_call: the user's answer to an earlier request_confirmation.
    pub confirmation: Option<Value>,
}

impl Context {
    fn field(&self, k: &str) -> &str {
        self.info.get_str(k).unwrap_or("")
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
type Callback = Box<dyn Fn(&Context, &mut Value) -> Result<Option<Value>>>;

struct ToolReg {
    decl: Value,
    name: String,
    run: Callback,
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

fn take(input: &mut Value, key: &str) -> Value {
    input.get_mut(key).map(std::mem::take).unwrap_or(Value::Null)
}

// put restores a field take took, leaving an absent one absent unless the
// callback filled it.
fn put(input: &mut Value, key: &str, v: Value) {
    if input.get(key).is_some() || !v.is_null() {
        input.set(key, v);
    }
}

fn error_text(input: &Value) -> String {
    input.get_str("error").unwrap_or("").to_string()
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

    /// Registers a tool. `parameters` is its JSON Schema (an object schema);
    /// a malformed one panics, which the host reports when it loads the
    /// module. The arguments are decoded with A::from_json: an error fails
    /// the call before f runs.
    pub fn tool<A, R, F>(&mut self, name: &str, description: &str, parameters: &str, f: F) -> &mut Self
    where
        A: FromJson + 'static,
        R: ToJson + 'static,
        F: Fn(&Context, A) -> Result<R> + 'static,
    {
        self.tool_with(name, description, parameters, ToolOptions::default(), f)
    }

    /// [`tool`](Module::tool) with options.
    pub fn tool_with<A, R, F>(&mut self, name: &str, description: &str, parameters: &str, opts: ToolOptions, f: F) -> &mut Self
    where
        A: FromJson + 'static,
        R: ToJson + 'static,
        F: Fn(&Context, A) -> Result<R> + 'static,
    {
        let params = Value::parse(parameters).unwrap_or_else(|e| panic!("tool {}: parameters: {}", name, e));
        let mut decl = Value::object();
        decl.set("name", name.into()).set("description", description.into()).set("parameters", params);
        if let Some(r) = opts.response {
            decl.set("response", r);
        }
        if opts.long_running {
            decl.set("longRunning", true.into());
        }
        let run: Callback = Box::new(move |ctx, input| {
            let args = match input.get("args") {
                Some(a) if !a.is_null() => a.clone(),
                _ => Value::object(),
            };
            let a = A::from_json(&args)?;
            Ok(Some(f(ctx, a)?.to_json()))
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
        self.on(Hook::OnModelError, Box::new(move |c, input| f(c, input.get("request").unwrap_or(&Value::Null), &error_text(input))))
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
                let r = f(c, input.get("args").unwrap_or(&Value::Null), &mut result);
                put(input, "result", result);
                r
            }),
        )
    }
    /// on_tool_error: f(ctx, args, error); Some(result) is used instead of
    /// failing.
    pub fn on_tool_error(&mut self, f: impl Fn(&Context, &Value, &str) -> Result<Option<Value>> + 'static) -> &mut Self {
        self.on(Hook::OnToolError, Box::new(move |c, input| f(c, input.get("args").unwrap_or(&Value::Null), &error_text(input))))
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
        self.on(Hook::OnAgentError, Box::new(move |c, input| Ok(f(c, &error_text(input))).map(|_| None)))
    }
    /// on_run_error: told that the run failed; changes nothing.
    pub fn on_run_error(&mut self, f: impl Fn(&Context, &str) + 'static) -> &mut Self {
        self.on(Hook::OnRunError, Box::new(move |c, input| Ok(f(c, &error_text(input))).map(|_| None)))
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
        let mut d = Value::object();
        d.set("abiVersion", Value::from_i64(1)).set("name", self.name.as_str().into());
        if !self.version.is_empty() {
            d.set("version", self.version.as_str().into());
        }
        if !self.tools.is_empty() {
            d.set("tools", Value::Array(self.tools.iter().map(|t| t.decl.clone()).collect()));
        }
        let hooks = self.hooks();
        if !hooks.is_empty() {
            d.set("hooks", Value::Array(hooks.iter().map(|h| h.name().into()).collect()));
        }
        if !self.caps.is_empty() {
            d.set("capabilities", Value::Array(self.caps.iter().map(|c| c.as_str().into()).collect()));
        }
        d
    }

    /// Runs one hook call as its export does: input is the hook's message,
    /// the return value its output (empty: nothing to change). `hook` None
    /// is describe.
    pub fn handle(&self, hook: Option<Hook>, input: &[u8]) -> Vec<u8> {
        let hook = match hook {
            None => return self.describe().to_json().into_bytes(),
            Some(h) => h,
        };
        let out = self.run(hook, input);
        match out {
            Ok(None) => Vec::new(),
            Ok(Some(v)) => v.to_json().into_bytes(),
            Err(e) => {
                if matches!(hook, Hook::OnAgentError | Hook::OnRunError) {
                    return Vec::new(); // notification only: nothing to report
                }
                let mut o = Value::object();
                o.set("abiVersion", Value::from_i64(1)).set("error", e.0.into());
                o.to_json().into_bytes()
            }
        }
    }

    fn run(&self, hook: Hook, input: &[u8]) -> Result<Option<Value>> {
        // Decoded leniently: unknown fields are ignored (ABI.md §6).
        let mut input = if input.is_empty() { Value::object() } else { Value::parse_bytes(input)? };
        if input.as_object().is_none() {
            return Err("adkhost: the input is not a JSON object".into());
        }
        if let Some(v) = input.get("abiVersion") {
            if v.as_i64() != Some(1) {
                return Err(Error(format!("adkhost: input abiVersion {} is not 1", v)));
            }
        }
        let mut ctx = Context { info: take(&mut input, "context"), ..Context::default() };
        let mut out = Value::object();
        out.set("abiVersion", Value::from_i64(1));

        if hook == Hook::ToolCall {
            ctx.tool = input.get_str("tool").unwrap_or("").to_string();
            ctx.confirmation = input.get("confirmation").filter(|c| !c.is_null()).cloned();
            let t = self
                .tools
                .iter()
                .find(|t| t.name == ctx.tool)
                .ok_or_else(|| Error(format!("adkhost: unknown tool {:?}", ctx.tool)))?;
            let r = (t.run)(&ctx, &mut input)?.unwrap_or(Value::Null);
            out.set("result", r);
            return Ok(Some(out));
        }
        if let Some(Value::Object(_)) = input.get("tool") {
            ctx.tool = input.pointer(&["tool", "name"]).and_then(Value::as_str).unwrap_or("").to_string();
        }
        let edited = hook.edited_field();
        let before = edited.map(|(f, _)| input.get(f).map(Value::to_json));
        for (h, cb) in &self.hooks {
            if *h != hook {
                continue;
            }
            if let Some(v) = cb(&ctx, &mut input)? {
                if let Some(field) = hook.result_field() {
                    out.set(field, v);
                    return Ok(Some(out));
                }
            }
        }
        // No replacement: send edits made in place, if any.
        if let (Some((f, of)), Some(before)) = (edited, before) {
            if input.get(f).map(Value::to_json) != before {
                out.set(of, input.get(f).cloned().unwrap_or(Value::Null));
                return Ok(Some(out));
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
