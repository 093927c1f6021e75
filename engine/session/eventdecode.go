package session

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// The event decoder is eventjson.go's twin: it reads what encoding/json
// reads into an Event (through unmarshalReflect's wrapper, then the key
// order of args and responses), for the fields real events carry, in one
// pass over the bytes and without reflection: the bbolt store decodes a
// session's events on every Get, and reflection over genai's structs was
// most of that. Values (args, responses, state) it builds as encoding/json
// builds them for an any: map[string]any, []any, float64, string, bool,
// nil. It gathers the key-order hint of args and responses as it reads
// them: an object with a key not above the one before it is the only
// thing that gives a hint, so keyorder.Of reads the value again only then.
//
// It gives up, and UnmarshalJSON decodes reflectively from the start,
// wherever encoding/json could do something it does not:
//   - a key it does not know, a rare field (genai's grounding, blobs,
//     transcriptions...), or a known key spelled otherwise (encoding/json
//     matches keys up to case, and unescapes them);
//   - a map, pointer or interface field that already holds something
//     (after a duplicate key, or in a caller's Event): encoding/json
//     decodes into it, merging (a scalar field, or a list of strings, it
//     overwrites, as the decoder does);
//   - null where a field is (encoding/json ignores it or clears the
//     field), or a value of another type (an error);
//   - a number its field cannot hold (an error), a string with bytes that
//     are not UTF-8 (encoding/json replaces them with U+FFFD), nesting
//     deeper than maxDecodeDepth;
//   - anything that is not valid JSON, so that errors come from
//     encoding/json, worded as before.
// FuzzEventUnmarshal checks it against the reflective decoding, and
// TestEventUnmarshalFallbacks has an input for each reason to give up.

// maxDecodeDepth bounds the nesting the decoder follows; deeper values
// (encoding/json accepts up to 10000) are decoded reflectively.
const maxDecodeDepth = 1000

// decodeEvent decodes data into e and reports whether it could; when it
// could not, e is partly written and the caller restores it.
func decodeEvent(data []byte, e *Event) bool {
	d := decoder{b: data, s: string(data)}
	d.event(e)
	d.space()
	return !d.bad && d.i == len(d.b)
}

// decoder reads JSON text b from offset i. Its methods set bad when the
// input is not what the fast path handles, and do nothing once it is set.
type decoder struct {
	b []byte
	// s is a copy of b: the strings the decoder returns are cut from it
	// (one allocation for all the strings without escapes; they keep
	// the copy alive, which is about the size of the event they are in).
	s     string
	i     int
	bad   bool
	depth int
	// unsorted is set when an object read into an any had a key not
	// above the one before it.
	unsorted bool
}

