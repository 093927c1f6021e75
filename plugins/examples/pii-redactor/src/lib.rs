//! pii-redactor: an adkhost after_tool callback, in Rust with sdk/rust. It
//! replaces e-mail addresses and phone numbers in every string of a tool's
//! result (at any depth; object keys and non-string values are left alone)
//! before the model sees it, and logs how many it replaced. It asks for no
//! capability: `log` needs none.
//!
//! A crate of its own (Cargo.toml, Cargo.lock), built for wasm32-wasip1 by
//! `make pii-redactor` in plugins/examples (sdk/rust/README.md: the
//! toolchain).
//!
//! The detection is deliberately simple and errs towards redacting:
//! - an e-mail address is `local@domain.tld`: a local part of letters,
//!   digits and `._%+-`, a domain of dot-separated labels of letters,
//!   digits and `-`, the last label at least two letters;
//! - a phone number is a run of digits and the separators space, `-`, `.`,
//!   `(` and `)`, not touching a letter or digit, that has 10 to 15 digits,
//!   or 8 to 15 after a leading `+`, or is 7 digits written `555-0199`;
//!   every group of digits but the first has two digits or more, and it
//!   holds no date (`2024-01-15`, `2024.01.15`). So dates, times, prices
//!   and small counts are not phones.

use adkhost::{host, Context, Module, Value};

pub const EMAIL: &str = "[REDACTED EMAIL]";
pub const PHONE: &str = "[REDACTED PHONE]";

fn setup(m: &mut Module) {
    m.after_tool(redact_result);
}

adkhost::module!("pii-redactor", "1.0.0", setup);

/// The after_tool callback: edits the result in place (the SDK sends the
/// edited result back as the replacement; unchanged, it sends nothing).
fn redact_result(ctx: &Context, _args: &Value, result: &mut Value) -> adkhost::Result<Option<Value>> {
    let mut n = Counts::default();
    redact_value(result, &mut n);
    if n.emails + n.phones > 0 {
        host::info(&format!(
            "pii-redactor: redacted {} e-mail address(es) and {} phone number(s) in the result of {}",
            n.emails, n.phones, ctx.tool
        ));
    }
    Ok(None)
}

#[derive(Default, Debug, PartialEq)]
pub struct Counts {
    pub emails: usize,
    pub phones: usize,
}

/// Redacts every string inside v.
pub fn redact_value(v: &mut Value, n: &mut Counts) {
    match v {
        Value::String(s) => {
            let (out, c) = redact(s);
            if c.emails + c.phones > 0 {
                *s = out;
                n.emails += c.emails;
                n.phones += c.phones;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact_value(x, n)),
        Value::Object(m) => m.values_mut().for_each(|x| redact_value(x, n)),
        _ => {}
    }
}

fn is_local(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._%+-".contains(&b)
}

fn is_domain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'.'
}

// email finds the address around the '@' at index at: its byte range.
fn email(s: &[u8], at: usize) -> Option<(usize, usize)> {
    let mut start = at;
    while start > 0 && is_local(s[start - 1]) {
        start -= 1;
    }
    while start < at && s[start] == b'.' {
        start += 1; // a local part does not start with a dot
    }
    if start == at {
        return None;
    }
    let mut end = at + 1;
    while end < s.len() && is_domain(s[end]) {
        end += 1;
    }
    // A sentence's full stop (or a stray hyphen) is not part of the domain.
    while end > at + 1 && (s[end - 1] == b'.' || s[end - 1] == b'-') {
        end -= 1;
    }
    let domain = &s[at + 1..end];
    let labels: Vec<&[u8]> = domain.split(|&b| b == b'.').collect();
    if labels.len() < 2 || labels.iter().any(|l| l.is_empty()) {
        return None;
    }
    let tld = labels[labels.len() - 1];
    if tld.len() < 2 || !tld.iter().all(u8::is_ascii_alphabetic) {
        return None;
    }
    Some((start, end))
}

fn is_phone_sep(b: u8) -> bool {
    b == b' ' || b == b'-' || b == b'.' || b == b'(' || b == b')'
}

// phone finds a phone number starting at i (a '+', '(' or digit that does
// not follow a letter or digit): its end, if it is one.
fn phone(s: &[u8], i: usize) -> Option<usize> {
    let plus = s[i] == b'+';
    let mut j = if plus { i + 1 } else { i };
    let mut digits = 0;
    let mut groups: Vec<usize> = Vec::new();
    let mut last_sep = 0; // consecutive separators
    let mut seps = 0;
    let mut end = i;
    while j < s.len() {
        let b = s[j];
        if b.is_ascii_digit() {
            if last_sep > 0 || groups.is_empty() {
                groups.push(0);
            }
            *groups.last_mut().unwrap() += 1;
            digits += 1;
            last_sep = 0;
            end = j + 1;
        } else if is_phone_sep(b) && last_sep < 2 {
            last_sep += 1;
            seps += 1;
            if b == b')' {
                end = j + 1; // keep a closing parenthesis of an area code
            }
        } else {
            break;
        }
        j += 1;
    }
    if digits == 0 {
        return None;
    }
    // "(555)" at the very end is not a number; and the run must not run
    // into a letter or digit (a word, an identifier).
    if end < s.len() && s[end].is_ascii_alphanumeric() {
        return None;
    }
    if groups.iter().skip(1).any(|&g| g < 2) || has_date(&s[i..end]) {
        return None;
    }
    let ok = (plus && (8..=15).contains(&digits))
        || (10..=15).contains(&digits)
        || (digits == 7 && groups.len() == 2 && groups[0] == 3 && seps > 0);
    if !ok {
        return None;
    }
    // Unbalanced: "555-0199)" ends before the ')'.
    let opens = s[i..end].iter().filter(|&&b| b == b'(').count();
    let closes = s[i..end].iter().filter(|&&b| b == b')').count();
    if closes > opens && s[end - 1] == b')' {
        end -= 1;
    }
    Some(end)
}

