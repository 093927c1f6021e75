package session

import (
	"bytes"
	"encoding/json"
	"slices"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// The reflective event encoding MarshalJSON used before eventjson.go: the
// reference FuzzEventJSON checks the encoder against.

func marshalEventReflect(e Event) ([]byte, error) {
	if e.Aggregated && !e.Partial {
		// Aggregated is written as "partial": false, in Partial's place.
		e.Partial = true
		b, err := marshalEventReflect(e)
		return topLevelPartialFalse(b), err
	}
	var content []byte
	if e.Content != nil && (slices.ContainsFunc(e.KeyOrder, func(h json.RawMessage) bool { return h != nil }) ||
		slices.ContainsFunc(e.Content.Parts, IsEmptyText)) {
		c, err := marshalContent(e.Content, e.KeyOrder)
		if err != nil {
			return nil, err
		}
		content, e.Content = c, nil
	}
	b, err := json.Marshal(struct {
		eventJSON
		Timestamp float64 `json:"timestamp"`
	}{eventJSON(e), TimeToFloat(e.Timestamp)})
	if err != nil || content == nil {
		return b, err
	}
	out := make([]byte, 0, len(b)+len(content)+12)
	out = append(out, `{"content":`...)
	out = append(out, content...)
	out = append(out, ',')
	return append(out, b[1:]...), nil
}

// topLevelPartialFalse rewrites the top-level member "partial": true of
// the JSON object b to false.
func topLevelPartialFalse(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return b
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return b
		}
		if key == "partial" {
			off := int(dec.InputOffset())
			i := off + bytes.Index(b[off:], []byte("true"))
			return slices.Concat(b[:i], []byte("false"), b[i+len("true"):])
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return b
		}
	}
	return b
}

// marshalContent encodes c with its empty text parts as {"text": ""}, and
// the args or response of part i in the key order of keyOrder[i].
func marshalContent(c *genai.Content, keyOrder []json.RawMessage) ([]byte, error) {
	parts := make([]json.RawMessage, len(c.Parts))
	for i, p := range c.Parts {
		if IsEmptyText(p) {
			parts[i] = json.RawMessage(`{"text":""}`)
			continue
		}
		var (
			b   []byte
			err error
		)
		if i < len(keyOrder) && keyOrder[i] != nil && p != nil && (p.FunctionCall != nil || p.FunctionResponse != nil) {
			b, err = marshalOrderedPart(p, keyOrder[i])
		} else {
			b, err = json.Marshal(p)
		}
		if err != nil {
			return nil, err
		}
		parts[i] = b
	}
	return json.Marshal(struct {
		Parts []json.RawMessage `json:"parts,omitempty"`
		Role  string            `json:"role,omitempty"`
	}{parts, c.Role})
}

// marshalOrderedPart encodes a function call or response part with its
// map in the order of hint: the outer fields shadow the embedded ones.
func marshalOrderedPart(p *genai.Part, hint json.RawMessage) ([]byte, error) {
	type orderedCall struct {
		*genai.FunctionCall
		Args json.RawMessage `json:"args,omitempty"`
	}
	type orderedResponse struct {
		*genai.FunctionResponse
		Response json.RawMessage `json:"response,omitempty"`
	}
	w := struct {
		*genai.Part
		FunctionCall     *orderedCall     `json:"functionCall,omitempty"`
		FunctionResponse *orderedResponse `json:"functionResponse,omitempty"`
	}{Part: p}
	if fc := p.FunctionCall; fc != nil {
		w.FunctionCall = &orderedCall{FunctionCall: fc}
		if len(fc.Args) > 0 { // omitempty, as genai writes it
			b, err := keyorder.Marshal(fc.Args, hint)
			if err != nil {
				return nil, err
			}
			w.FunctionCall.Args = b
		}
	}
	if fr := p.FunctionResponse; fr != nil {
		w.FunctionResponse = &orderedResponse{FunctionResponse: fr}
		if len(fr.Response) > 0 {
			b, err := keyorder.Marshal(fr.Response, hint)
			if err != nil {
				return nil, err
			}
			w.FunctionResponse.Response = b
		}
	}
	return json.Marshal(w)
}

// The reflective event decoding UnmarshalJSON used before eventdecode.go
// (its fallback, unmarshalReflect, is the same code): the reference
// FuzzEventUnmarshal checks UnmarshalJSON against, kept apart so that a
// change to the fallback is checked too.

func unmarshalEventReflect(e *Event, data []byte) error {
	var w struct {
		*eventJSON
		Timestamp float64 `json:"timestamp"`
		// Partial shadows Response.Partial: an explicit false is Aggregated.
		Partial *bool `json:"partial"`
	}
	w.eventJSON = (*eventJSON)(e)
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	e.Timestamp = FloatToTime(w.Timestamp)
	e.Partial, e.Aggregated = w.Partial != nil && *w.Partial, w.Partial != nil && !*w.Partial
	e.readSkipSummarizationSet(data)
	e.KeyOrder = nil
	if e.Content == nil || !slices.ContainsFunc(e.Content.Parts, func(p *genai.Part) bool {
		return p != nil && (p.FunctionCall != nil && len(p.FunctionCall.Args) > 0 ||
			p.FunctionResponse != nil && len(p.FunctionResponse.Response) > 0)
	}) {
		return nil
	}
	parts := keyorder.Elements(keyorder.Member(keyorder.Member(data, "content"), "parts"))
	for i, p := range parts {
		if i >= len(e.Content.Parts) {
			break
		}
		var h json.RawMessage
		if fc := keyorder.Member(p, "functionCall"); fc != nil {
			h = keyorder.Of(keyorder.Member(fc, "args"))
		} else if fr := keyorder.Member(p, "functionResponse"); fr != nil {
			h = keyorder.Of(keyorder.Member(fr, "response"))
		}
		e.SetPartKeyOrder(i, h)
	}
	return nil
}
