package conformance

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// The trace shows engine values the way the Python runner shows google-adk's
// pydantic objects: model_dump(mode="json", exclude_none=True, by_alias=False).
// pyDump walks Go values by reflection: struct fields are named by their JSON
// tag turned into snake_case (the Python field name), unset (zero) fields are
// left out as None would be, map keys are data and kept as they are, and
// every map and slice is copied, so a dump taken when an event is yielded is
// a snapshot.

var jsonNumberType = reflect.TypeFor[json.Number]()
var timeType = reflect.TypeFor[time.Time]()

// toolConfirmationType is dumped with its non-optional fields (hint,
// confirmed) even when zero, as pydantic dumps ToolConfirmation.
var toolConfirmationType = reflect.TypeFor[session.ToolConfirmation]()

func pyDump(v any) any { return dumpValue(reflect.ValueOf(v)) }

var partType = reflect.TypeOf(genai.Part{})

func dumpValue(rv reflect.Value) any {
	if !rv.IsValid() {
		return nil
	}
	if rv.Type() == jsonNumberType {
		return json.Number(rv.String())
	}
	switch rv.Kind() {
	case reflect.Interface, reflect.Pointer:
		if rv.IsNil() {
			return nil
		}
		return dumpValue(rv.Elem())
	case reflect.Struct:
		if rv.Type() == timeType {
			return nil
		}
		if rv.Type() == toolConfirmationType {
			c := rv.Interface().(session.ToolConfirmation)
			return confirmationEntry(&c)
		}
		if rv.Type() == partType && rv.IsZero() {
			// A part with nothing set is an empty text part (genai.Part's
			// text is omitempty): google-adk's {"text": ""}.
			return map[string]any{"text": ""}
		}
		m := map[string]any{}
		dumpStructInto(m, rv)
		return m
	case reflect.Map:
		if rv.IsNil() {
			return nil
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[fmt.Sprint(it.Key().Interface())] = dumpValue(it.Value())
		}
		return m
	case reflect.Slice:
		if rv.IsNil() {
			return nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return base64.URLEncoding.EncodeToString(rv.Bytes())
		}
		fallthrough
	case reflect.Array:
		out := make([]any, rv.Len())
		for i := range rv.Len() {
			out[i] = dumpValue(rv.Index(i))
		}
		return out
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(rv.Uint())
	case reflect.Float32:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(rv.Float(), 'g', -1, 32), 64)
		return f
	case reflect.Float64:
		return rv.Float()
	}
	return map[string]any{"$repr": rv.Type().String()}
}

func dumpStructInto(m map[string]any, rv reflect.Value) {
	t := rv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		fv := rv.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			dumpStructInto(m, fv)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if fv.IsZero() {
			continue
		}
		d := dumpValue(fv)
		if d == nil {
			continue
		}
		m[snakeCase(name)] = d
	}
}

// snakeCase turns a JSON (camelCase) field name into the Python one.
func snakeCase(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			// An acronym (MIMEType) stays one word until its last capital.
			if i > 0 && (!unicode.IsUpper(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func dumpContent(c *genai.Content) any {
	if c == nil {
		return nil
	}
	return pyDump(c)
}

// dumpEvent is the trace form of an event (FORMAT.md §2.3).
func dumpEvent(ev *session.Event) map[string]any {
	d, _ := pyDump(ev.Response).(map[string]any)
	if d == nil {
		d = map[string]any{}
	}
	if ev.Aggregated && !ev.Partial {
		d["partial"] = false // google-adk's explicit partial=False
	}
	d["author"] = ev.Author
	d["id"] = ev.ID
	d["invocation_id"] = ev.InvocationID
	if ev.Branch != "" {
		d["branch"] = ev.Branch
	}
	if ni := ev.NodeInfo; ni != nil && (ni.Path != "" || len(ni.OutputFor) > 0 || ni.MessageAsOutput) {
		n := map[string]any{}
		if ni.Path != "" {
			n["path"] = ni.Path
		}
		if len(ni.OutputFor) > 0 {
			of := make([]any, len(ni.OutputFor))
			for i, p := range ni.OutputFor {
				of[i] = p
			}
			n["output_for"] = of
		}
		if ni.MessageAsOutput {
			n["message_as_output"] = true
		}
		d["node_info"] = n
	}
	if ev.IsolationScope != "" {
		d["isolation_scope"] = ev.IsolationScope
	}
	if ev.Output != nil {
		d["output"] = pyDump(ev.Output)
	}
	if len(ev.LongRunningToolIDs) > 0 {
		ids := make([]any, 0, len(ev.LongRunningToolIDs))
		s := slices.Clone(ev.LongRunningToolIDs)
		sort.Strings(s)
		for _, id := range s {
			ids = append(ids, id)
		}
		d["long_running_tool_ids"] = ids
	}
	if a, ok := pyDump(ev.Actions).(map[string]any); ok {
		a = pruneEmpty(a)
		if ev.Actions.SkipSummarizationSet && !ev.Actions.SkipSummarization {
			a["skip_summarization"] = false // google-adk's explicit False
		}
		if len(a) > 0 {
			d["actions"] = a
		}
	}
	return d
}

// pruneEmpty drops entries whose value is null, {}, [] or "".
func pruneEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case string:
			if x == "" {
				delete(m, k)
			}
		case map[string]any:
			if len(x) == 0 {
				delete(m, k)
			}
		case []any:
			if len(x) == 0 {
				delete(m, k)
			}
		}
	}
	return m
}

