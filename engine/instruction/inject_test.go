package instruction

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/genai"
)

type fakeSource struct {
	agent string
	state map[string]any
	arts  map[string]*genai.Part // nil: no artifact service
}

func (s *fakeSource) AgentName() string { return s.agent }

func (s *fakeSource) State(key string) (any, bool) {
	v, ok := s.state[key]
	return v, ok
}

func (s *fakeSource) LoadArtifact(_ context.Context, name string) (*genai.Part, error) {
	if s.arts == nil {
		return nil, ErrNoArtifactService
	}
	return s.arts[name], nil
}

func byteRange(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// The Go counterparts of the Python values the expectations were produced
// with (google-adk 2.13 inject_session_state on the same templates).
//
// "g" and the 2.0 in "lst" were Python floats (5.0, 2.0). A float64 holding
// a whole number formats as an int (Go's JSON decoders turn JSON integers
// into float64, see package pyfmt), so those Python floats are written as
// json.Number, which keeps the distinction; "jn" is what encoding/json
// makes of the JSON integer 7, which Python keeps an int.
func testState() map[string]any {
	return map[string]any{
		"name": "Ada", "n": 5, "f": 2.5, "g": json.Number("5.0"), "b": true, "none": nil, "jn": float64(7),
		"lst":       []any{1, "a", nil, true, json.Number("2.0"), "it's"},
		"d":         map[string]any{"a": 1, "b": []int{1, 2}, "c": map[string]string{"x": "y"}},
		"app:theme": "dark", "user:lang": "fr", "temp:t": "tmp", "empty": "",
		"uni": "héllo", "nl": "a\nb", "café": "ok", "big": 1e16, "small": 1e-05, "neg": negZero(),
		"q":      `say "hi"`,
		"mix":    []string{`a'b"c`, `\`, "\t\x00\x7f\u0085é\u200b\U0001F600"},
		"bs":     []byte("\x00ab'"),
		"nested": map[string]any{"k": []any{map[string]any{"z": nil}}, "e": map[string]any{}, "l": []any{}},
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

func testArtifacts() map[string]*genai.Part {
	return map[string]*genai.Part{
		"notes.txt": {Text: "my notes"},
		"img":       {InlineData: &genai.Blob{Data: []byte("\x89PNG\r\n"), MIMEType: "image/png"}},
		"IMG2":      {InlineData: &genai.Blob{Data: []byte("\x89PNG\r\n"), MIMEType: " Image/PNG ;q=1"}},
		"bin":       {InlineData: &genai.Blob{Data: make([]byte, 3000), MIMEType: "application/x-foo"}},
		"data.json": {InlineData: &genai.Blob{Data: []byte("{\"a\":\xe2\x82 1}\xff"), MIMEType: "application/x-foo"}},
		"plain":     {InlineData: &genai.Blob{Data: []byte("hello"), MIMEType: "text/plain; charset=utf-8"}},
		"nodata":    {InlineData: &genai.Blob{MIMEType: "application/x-foo"}},
		"uri":       {FileData: &genai.FileData{FileURI: "gs://b/o", MIMEType: "image/png"}},
		"longimg":   {InlineData: &genai.Blob{Data: byteRange(256), MIMEType: "image/jpeg", DisplayName: "multi\nline"}},
	}
}

// Expected results produced by google-adk 2.13's inject_session_state
// (Python 3.11) for the same state and artifacts.
var injectCases = []struct {
	template string
	arts     bool
	want     string
	wantErr  string // Python str(exception)
	wantType string // Python exception class
}{
	{"Hello {name}!", true, "Hello Ada!", "", ""},
	{"Hello {name}!", false, "Hello Ada!", "", ""},
	{"no braces", true, "no braces", "", ""},
	{"no braces", false, "no braces", "", ""},
	{"{n} {f} {g} {b} {none}|", true, "5 2.5 5.0 True |", "", ""},
	{"{n} {f} {g} {b} {none}|", false, "5 2.5 5.0 True |", "", ""},
	{"{jn}", true, "7", "", ""},
	{"{jn}", false, "7", "", ""},
	{"{lst}", true, "[1, 'a', None, True, 2.0, \"it's\"]", "", ""},
	{"{lst}", false, "[1, 'a', None, True, 2.0, \"it's\"]", "", ""},
	{"{d}", true, "{'a': 1, 'b': [1, 2], 'c': {'x': 'y'}}", "", ""},
	{"{d}", false, "{'a': 1, 'b': [1, 2], 'c': {'x': 'y'}}", "", ""},
	{"{app:theme} {user:lang} {temp:t}", true, "dark fr tmp", "", ""},
	{"{app:theme} {user:lang} {temp:t}", false, "dark fr tmp", "", ""},
	{"{missing?}x", true, "x", "", ""},
	{"{missing?}x", false, "x", "", ""},
	{"{ missing ? }", true, "{ missing ? }", "", ""},
	{"{ missing ? }", false, "{ missing ? }", "", ""},
	{"{{name}}", true, "Ada", "", ""},
	{"{{name}}", false, "Ada", "", ""},
	{"{{{name}}", true, "Ada", "", ""},
	{"{{{name}}", false, "Ada", "", ""},
	{"{name}}}", true, "Ada", "", ""},
	{"{name}}}", false, "Ada", "", ""},
	{"${name}", true, "${name}", "", ""},
	{"${name}", false, "${name}", "", ""},
	{"\\{name}", true, "\\{name}", "", ""},
	{"\\{name}", false, "\\{name}", "", ""},
	{"{{name}", true, "Ada", "", ""},
	{"{{name}", false, "Ada", "", ""},
	{"x{{{name}}}y", true, "xAday", "", ""},
	{"x{{{name}}}y", false, "xAday", "", ""},
	{"{not a var}", true, "{not a var}", "", ""},
	{"{not a var}", false, "{not a var}", "", ""},
	{"{}", true, "{}", "", ""},
	{"{}", false, "{}", "", ""},
	{"{\"a\": 1}", true, "{\"a\": 1}", "", ""},
	{"{\"a\": 1}", false, "{\"a\": 1}", "", ""},
	{"{a:b}", true, "{a:b}", "", ""},
	{"{a:b}", false, "{a:b}", "", ""},
	{"{app:}", true, "{app:}", "", ""},
	{"{app:}", false, "{app:}", "", ""},
	{"{app:1x}", true, "{app:1x}", "", ""},
	{"{app:1x}", false, "{app:1x}", "", ""},
	{"{foo:bar:baz}", true, "{foo:bar:baz}", "", ""},
	{"{foo:bar:baz}", false, "{foo:bar:baz}", "", ""},
	{"{1abc}", true, "{1abc}", "", ""},
	{"{1abc}", false, "{1abc}", "", ""},
	{"{?}", true, "{?}", "", ""},
	{"{?}", false, "{?}", "", ""},
	{"{ name }", true, "Ada", "", ""},
	{"{ name }", false, "Ada", "", ""},
	{"{\tname\n}", true, "Ada", "", ""},
	{"{\tname\n}", false, "Ada", "", ""},
	{"{\u001cname\u001c}", true, "Ada", "", ""},
	{"{\u001cname\u001c}", false, "Ada", "", ""},
	{"{café}", true, "ok", "", ""},
	{"{café}", false, "ok", "", ""},
	{"{missing}", true, "", "\"Context variable not found: `missing` in agent 'assistant'.\"", "KeyError"},
	{"{missing}", false, "", "\"Context variable not found: `missing` in agent 'assistant'.\"", "KeyError"},
	{"{a{name}c}", true, "{aAdac}", "", ""},
	{"{a{name}c}", false, "{aAdac}", "", ""},
	{"{name}{name}", true, "AdaAda", "", ""},
	{"{name}{name}", false, "AdaAda", "", ""},
	{"{name?}", true, "Ada", "", ""},
	{"{name?}", false, "Ada", "", ""},
	{"{temp:missing?}", true, "", "", ""},
	{"{temp:missing?}", false, "", "", ""},
	{"{user:missing}", true, "", "\"Context variable not found: `user:missing` in agent 'assistant'.\"", "KeyError"},
	{"{user:missing}", false, "", "\"Context variable not found: `user:missing` in agent 'assistant'.\"", "KeyError"},
	{"{empty}|{uni}|{nl}", true, "|héllo|a\nb", "", ""},
	{"{empty}|{uni}|{nl}", false, "|héllo|a\nb", "", ""},
	{"{big} {small} {neg}", true, "1e+16 1e-05 -0.0", "", ""},
	{"{big} {small} {neg}", false, "1e+16 1e-05 -0.0", "", ""},
	{"{q}", true, "say \"hi\"", "", ""},
	{"{q}", false, "say \"hi\"", "", ""},
	{"{mix}", true, "['a\\'b\"c', '\\\\', '\\t\\x00\\x7f\\x85é\\u200b😀']", "", ""},
	{"{mix}", false, "['a\\'b\"c', '\\\\', '\\t\\x00\\x7f\\x85é\\u200b😀']", "", ""},
	{"{bs}", true, "b\"\\x00ab'\"", "", ""},
	{"{bs}", false, "b\"\\x00ab'\"", "", ""},
	{"{nested}", true, "{'e': {}, 'k': [{'z': None}], 'l': []}", "", ""},
	{"{nested}", false, "{'e': {}, 'k': [{'z': None}], 'l': []}", "", ""},
	{"{artifact.notes.txt}", true, "my notes", "", ""},
	{"{artifact.notes.txt}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.none?}", true, "", "", ""},
	{"{artifact.none?}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.none}", true, "", "\"Artifact 'none' not found in agent 'assistant'.\"", "KeyError"},
	{"{artifact.none}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.img}", true, "media_resolution=None code_execution_result=None executable_code=None file_data=None function_call=None function_response=None inline_data=Blob(\n  data=b'\\x89PNG\\r\\n',\n  mime_type='image/png'\n) text=None thought=None thought_signature=None video_metadata=None tool_call=None tool_response=None part_metadata=None audio_transcription=None media_processing=None speech_metadata=None", "", ""},
	{"{artifact.img}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.IMG2}", true, "media_resolution=None code_execution_result=None executable_code=None file_data=None function_call=None function_response=None inline_data=Blob(\n  data=b'\\x89PNG\\r\\n',\n  mime_type=' Image/PNG ;q=1'\n) text=None thought=None thought_signature=None video_metadata=None tool_call=None tool_response=None part_metadata=None audio_transcription=None media_processing=None speech_metadata=None", "", ""},
	{"{artifact.IMG2}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.bin}", true, "[Binary artifact: bin, type: application/x-foo, size: 2.9 KB. Content cannot be displayed inline.]", "", ""},
	{"{artifact.bin}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.data.json}", true, "{\"a\":� 1}�", "", ""},
	{"{artifact.data.json}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.plain}", true, "hello", "", ""},
	{"{artifact.plain}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.nodata}", true, "[Artifact: nodata, type: application/x-foo. No inline data was provided.]", "", ""},
	{"{artifact.nodata}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.uri}", true, "media_resolution=None code_execution_result=None executable_code=None file_data=FileData(\n  file_uri='gs://b/o',\n  mime_type='image/png'\n) function_call=None function_response=None inline_data=None text=None thought=None thought_signature=None video_metadata=None tool_call=None tool_response=None part_metadata=None audio_transcription=None media_processing=None speech_metadata=None", "", ""},
	{"{artifact.uri}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.longimg}", true, "media_resolution=None code_execution_result=None executable_code=None file_data=None function_call=None function_response=None inline_data=Blob(\n  data=b'\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\t\\n\\x0b\\x0c\\r\\x0e\\x0f\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f !\"#$%&\\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`...',\n  display_name=\"\"\"multi\nline\"\"\",\n  mime_type='image/jpeg'\n) text=None thought=None thought_signature=None video_metadata=None tool_call=None tool_response=None part_metadata=None audio_transcription=None media_processing=None speech_metadata=None", "", ""},
	{"{artifact.longimg}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{ artifact.notes.txt ? }", true, "", "", ""},
	{"{ artifact.notes.txt ? }", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{artifact.}", true, "", "\"Artifact '' not found in agent 'assistant'.\"", "KeyError"},
	{"{artifact.}", false, "", "Artifact service is not initialized.", "ValueError"},
	{"{name} {missing} {artifact.none}", true, "", "\"Context variable not found: `missing` in agent 'assistant'.\"", "KeyError"},
	{"{name} {missing} {artifact.none}", false, "", "\"Context variable not found: `missing` in agent 'assistant'.\"", "KeyError"},
	{"{app:missing?}{name?}", true, "Ada", "", ""},
	{"{app:missing?}{name?}", false, "Ada", "", ""},
	{"{name}{", true, "Ada{", "", ""},
	{"{name}{", false, "Ada{", "", ""},
	{"}{name", true, "}{name", "", ""},
	{"}{name", false, "}{name", "", ""},
	{"{{}}", true, "{{}}", "", ""},
	{"{{}}", false, "{{}}", "", ""},
	{"{na me}", true, "{na me}", "", ""},
	{"{na me}", false, "{na me}", "", ""},
	{"{_x?}", true, "", "", ""},
	{"{_x?}", false, "", "", ""},
	{"{__?}", true, "", "", ""},
	{"{__?}", false, "", "", ""},
	{"{ok}}}}{name}", true, "", "\"Context variable not found: `ok` in agent 'assistant'.\"", "KeyError"},
	{"{ok}}}}{name}", false, "", "\"Context variable not found: `ok` in agent 'assistant'.\"", "KeyError"},
	{"{name　}", true, "Ada", "", ""},
	{"{name　}", false, "Ada", "", ""},
	{"{name​}", true, "{name​}", "", ""},
	{"{name​}", false, "{name​}", "", ""},
	{"{Ⅻ}", true, "", "\"Context variable not found: `Ⅻ` in agent 'assistant'.\"", "KeyError"},
	{"{Ⅻ}", false, "", "\"Context variable not found: `Ⅻ` in agent 'assistant'.\"", "KeyError"},
	{"{x·y}", true, "", "\"Context variable not found: `x·y` in agent 'assistant'.\"", "KeyError"},
	{"{x·y}", false, "", "\"Context variable not found: `x·y` in agent 'assistant'.\"", "KeyError"},
}

func TestInject(t *testing.T) {
	for _, c := range injectCases {
		src := &fakeSource{agent: "assistant", state: testState()}
		if c.arts {
			src.arts = testArtifacts()
		}
		got, err := Inject(context.Background(), c.template, src)
		if c.wantErr != "" {
			if err == nil {
				t.Errorf("Inject(%q, arts=%v) = %q, want error %s", c.template, c.arts, got, c.wantErr)
				continue
			}
			if err.Error() != c.wantErr {
				t.Errorf("Inject(%q, arts=%v) error = %s, want %s", c.template, c.arts, err, c.wantErr)
			}
			var pe PythonError
			if !errors.As(err, &pe) || pe.PythonType() != c.wantType {
				t.Errorf("Inject(%q, arts=%v) error type = %T, want Python %s", c.template, c.arts, err, c.wantType)
			}
			continue
		}
		if err != nil {
			t.Errorf("Inject(%q, arts=%v) error %v", c.template, c.arts, err)
			continue
		}
		if got != c.want {
			t.Errorf("Inject(%q, arts=%v) =\n%q\nwant\n%q", c.template, c.arts, got, c.want)
		}
	}
}
