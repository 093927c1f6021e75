//! A small JSON value type with a strict parser and a compact serializer,
//! enough for ABI messages without a dependency (the SDK must build with
//! Debian's rustc and no crates.io). Objects keep member order; numbers keep
//! their source text, so integers beyond 2^53 pass through unchanged.

use std::fmt::Write;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// A number, as its JSON text (always valid JSON number syntax).
    Number(String),
    String(String),
    Array(Vec<Value>),
    /// Members in order; `set` replaces an existing key in place.
    Object(Vec<(String, Value)>),
}

impl Default for Value {
    fn default() -> Self {
        Value::Null
    }
}

/// Why a text is not JSON: a message and the byte offset.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub offset: usize,
    pub message: &'static str,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ParseError {}

// Nesting deeper than this is refused rather than risking the guest's stack.
const MAX_DEPTH: usize = 512;

impl Value {
    /// Parses exactly one JSON value (whitespace around it allowed).
    pub fn parse(text: &str) -> Result<Value, ParseError> {
        Value::parse_bytes(text.as_bytes())
    }

    /// Parses exactly one JSON value from UTF-8 bytes.
    pub fn parse_bytes(b: &[u8]) -> Result<Value, ParseError> {
        let mut p = Parser { b, pos: 0, depth: 0 };
        p.ws();
        let v = p.value()?;
        p.ws();
        if p.pos != b.len() {
            return Err(p.err("trailing data after the value"));
        }
        Ok(v)
    }

    /// An empty object.
    pub fn object() -> Value {
        Value::Object(Vec::new())
    }

    /// A number from an f64; NaN and infinities, which JSON lacks, are null.
    pub fn from_f64(f: f64) -> Value {
        if !f.is_finite() {
            return Value::Null;
        }
        if f == f.trunc() && f.abs() < 1e15 {
            return Value::Number(format!("{}", f as i64));
        }
        Value::Number(format!("{}", f))
    }

    /// A number from an i64.
    pub fn from_i64(i: i64) -> Value {
        Value::Number(i.to_string())
    }