func (d *decoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (d *decoder) peek() byte {
	d.space()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

// enter consumes c, the opening of an object or list.
func (d *decoder) enter(c byte) bool {
	if d.bad || d.peek() != c {
		d.bad = true
		return false
	}
	d.i++
	return true
}

// more reports whether another member or item follows in the container
// closed by c: at its start (first), or after a value, where it consumes
// the comma. It consumes c at the end.
func (d *decoder) more(c byte, first bool) bool {
	if d.bad {
		return false
	}
	switch d.peek() {
	case c:
		d.i++
		return false
	case ',':
		if !first {
			d.i++
			return true
		}
	case 0:
	default:
		if first {
			return true
		}
	}
	d.bad = true
	return false
}

// key reads a member's key and its colon. It returns the key's text as
// it is: a key with an escape is never one of ours as written.
func (d *decoder) key() []byte {
	if d.bad || d.peek() != '"' {
		d.bad = true
		return nil
	}
	start := d.i + 1
	for i := start; i < len(d.b); i++ {
		c := d.b[i]
		if c == '"' {
			d.i = i + 1
			if d.peek() != ':' {
				break
			}
			d.i++
			return d.b[start:i]
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	d.bad = true
	return nil
}

// str reads a string.
func (d *decoder) str() string {
	start, end, escaped := d.strRaw()
	if d.bad {
		return ""
	}
	return d.text(start, end, escaped)
}

// text returns the value of the string whose text is b[start:end].
func (d *decoder) text(start, end int, escaped bool) string {
	if !escaped {
		return d.s[start:end]
	}
	var sb strings.Builder
	unescape(&sb, d.b[start:end])
	return sb.String()
}

// strRaw reads a string and returns where the text between its quotes
// starts and ends, and whether it has escapes. It checks the escapes and
// that the text is UTF-8.
func (d *decoder) strRaw() (start, end int, escaped bool) {
	if d.bad || d.peek() != '"' {
		d.bad = true
		return 0, 0, false
	}
	start = d.i + 1
	for i := start; i < len(d.b); {
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			return start, i, escaped
		case c == '\\':
			escaped = true
			if i+1 >= len(d.b) {
				break
			}
			switch d.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
				if hex4(d.b[i+2:]) >= 0 {
					i += 6
					continue
				}
			}
		case c < 0x20:
		case c < utf8.RuneSelf:
			i++
			continue
		default:
			if r, size := utf8.DecodeRune(d.b[i:]); r != utf8.RuneError || size > 1 {
				i += size
				continue
			}
		}
		break // not a string encoding/json reads as it is
	}
	d.bad = true
	return 0, 0, false
}

// hex4 returns the value of the four hex digits b starts with, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unescape writes the value of raw, a string's text that strRaw checked,
// as encoding/json decodes it: a \u escape of half a surrogate pair that
// is not followed by the other half is U+FFFD.
func unescape(sb *strings.Builder, raw []byte) {
	// The value is never longer than its text: one allocation.
	sb.Grow(len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			plain := i
			for i < len(raw) && raw[i] != '\\' {
				i++
			}
			sb.Write(raw[plain:i])
			continue
		}
		switch raw[i+1] {
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hex4(raw[i+2:])
				}
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					r = pair
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			sb.WriteRune(r)
			continue
		default: // " \ /
			sb.WriteByte(raw[i+1])
		}
		i += 2
	}
}

// literal consumes the word w (true, false or null) if it is next.
func (d *decoder) literal(w string) bool {
	if d.bad || len(d.b)-d.i < len(w) || string(d.b[d.i:d.i+len(w)]) != w {
		return false
	}
	d.i += len(w)
	return true
}

func (d *decoder) boolean() bool {
	switch d.peek() {
	case 't':
		if d.literal("true") {
			return true
		}
	case 'f':
		if d.literal("false") {
			return false
		}
	}
	d.bad = true
	return false
}

// number reads a number's text, checking it is JSON's:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) number() []byte {
	if d.bad {
		return nil
	}
	d.space()
	b, i := d.b, d.i
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		digits()
	default:
		d.bad = true
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			d.bad = true
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			d.bad = true
			return nil
		}
	}
	num := b[d.i:i]
	d.i = i
	return num
}

// float reads a number as encoding/json reads it into a float64 (one out
// of range is an error there).
func (d *decoder) float() float64 {
	num := d.number()
	if d.bad {
		return 0
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		d.bad = true
	}
	return f
}