// dumpRequest is the trace form of a model request (FORMAT.md §2.4).
// agentNames are the scenario's agents, whose tools (task and single_turn
// sub-agents) declare a description even when it is empty; schemaAgents
// are those with an output_schema.
func dumpRequest(req *model.Request, agentNames, schemaAgents map[string]bool) map[string]any {
	out := map[string]any{"model": req.Model}
	contents := make([]any, 0, len(req.Contents))
	for _, c := range req.Contents {
		contents = append(contents, dumpContent(c))
	}
	out["contents"] = contents
	if req.Config == nil {
		return out
	}
	if si := req.Config.SystemInstruction; si != nil {
		texts := make([]string, 0, len(si.Parts))
		for _, p := range si.Parts {
			if p != nil {
				texts = append(texts, p.Text)
			}
		}
		out["system_instruction"] = strings.Join(texts, "\n")
	}
	var tools []any
	for _, t := range req.Config.Tools {
		d, ok := pyDump(t).(map[string]any)
		if !ok {
			continue
		}
		if decls, ok := d["function_declarations"].([]any); ok && len(decls) > 0 {
			// google-adk's agent tools (an agent offered to its parent's
			// model, named after it) always declare the agent's
			// description, "" included; Go's zero value drops an empty one,
			// so it is put back.
			for _, decl := range decls {
				if m, ok := decl.(map[string]any); ok {
					if _, has := m["description"]; !has && agentNames[declName(m)] {
						m["description"] = ""
					}
				}
			}
			sort.SliceStable(decls, func(i, j int) bool {
				return declName(decls[i]) < declName(decls[j])
			})
		}
		tools = append(tools, d)
	}
	if len(tools) > 0 {
		out["tools"] = tools
	}
	cfg := *req.Config
	cfg.SystemInstruction = nil
	cfg.Tools = nil
	schema, fromOutputSchema := req.Config.ResponseJsonSchema.(map[string]any)
	// A response_json_schema of an agent without output_schema is its
	// generate_content_config's, which both runtimes pass through as is.
	fromOutputSchema = fromOutputSchema && schemaAgents[req.Config.Labels["adk_agent_name"]]
	if fromOutputSchema {
		cfg.ResponseJsonSchema = nil
	}
	d, _ := pyDump(&cfg).(map[string]any)
	if fromOutputSchema {
		// google-adk sets the output schema as a pydantic class, which the
		// Python trace shows as its name and JSON schema; adkhost sends the
		// same JSON schema as responseJsonSchema. Both are rendered alike so
		// the schemas themselves are compared.
		if d == nil {
			d = map[string]any{}
		}
		title, _ := schema["title"].(string)
		d["response_schema"] = map[string]any{"$pydantic_model": title, "json_schema": pyDump(schema)}
	}
	if len(d) > 0 {
		out["config"] = d
	}
	return out
}

func declName(d any) string {
	m, _ := d.(map[string]any)
	s, _ := m["name"].(string)
	return s
}