    /// The compact JSON text.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => out.push_str(n),
            Value::String(s) => quote(s, out),
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quote(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// The number as an i64, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Vec<(String, Value)>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Vec<(String, Value)>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The member `key` of an object (the last one if repeated, as most
    /// decoders do); None for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.as_object_mut()?.iter_mut().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Follows a path of object keys.
    pub fn pointer(&self, path: &[&str]) -> Option<&Value> {
        let mut v = self;
        for k in path {
            v = v.get(k)?;
        }
        Some(v)
    }

    /// The string member `key`, if present and a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// Sets member `key` (replacing it in place if present). A non-object
    /// becomes an empty object first.
    pub fn set(&mut self, key: &str, v: Value) -> &mut Self {
        if !matches!(self, Value::Object(_)) {
            *self = Value::object();
        }
        if let Value::Object(m) = self {
            match m.iter_mut().rev().find(|(k, _)| k == key) {
                Some((_, slot)) => *slot = v,
                None => m.push((key.to_string(), v)),
            }
        }
        self
    }

    /// Removes member `key` and returns it.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let m = self.as_object_mut()?;
        let i = m.iter().rposition(|(k, _)| k == key)?;
        Some(m.remove(i).1)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::from_f64(f)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::from_i64(i)
    }
}
impl From<i32> for Value {
    fn from(i: i32) -> Value {
        Value::from_i64(i as i64)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// Writes s as a JSON string literal. Control characters are escaped;
/// everything else, non-ASCII included, is written as UTF-8.
pub fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard padded base64, as JSON carries bytes (`Part.inlineData.data`,
/// HTTP bodies).
pub fn base64_encode(b: &[u8]) -> String {
    let mut out = String::with_capacity((b.len() + 2) / 3 * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional); None if s is not base64.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=').as_bytes();
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for &c in s {
        acc = acc << 6 | B64.iter().position(|&x| x == c)? as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, message: &'static str) -> ParseError {
        ParseError { offset: self.pos, message }
    }

    fn ws(&mut self) {
        while self.pos < self.b.len() && matches!(self.b[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, ParseError> {
        if self.b[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'[') => self.array(),
            Some(b'{') => self.object(),
            Some(b'-') | Some(b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        self.pos += 1;
        self.ws();
        Ok(())
    }

    fn array(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        let mut a = Vec::new();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Array(a));
        }
        loop {
            a.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                }
                Some(b']') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(Value::Array(a));
                }
                _ => return Err(self.err("expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        let mut m = Vec::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Object(m));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a string key"));
            }
            let k = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':'"));
            }
            self.pos += 1;
            self.ws();
            let v = self.value()?;
            m.push((k, v));
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(Value::Object(m));
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e') | Some(b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+') | Some(b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        // The bytes are ASCII digits and signs: valid UTF-8.
        Ok(Value::Number(String::from_utf8_lossy(&self.b[start..self.pos]).into_owned()))
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        if self.pos + 4 > self.b.len() {
            return Err(self.err("short \\u escape"));
        }
        let mut n = 0u32;
        for _ in 0..4 {
            let d = match self.b[self.pos] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                c @ b'A'..=b'F' => c - b'A' + 10,
                _ => return Err(self.err("invalid \\u escape")),
            };
            n = n * 16 + d as u32;
            self.pos += 1;
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1; // the opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(c) => c,
            };
            self.pos += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = match self.peek() {
                        None => return Err(self.err("unterminated string")),
                        Some(e) => e,
                    };
                    self.pos += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                // A high surrogate must be followed by a low one.
                                if self.b[self.pos..].starts_with(b"\\u") {
                                    self.pos += 2;
                                    let lo = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&lo) {
                                        return Err(self.err("unpaired surrogate"));
                                    }
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    return Err(self.err("unpaired surrogate"));
                                }
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(self.err("unpaired surrogate"));
                            } else {
                                hi
                            };
                            // Surrogates are excluded above: always a char.
                            char::from_u32(cp).unwrap_or('\u{fffd}')
                        }
                        _ => return Err(self.err("invalid escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => return Err(self.err("control character in string")),
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| self.err("invalid UTF-8 in string"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            r#"[]"#,
            r#"{}"#,
            r#"-0.5e+10"#,
            r#"12345678901234567890"#,
            r#""tab\tquote\"back\\slash\u0001""#,
            r#"{"z":1,"a":2}"#,
            r#""héllo 😀""#,
        ] {
            assert_eq!(Value::parse(s).unwrap().to_json(), s, "{}", s);
        }
    }

    #[test]
    fn escapes_decode() {
        let v = Value::parse(r#""\u0041\n\/\ud83d\ude00\u00e9""#).unwrap();
        assert_eq!(v.as_str(), Some("A\n/😀é"));
        assert_eq!(v.to_json(), "\"A\\n/😀é\"");
    }

    #[test]
    fn rejects_invalid() {
        for s in [
            "", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "01", "1.", "-", "tru", "\"abc", "\"\\x\"", "\"\\ud800\"",
            "\"\\udc00\"", "1 2", "{'a':1}", "\"a\u{1}b\"", "nul", "[1 2]",
        ] {
            assert!(Value::parse(s).is_err(), "parsed {:?}", s);
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(Value::parse(&deep).is_err());
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(Value::parse(&ok).is_ok());
    }

    #[test]
    fn accessors() {
        let mut v = Value::parse(r#" { "n": 3, "f": 2.5, "s": "x", "o": {"p": [1]} } "#).unwrap();
        assert_eq!(v.get("n").and_then(Value::as_i64), Some(3));
        assert_eq!(v.get("f").and_then(Value::as_f64), Some(2.5));
        assert_eq!(v.get("f").and_then(Value::as_i64), None);
        assert_eq!(v.get_str("s"), Some("x"));
        assert_eq!(v.pointer(&["o", "p"]).unwrap().to_json(), "[1]");
        v.set("s", "y".into()).set("new", Value::from(true));
        assert_eq!(v.remove("n"), Some(Value::from_i64(3)));
        assert_eq!(v.to_json(), r#"{"f":2.5,"s":"y","o":{"p":[1]},"new":true}"#);
    }

    #[test]
    fn numbers_from_floats() {
        assert_eq!(Value::from_f64(11.5).to_json(), "11.5");
        assert_eq!(Value::from_f64(-3.0).to_json(), "-3");
        assert_eq!(Value::from_f64(f64::NAN).to_json(), "null");
        assert_eq!(Value::from_f64(0.1).to_json(), "0.1");
        let big = Value::from_f64(1e300).to_json();
        assert_eq!(Value::parse(&big).unwrap().as_f64(), Some(1e300));
    }
}
