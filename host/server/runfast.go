package server

import (
	"unicode/utf8"

	"google.golang.org/genai"
)

// fastRunRequest decodes the common run request, the one google-adk's web
// UI and clients send for a user message, into the zero *req, exactly as
// decodeCamel would: appName, userId, sessionId, streaming and a
// newMessage of a role and text parts, each key once and spelled so, each
// string without escapes. Anything else returns false and is left to
// decodeCamel (encoding/json, 3% of a served turn's CPU). The strings
// share one copy of b.
func fastRunRequest(b []byte, req *runRequest) bool {
	d := runDecoder{b: b}
	var seen uint8
	ok := d.object(func(key string) bool {
		var bit uint8
		ok := false
		switch key {
		case "appName":
			bit = 1
			req.AppName, ok = d.plain()
		case "userId":
			bit = 2
			req.UserID, ok = d.plain()
		case "sessionId":
			bit = 4
			req.SessionID, ok = d.plain()
		case "streaming":
			bit = 8
			req.Streaming, ok = d.boolean()
		case "newMessage":
			bit = 16
			req.NewMessage, ok = d.content()
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	d.space()
	return ok && d.i == len(d.b)
}

// runDecoder reads the JSON text b from i.
type runDecoder struct {
	b    []byte
	i    int
	text string // b as a string, made by the first string read
}

func (d *runDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// token consumes c after any space, if it is next.
func (d *runDecoder) token(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads an object of at least one member: for each, its key (a
// plain string) and colon, then member, which reads the value and reports
// whether it is one fastRunRequest takes.
func (d *runDecoder) object(member func(key string) bool) bool {
	if !d.token('{') {
		return false
	}
	for first := true; ; first = false {
		if !first {
			if d.token('}') {
				return true
			}
			if !d.token(',') {
				return false
			}
		}
		key, ok := d.plain()
		if !ok || !d.token(':') || !member(key) {
			return false
		}
	}
}

// plain reads a string of printable characters and valid UTF-8 without
// escapes: encoding/json decodes such a string to its bytes as they are.
func (d *runDecoder) plain() (string, bool) {
	if !d.token('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if !utf8.Valid(s) {
				return "", false // encoding/json replaces invalid bytes
			}
			if d.text == "" {
				d.text = string(d.b)
			}
			return d.text[start : start+len(s)], true
		case c == '\\' || c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

func (d *runDecoder) boolean() (bool, bool) {
	d.space()
	for _, lit := range [...]string{"true", "false"} {
		if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
			d.i += len(lit)
			return lit == "true", true
		}
	}
	return false, false
}

// content reads {"role": "...", "parts": [{"text": "..."}, ...]}, the two
// members in either order, each once; at least one part.
func (d *runDecoder) content() (*genai.Content, bool) {
	c := &genai.Content{}
	var role, parts bool
	ok := d.object(func(key string) bool {
		ok := false
		switch {
		case key == "role" && !role:
			role = true
			c.Role, ok = d.plain()
		case key == "parts" && !parts:
			parts = true
			c.Parts, ok = d.textParts()
		}
		return ok
	})
	return c, ok && role && parts
}

// textParts reads a non-empty array of {"text": "..."}.
func (d *runDecoder) textParts() ([]*genai.Part, bool) {
	if !d.token('[') {
		return nil, false
	}
	var parts []*genai.Part
	for {
		if !d.token('{') {
			return nil, false
		}
		key, ok := d.plain()
		if !ok || key != "text" || !d.token(':') {
			return nil, false
		}
		text, ok := d.plain()
		if !ok || !d.token('}') {
			return nil, false
		}
		parts = append(parts, &genai.Part{Text: text})
		if d.token(']') {
			return parts, true
		}
		if !d.token(',') {
			return nil, false
		}
	}
}