// has_date reports a yyyy-mm-dd (or with '.' or '/') inside s.
fn has_date(s: &[u8]) -> bool {
    let d = |b: u8| b.is_ascii_digit();
    let sep = |b: u8| b == b'-' || b == b'.' || b == b'/';
    s.windows(10).any(|w| {
        w[..4].iter().all(|&b| d(b)) && sep(w[4]) && d(w[5]) && d(w[6]) && w[7] == w[4] && d(w[8]) && d(w[9])
    })
}

/// Redacts one string: the text with replacements, and how many of each.
pub fn redact(text: &str) -> (String, Counts) {
    let s = text.as_bytes();
    let mut spans: Vec<(usize, usize, &str)> = Vec::new();
    let mut n = Counts::default();
    for at in 0..s.len() {
        if s[at] != b'@' || spans.last().is_some_and(|sp| sp.1 > at) {
            continue;
        }
        if let Some((a, b)) = email(s, at) {
            spans.push((a, b, EMAIL));
            n.emails += 1;
        }
    }
    let emails = spans.clone();
    let in_email = |i: usize| emails.iter().any(|&(a, b, _)| a <= i && i < b);
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        let starts = (b == b'+' || b == b'(' || b.is_ascii_digit()) && (i == 0 || !s[i - 1].is_ascii_alphanumeric());
        if starts && !in_email(i) {
            if let Some(end) = phone(s, i) {
                if !(i..end).any(in_email) {
                    spans.push((i, end, PHONE));
                    n.phones += 1;
                    i = end;
                    continue;
                }
            }
        }
        i += 1;
    }
    if spans.is_empty() {
        return (text.to_string(), n);
    }
    spans.sort_by_key(|sp| sp.0);
    // Every span starts and ends at an ASCII byte: slicing is on char
    // boundaries.
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for (a, b, with) in spans {
        out.push_str(&text[pos..a]);
        out.push_str(with);
        pos = b;
    }
    out.push_str(&text[pos..]);
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use adkhost::json;

    fn r(s: &str) -> String {
        redact(s).0
    }

    #[test]
    fn emails() {
        assert_eq!(r("mail ada@example.com."), "mail [REDACTED EMAIL].");
        assert_eq!(r("a.l+tag@mail.example.org, b_c@x.io"), "[REDACTED EMAIL], [REDACTED EMAIL]");
        assert_eq!(r("<ada.lovelace@analytical-engine.co.uk>"), "<[REDACTED EMAIL]>");
        for keep in ["ada@localhost", "@handle", "a@b.c", "x@1.23", "user@", "name @ example.com", "é@example"] {
            assert_eq!(r(keep), keep);
        }
        assert_eq!(redact("x ada@example.com y bob@example.net").1, Counts { emails: 2, phones: 0 });
    }

    #[test]
    fn phones() {
        assert_eq!(r("call +1 (555) 010-4477 now"), "call [REDACTED PHONE] now");
        assert_eq!(r("tel: 555-0199."), "tel: [REDACTED PHONE].");
        assert_eq!(r("(555) 123-4567"), "[REDACTED PHONE]");
        assert_eq!(r("+44 20 7946 0958"), "[REDACTED PHONE]");
        assert_eq!(r("0612345678"), "[REDACTED PHONE]");
        assert_eq!(r("(call 555-0199)"), "(call [REDACTED PHONE])");
        for keep in [
            "order 2024-01-15", "at 10:30", "2024-01-15 10:30", "on 2024.01.15 1200", "3.14159", "1 2 3 4 5 6 7 8 9 10", "id A1234567890", "1234567890abc",
            "v1.2.3", "costs 12.50", "room 5550199", "+12",
        ] {
            assert_eq!(r(keep), keep, "{}", keep);
        }
    }

    #[test]
    fn mixed_and_nested() {
        let mut v = json!({"name": "Ada", "email": "ada@example.com", "n": 5551234567u64,
            "notes": ["call 555-0199 or mail ada.l@mail.example.org", "plain"],
            "deep": {"x": {"phone": "+1 (555) 010-4477"}}});
        let mut n = Counts::default();
        redact_value(&mut v, &mut n);
        assert_eq!(n, Counts { emails: 2, phones: 2 });
        assert_eq!(
            v.to_string(),
            r#"{"name":"Ada","email":"[REDACTED EMAIL]","n":5551234567,"notes":["call [REDACTED PHONE] or mail [REDACTED EMAIL]","plain"],"deep":{"x":{"phone":"[REDACTED PHONE]"}}}"#
        );
        // Digits inside an address are the address's, not a phone number.
        assert_eq!(r("5551234567@example.com"), EMAIL);
    }

    #[test]
    fn as_a_hook() {
        let m = adkhost_module();
        let d = m.describe().to_string();
        assert_eq!(d, r#"{"abiVersion":1,"name":"pii-redactor","version":"1.0.0","hooks":["after_tool"]}"#);
        let out = m.handle(
            Some(adkhost::Hook::AfterTool),
            br#"{"abiVersion":1,"context":{},"tool":{"name":"t"},"args":{},"result":{"e":"ada@example.com"}}"#,
        );
        assert_eq!(out, br#"{"abiVersion":1,"result":{"e":"[REDACTED EMAIL]"}}"#);
        let out = m.handle(Some(adkhost::Hook::AfterTool), br#"{"abiVersion":1,"tool":{"name":"t"},"result":{"e":"none"}}"#);
        assert!(out.is_empty());
    }
}
