package session

import (
	"encoding/json"
	"reflect"
	"sync"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// EventSize approximates the bytes e holds, about the size of its JSON:
// strings and byte slices by their length, every other scalar a few
// bytes, plus a little per key and element. It walks every exported
// field, so that no field of an event (a part's inline data, grounding
// metadata, a replacement's custom metadata) escapes a bound built on it;
// it allocates nothing for the maps, lists and scalars that tool results
// and state are made of. It is meant for bounds on what a run produces,
// not for exact accounting: escapes and number formatting are not
// counted.
func EventSize(e *Event) int64 {
	if e == nil {
		return 0
	}
	return eventSize(e, 1)
}

// PartSize is EventSize for one part of a content.
func PartSize(p *genai.Part) int64 {
	if p == nil {
		return 0
	}
	return partSize(p, 1)
}

// The typed walk below measures exactly what reflectSize would of the
// types every event is made of (Event, its Response and Actions, Content,
// Part, function calls and responses, blobs) without reflection, which
// cost more than encoding the event; the fields events rarely hold go
// through reflectSize. Each function takes the depth of its struct's
// fields. TestEventSizeTyped fills every exported field of these types
// (genai's new fields included, whenever genai is updated) and checks the
// two walks agree, so no field is left unmeasured.

func eventSize(e *Event, d int) int64 {
	n := responseSize(&e.Response, d+1) + strSize(e.ID) + strSize(e.InvocationID) +
		strSize(e.Author) + strSize(e.Branch) + actionsSize(&e.Actions, d+1) +
		stringsSize(e.LongRunningToolIDs) + strSize(e.IsolationScope)
	if e.NodeInfo != nil {
		n += strSize(e.NodeInfo.Path) + stringsSize(e.NodeInfo.OutputFor) + boolSize(e.NodeInfo.MessageAsOutput)
	}
	if e.Output != nil {
		n += valueSize(e.Output, d+1)
	}
	return n
}

func responseSize(r *model.Response, d int) int64 {
	n := boolSize(r.Partial) + boolSize(r.Aggregated) + boolSize(r.TurnComplete) +
		strSize(string(r.FinishReason)) + strSize(r.ErrorCode) + strSize(r.ErrorMessage) +
		boolSize(r.Interrupted) + mapSize(r.CustomMetadata, d) + numSize(r.AvgLogprobs != 0) +
		strSize(r.InteractionID) + strSize(r.ModelVersion)
	if r.Content != nil {
		n += contentSize(r.Content, d+2)
	}
	if len(r.KeyOrder) > 0 {
		n += reflectSize(reflect.ValueOf(r.KeyOrder), d)
	}
	return n + ptrSize(r.GroundingMetadata, d) + ptrSize(r.UsageMetadata, d) +
		ptrSize(r.InputTranscription, d) + ptrSize(r.OutputTranscription, d) +
		ptrSize(r.LogprobsResult, d) + ptrSize(r.CacheMetadata, d) + ptrSize(r.CitationMetadata, d)
}

func actionsSize(a *EventActions, d int) int64 {
	n := boolSize(a.SkipSummarization) + boolSize(a.SkipSummarizationSet) + mapSize(a.StateDelta, d) +
		strSize(a.TransferToAgent) + strSize(a.TransferReason) + boolSize(a.Escalate) +
		mapSize(a.RequestedAuthConfigs, d) + boolSize(a.EndOfAgent) + mapSize(a.AgentState, d) +
		strSize(a.RewindBeforeInvocationID) + ptrSize(a.Compaction, d)
	if len(a.ArtifactDelta) > 0 {
		n += 2
		for k, v := range a.ArtifactDelta {
			n += 4 + strSize(k) + numSize(v != 0)
		}
	}
	if len(a.StateKeyOrder) > 0 {
		n += reflectSize(reflect.ValueOf(a.StateKeyOrder), d)
	}
	if len(a.RequestedToolConfirmations) > 0 {
		n += reflectSize(reflect.ValueOf(a.RequestedToolConfirmations), d)
	}
	if a.SetModelResponse != nil {
		n += valueSize(a.SetModelResponse, d+1)
	}
	return n
}

func contentSize(c *genai.Content, d int) int64 {
	n := strSize(c.Role)
	for _, p := range c.Parts {
		n++
		if p != nil {
			n += partSize(p, d+3)
		}
	}
	return n
}

func partSize(p *genai.Part, d int) int64 {
	n := strSize(p.Text) + boolSize(p.Thought) + mapSize(p.PartMetadata, d) +
		strSize(string(p.MediaProcessing)) + int64(len(p.ThoughtSignature))*4/3 + 2
	if c := p.FunctionCall; c != nil {
		n += strSize(c.ID) + mapSize(c.Args, d+2) + strSize(c.Name) + ptrSize(c.WillContinue, d+2)
		if len(c.PartialArgs) > 0 {
			n += reflectSize(reflect.ValueOf(c.PartialArgs), d+2)
		}
	}
	if r := p.FunctionResponse; r != nil {
		n += ptrSize(r.WillContinue, d+2) + strSize(string(r.Scheduling)) + strSize(r.ID) +
			strSize(r.Name) + mapSize(r.Response, d+2)
		if len(r.Parts) > 0 {
			n += reflectSize(reflect.ValueOf(r.Parts), d+2)
		}
	}
	if b := p.InlineData; b != nil {
		n += int64(len(b.Data))*4/3 + 2 + strSize(b.DisplayName) + strSize(b.MIMEType)
	}
	return n + ptrSize(p.MediaResolution, d) + ptrSize(p.CodeExecutionResult, d) +
		ptrSize(p.ExecutableCode, d) + ptrSize(p.FileData, d) + ptrSize(p.VideoMetadata, d) +
		ptrSize(p.ToolCall, d) + ptrSize(p.ToolResponse, d) + ptrSize(p.AudioTranscription, d) +
		ptrSize(p.SpeechMetadata, d)
}

// ptrSize is reflectSize of a pointer field at depth d.
func ptrSize[T any](p *T, d int) int64 {
	if p == nil {
		return 0
	}
	return reflectSize(reflect.ValueOf(p).Elem(), d+1)
}

// mapSize is reflectSize of a map[string]any field at depth d.
func mapSize(m map[string]any, d int) int64 {
	if len(m) == 0 {
		return 0
	}
	return valueSize(m, d)
}

func stringsSize(s []string) int64 {
	var n int64
	for _, x := range s {
		n += 1 + strSize(x)
	}
	return n
}

func strSize(s string) int64 {
	if s == "" {
		return 0
	}
	return int64(len(s)) + 2
}

func boolSize(b bool) int64 {
	if b {
		return 5
	}
	return 0
}

func numSize(nonzero bool) int64 {
	if nonzero {
		return 8
	}
	return 0
}

// ValueSize is EventSize for one value (a tool result, a state value).
func ValueSize(v any) int64 { return valueSize(v, 0) }

// maxSizeDepth stops the walk of a value nested deeper (a cyclic Go
// value, which cannot be stored anyway): what lies below is not counted.
const maxSizeDepth = 1000

var (
	anySliceType = reflect.TypeFor[[]any]()
	anyMapType   = reflect.TypeFor[map[string]any]()
)

func valueSize(v any, depth int) int64 {
	if depth > maxSizeDepth {
		return 0
	}
	switch x := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(x)) + 2
	case bool:
		return 5
	case float64, float32, int, int64, int32, uint64, uint32:
		return 8
	case json.Number:
		return int64(len(x))
	case json.RawMessage:
		return int64(len(x))
	case []byte:
		return int64(len(x))*4/3 + 2 // base64
	case map[string]any:
		n := int64(2)
		for k, e := range x {
			n += int64(len(k)) + 4 + valueSize(e, depth+1)
		}
		return n
	case []any:
		n := int64(2)
		for _, e := range x {
			n += 1 + valueSize(e, depth+1)
		}
		return n
	}
	return reflectSize(reflect.ValueOf(v), depth)
}

