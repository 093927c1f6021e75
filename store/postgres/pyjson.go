package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/adkhost/adkhost/engine/session"
)

// google-adk stores an event as Event.model_dump(exclude_none=True,
// mode="json"): the fields of its pydantic models by their snake_case
// names, bytes in URL-safe base64. adkhost's Event encodes to google-adk's
// camelCase wire format (the models' aliases). The two differ only in the
// names of model fields and in the base64 alphabet; the keys of free-form
// dicts (state deltas, function arguments, custom metadata) are the same
// in both. So the conversion walks the JSON along the Go type of the
// event: a key is renamed only where the type says it names a struct
// field, and values of map and interface types are copied as they are.

var eventType = reflect.TypeFor[session.Event]()

// maxJSONDepth bounds the walk; deeper values are copied as they are.
const maxJSONDepth = 64

// eventToPython encodes e as google-adk's event_data (python), and in
// adkhost's own JSON (camel), which it is made from.
func eventToPython(e *session.Event) (python, camel []byte, err error) {
	camel, err = json.Marshal(e)
	if err != nil {
		return nil, nil, err
	}
	python, err = rewrite(make([]byte, 0, len(camel)+len(camel)/8), camel, eventType, true)
	return python, camel, err
}

// eventFromPython decodes google-adk's event_data (snake_case keys, or
// camelCase, which pydantic accepts too) into an event. Its dicts print
// sorted, as they would from any jsonb: the order jsonb keeps (shortest
// key first) is not the one they were written in.
func eventFromPython(data []byte) (*session.Event, error) {
	b, err := rewrite(make([]byte, 0, len(data)), data, eventType, false)
	if err != nil {
		return nil, err
	}
	e := new(session.Event)
	if err := json.Unmarshal(b, e); err != nil {
		return nil, err
	}
	e.KeyOrder = nil
	return e, nil
}

type fieldInfo struct {
	json, python string
	typ          reflect.Type
}

type structInfo struct {
	// byJSON and byPython find a field by either name.
	byJSON, byPython map[string]*fieldInfo
}

var structCache sync.Map // reflect.Type -> *structInfo

func structFields(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byJSON: map[string]*fieldInfo{}, byPython: map[string]*fieldInfo{}}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && tag == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
					continue
				}
			}
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fi := &fieldInfo{json: name, python: snakeCase(name), typ: f.Type}
			si.byJSON[fi.json] = fi
			si.byPython[fi.python] = fi
		}
	}
	add(t)
	structCache.Store(t, si)
	return si
}

// snakeCase turns a camelCase JSON name into the Python field name
// ("longRunningToolIds" to "long_running_tool_ids").
func snakeCase(s string) string {
	var sb strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				sb.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

var bytesType = reflect.TypeFor[[]byte]()

// base64Alphabet turns standard base64 into URL-safe (pydantic's
// ser_json_bytes="base64") or back (Go's encoding/json).
func base64Alphabet(s string, toURL bool) string {
	if toURL {
		return strings.NewReplacer("+", "-", "/", "_").Replace(s)
	}
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	if n := len(s) % 4; n != 0 {
		s += strings.Repeat("=", 4-n)
	}
	return s
}

// checkNUL refuses JSON holding U+0000 in a string, which PostgreSQL's
// jsonb cannot store, with an error that says so instead of the server's.
func checkNUL(b []byte, what string) error {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(`u0000`))
		if j < 0 {
			return nil
		}
		j += i
		// An escape only if preceded by an odd number of backslashes.
		n := 0
		for k := j - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 1 {
			return fmt.Errorf("%s holds a NUL character (\\u0000), which PostgreSQL's jsonb cannot store", what)
		}
		i = j + 5
	}
}