// integer reads a number into an integer of the given bits, as
// encoding/json does (a fraction or exponent is an error there).
func (d *decoder) integer(bits int) int64 {
	num := d.number()
	if d.bad {
		return 0
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || bits < 64 && (n < -1<<(bits-1) || n >= 1<<(bits-1)) {
		d.bad = true
	}
	return n
}

// value reads any value as encoding/json decodes it into an any.
func (d *decoder) value() any {
	switch d.peek() {
	case '{':
		if m := d.object(); !d.bad {
			return m
		}
	case '[':
		if l := d.list(); !d.bad {
			return l
		}
	case '"':
		return d.str()
	case 't', 'f':
		return d.boolean()
	case 'n':
		if d.literal("null") {
			return nil
		}
	default:
		return d.float()
	}
	d.bad = true
	return nil
}

// object reads an object into a new map[string]any.
func (d *decoder) object() map[string]any {
	if !d.enter('{') || !d.deeper() {
		return nil
	}
	m := make(map[string]any)
	var prev []byte // the key before, as written
	prevPlain := false
	for first := true; d.more('}', first); first = false {
		start, end, escaped := d.strRaw()
		if d.bad || d.peek() != ':' {
			d.bad = true
			return nil
		}
		d.i++
		k := d.text(start, end, escaped)
		raw := d.b[start:end]
		// keyorder compares keys unescaped; an escaped key is marked as
		// out of order rather than kept for the comparison.
		if !first && (escaped || !prevPlain || string(raw) <= string(prev)) {
			d.unsorted = true
		}
		prev, prevPlain = raw, !escaped
		v := d.value()
		if d.bad {
			return nil
		}
		m[k] = v
	}
	d.depth--
	return m
}

// list reads a list into a new []any.
func (d *decoder) list() []any {
	if !d.enter('[') || !d.deeper() {
		return nil
	}
	l := make([]any, 0)
	for first := true; d.more(']', first); first = false {
		v := d.value()
		if d.bad {
			return nil
		}
		l = append(l, v)
	}
	d.depth--
	return l
}

func (d *decoder) deeper() bool {
	d.depth++
	if d.depth > maxDecodeDepth {
		d.bad = true
	}
	return !d.bad
}

// hinted reads an object (args, a response) and returns it with its
// key-order hint.
func (d *decoder) hinted() (map[string]any, []byte) {
	outer := d.unsorted
	d.unsorted = false
	d.space()
	start := d.i
	m := d.object()
	var hint []byte
	if d.unsorted && !d.bad {
		hint = keyorder.Of(d.b[start:d.i])
	}
	d.unsorted = outer
	return m, hint
}

// objectField reads an object into the map field *m, which must be nil.
func (d *decoder) objectField(m *map[string]any) {
	if *m != nil {
		d.bad = true
		return
	}
	*m = d.object()
}

// anyField reads a value into the interface field *v, which must be nil.
func (d *decoder) anyField(v *any) {
	if *v != nil {
		d.bad = true
		return
	}
	*v = d.value()
}

// strings reads a list of strings into the field *l. (encoding/json
// overwrites the items of a list the field holds, and shortens it: the
// same list.)
func (d *decoder) strings(l *[]string) {
	if !d.enter('[') {
		return
	}
	out := make([]string, 0, 1)
	for first := true; d.more(']', first); first = false {
		out = append(out, d.str())
	}
	*l = out
}

// event reads the event's members into e and returns its timestamp.
// event reads the event's members into e. As unmarshalReflect, it sets
// the timestamp, Partial and Aggregated (an explicit "partial": false) and
// the key order of args and responses whether or not they are there.
func (d *decoder) event(e *Event) {
	if !d.enter('{') {
		return
	}
	r := &e.Response
	r.KeyOrder = nil
	var ts float64
	var partial, aggregated bool
	for first := true; d.more('}', first); first = false {
		switch string(d.key()) {
		case "content":
			d.content(e)
		case "partial":
			partial = d.boolean()
			aggregated = !partial
		case "turnComplete":
			r.TurnComplete = d.boolean()
		case "finishReason":
			r.FinishReason = genai.FinishReason(d.str())
		case "errorCode":
			r.ErrorCode = d.str()
		case "errorMessage":
			r.ErrorMessage = d.str()
		case "interrupted":
			r.Interrupted = d.boolean()
		case "customMetadata":
			d.objectField(&r.CustomMetadata)
		case "usageMetadata":
			d.usage(&r.UsageMetadata)
		case "avgLogprobs":
			r.AvgLogprobs = d.float()
		case "interactionId":
			r.InteractionID = d.str()
		case "modelVersion":
			r.ModelVersion = d.str()
		case "id":
			e.ID = d.str()
		case "invocationId":
			e.InvocationID = d.str()
		case "author":
			e.Author = d.str()
		case "branch":
			e.Branch = d.str()
		case "actions":
			d.actions(&e.Actions)
		case "longRunningToolIds":
			d.strings(&e.LongRunningToolIDs)
		case "nodeInfo":
			d.nodeInfo(&e.NodeInfo)
		case "isolationScope":
			e.IsolationScope = d.str()
		case "output":
			d.anyField(&e.Output)
		case "timestamp":
			ts = d.float()
		default:
			d.bad = true
		}
	}
	e.Timestamp = FloatToTime(ts)
	r.Partial, r.Aggregated = partial, aggregated
}

func (d *decoder) actions(a *EventActions) {
	if !d.enter('{') {
		return
	}
	for first := true; d.more('}', first); first = false {
		switch string(d.key()) {
		case "skipSummarization":
			a.SkipSummarization = d.boolean()
			a.SkipSummarizationSet = !a.SkipSummarization
		case "stateDelta":
			d.objectField(&a.StateDelta)
		case "artifactDelta":
			d.artifactDelta(&a.ArtifactDelta)
		case "transferToAgent":
			a.TransferToAgent = d.str()
		case "transferReason":
			a.TransferReason = d.str()
		case "escalate":
			a.Escalate = d.boolean()
		case "requestedAuthConfigs":
			d.objectField(&a.RequestedAuthConfigs)
		case "requestedToolConfirmations":
			// Only empty, as google-adk writes it on every event.
			if a.RequestedToolConfirmations != nil || !d.enter('{') || d.more('}', true) {
				d.bad = true
				break
			}
			a.RequestedToolConfirmations = map[string]ToolConfirmation{}
		case "endOfAgent":
			a.EndOfAgent = d.boolean()
		case "agentState":
			d.objectField(&a.AgentState)
		case "rewindBeforeInvocationId":
			a.RewindBeforeInvocationID = d.str()
		case "setModelResponse":
			d.anyField(&a.SetModelResponse)
		default:
			d.bad = true
		}
	}
}

func (d *decoder) artifactDelta(m *map[string]int) {
	if *m != nil || !d.enter('{') {
		d.bad = true
		return
	}
	out := make(map[string]int)
	for first := true; d.more('}', first); first = false {
		k := d.str()
		if d.peek() != ':' {
			d.bad = true
			return
		}
		d.i++
		out[k] = int(d.integer(strconv.IntSize))
	}
	*m = out
}

func (d *decoder) nodeInfo(p **NodeInfo) {
	if *p != nil || !d.enter('{') {
		d.bad = true
		return
	}
	n := new(NodeInfo)
	*p = n
	for first := true; d.more('}', first); first = false {
		switch string(d.key()) {
		case "path":
			n.Path = d.str()
		case "outputFor":
			d.strings(&n.OutputFor)
		case "messageAsOutput":
			n.MessageAsOutput = d.boolean()
		default:
			d.bad = true
		}
	}
}

func (d *decoder) usage(p **genai.GenerateContentResponseUsageMetadata) {
	if *p != nil || !d.enter('{') {
		d.bad = true
		return
	}
	u := new(genai.GenerateContentResponseUsageMetadata)
	*p = u
	for first := true; d.more('}', first); first = false {
		switch string(d.key()) {
		case "cacheTokensDetails":
			d.modalities(&u.CacheTokensDetails)
		case "cachedContentTokenCount":
			u.CachedContentTokenCount = int32(d.integer(32))
		case "candidatesTokenCount":
			u.CandidatesTokenCount = int32(d.integer(32))
		case "candidatesTokensDetails":
			d.modalities(&u.CandidatesTokensDetails)
		case "promptTokenCount":
			u.PromptTokenCount = int32(d.integer(32))
		case "promptTokensDetails":
			d.modalities(&u.PromptTokensDetails)
		case "thoughtsTokenCount":
			u.ThoughtsTokenCount = int32(d.integer(32))
		case "toolUsePromptTokenCount":
			u.ToolUsePromptTokenCount = int32(d.integer(32))
		case "toolUsePromptTokensDetails":
			d.modalities(&u.ToolUsePromptTokensDetails)
		case "totalTokenCount":
			u.TotalTokenCount = int32(d.integer(32))
		case "trafficType":
			u.TrafficType = genai.TrafficType(d.str())
		default:
			d.bad = true
		}
	}
}

func (d *decoder) modalities(l *[]*genai.ModalityTokenCount) {
	if *l != nil || !d.enter('[') {
		d.bad = true
		return
	}
	out := make([]*genai.ModalityTokenCount, 0, 1)
	for first := true; d.more(']', first); first = false {
		if !d.enter('{') {
			return
		}
		m := new(genai.ModalityTokenCount)
		out = append(out, m)
		for first := true; d.more('}', first); first = false {
			switch string(d.key()) {
			case "modality":
				m.Modality = genai.MediaModality(d.str())
			case "tokenCount":
				m.TokenCount = int32(d.integer(32))
			default:
				d.bad = true
			}
		}
	}
	*l = out
}

// content reads e's content, setting the key-order hint of each part as
// readKeyOrder would find it: a part's call's args, else its response's.
func (d *decoder) content(e *Event) {
	if e.Content != nil || !d.enter('{') {
		d.bad = true
		return
	}
	// The content and room for its first part, in one allocation.
	cp := new(struct {
		c genai.Content
		p [1]*genai.Part
	})
	c := &cp.c
	e.Content = c
	for first := true; d.more('}', first); first = false {
		switch string(d.key()) {
		case "role":
			c.Role = d.str()
		case "parts":
			if c.Parts != nil || !d.enter('[') {
				d.bad = true
				break
			}
			c.Parts = cp.p[:0]
			for first := true; d.more(']', first); first = false {
				p, hint := d.part()
				if hint != nil {
					e.SetPartKeyOrder(len(c.Parts), hint)
				}
				c.Parts = append(c.Parts, p)
			}
		default:
			d.bad = true
		}
	}
}

// part reads a part and returns it with its hint.
func (d *decoder) part() (*genai.Part, []byte) {
	if !d.enter('{') {
		return nil, nil
	}
	p := new(genai.Part)
	var callHint, responseHint []byte
	for first := true; d.more('}', first); first = false {
		switch string(d.key()) {
		case "text":
			p.Text = d.str()
		case "thought":
			p.Thought = d.boolean()
		case "thoughtSignature":
			p.ThoughtSignature = d.base64()
		case "functionCall":
			if p.FunctionCall != nil {
				d.bad = true
				break
			}
			p.FunctionCall, callHint = d.call()
		case "functionResponse":
			if p.FunctionResponse != nil {
				d.bad = true
				break
			}
			p.FunctionResponse, responseHint = d.response()
		default:
			d.bad = true
		}
	}
	if p.FunctionCall != nil {
		return p, callHint
	}
	return p, responseHint
}

// base64 reads a []byte field as encoding/json does: base64 in a string.
func (d *decoder) base64() []byte {
	start, end, escaped := d.strRaw()
	if d.bad {
		return nil
	}
	raw := d.b[start:end]
	if escaped {
		var sb strings.Builder
		unescape(&sb, raw)
		raw = []byte(sb.String())
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(b, raw)
	if err != nil {
		d.bad = true
	}
	return b[:n]
}

func (d *decoder) call() (*genai.FunctionCall, []byte) {
	if !d.enter('{') {
		return nil, nil
	}
	fc := new(genai.FunctionCall)
	var hint []byte
	for first := true; d.more('}', first); first = false {
		switch string(d.key()) {
		case "id":
			fc.ID = d.str()
		case "name":
			fc.Name = d.str()
		case "args":
			if fc.Args != nil {
				d.bad = true
				break
			}
			fc.Args, hint = d.hinted()
		default:
			d.bad = true
		}
	}
	return fc, hint
}

func (d *decoder) response() (*genai.FunctionResponse, []byte) {
	if !d.enter('{') {
		return nil, nil
	}
	fr := new(genai.FunctionResponse)
	var hint []byte
	for first := true; d.more('}', first); first = false {
		switch string(d.key()) {
		case "id":
			fr.ID = d.str()
		case "name":
			fr.Name = d.str()
		case "response":
			if fr.Response != nil {
				d.bad = true
				break
			}
			fr.Response, hint = d.hinted()
		default:
			d.bad = true
		}
	}
	return fr, hint
}