func reflectSize(v reflect.Value, depth int) int64 {
	if depth > maxSizeDepth || !v.IsValid() {
		return 0
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return reflectSize(v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		if !v.CanInterface() {
			return reflectSize(v.Elem(), depth+1)
		}
		return valueSize(v.Interface(), depth+1)
	case reflect.Struct:
		var n int64
		for _, i := range exportedFields(v.Type()) {
			n += reflectSize(v.Field(i), depth+1)
		}
		return n
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return int64(v.Len())*4/3 + 2
		}
		if v.Type() == anySliceType && v.CanInterface() {
			return valueSize(v.Interface(), depth)
		}
		n := int64(0)
		for i := range v.Len() {
			n += 1 + reflectSize(v.Index(i), depth+1)
		}
		return n
	case reflect.Map:
		if v.Len() == 0 {
			return 0
		}
		if v.Type() == anyMapType && v.CanInterface() {
			return valueSize(v.Interface(), depth)
		}
		n := int64(2)
		for it := v.MapRange(); it.Next(); {
			n += 4 + reflectSize(it.Key(), depth+1) + reflectSize(it.Value(), depth+1)
		}
		return n
	case reflect.String:
		if v.Len() == 0 {
			return 0 // omitted, as most of an event's empty fields are
		}
		return int64(v.Len()) + 2
	case reflect.Bool:
		if !v.Bool() {
			return 0
		}
		return 5
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		if v.IsZero() {
			return 0
		}
		return 8
	}
	return 0
}

// fieldCache holds exportedFields' answers: a type's fields are listed
// once per process.
var fieldCache sync.Map // reflect.Type -> []int

// exportedFields lists the indexes of t's exported fields.
func exportedFields(t reflect.Type) []int {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]int)
	}
	var f []int
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			f = append(f, i)
		}
	}
	fieldCache.Store(t, f)
	return f
}
