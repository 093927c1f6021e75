package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/adkhost/adkhost/internal/pyfmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Trace values are plain Go values: nil, bool, int64 (and other ints),
// float64, string, json.Number, []any and map[string]any. pyJSON writes
// them exactly as Python's
//
//	json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False)
//
// does (FORMAT.md §2.1). Integers and floats stay distinct: an int64 is
// written as an int, a float64 in Python's repr form (2.0, 1e-05).

func pyJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writePyJSON(&b, v, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeIndent(b *bytes.Buffer, n int) {
	b.WriteByte('\n')
	for range n {
		b.WriteString("  ")
	}
}

func writePyJSON(b *bytes.Buffer, v any, depth int) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		b.WriteString(pyfmt.JSONString(x))
	case int:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		b.WriteString(pyFloatRepr(x))
	case float32:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		b.WriteString(pyFloatRepr(f))
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return err
			}
			b.WriteString(pyFloatRepr(f))
		} else {
			b.WriteString(s)
		}
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeIndent(b, depth+1)
			if err := writePyJSON(b, it, depth+1); err != nil {
				return err
			}
		}
		writeIndent(b, depth)
		b.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // byte order of UTF-8 = code point order
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeIndent(b, depth+1)
			b.WriteString(pyfmt.JSONString(k))
			b.WriteString(": ")
			if err := writePyJSON(b, x[k], depth+1); err != nil {
				return err
			}
		}
		writeIndent(b, depth)
		b.WriteByte('}')
	default:
		// Anything else (typed maps and slices, structs) goes through the
		// generic dumper first.
		d := pyDump(v)
		if reflect.TypeOf(d) == reflect.TypeOf(v) {
			return fmt.Errorf("trace: cannot encode %T", v)
		}
		return writePyJSON(b, d, depth)
	}
	return nil
}

// pyFloatRepr is json.dumps of a float: Python's repr(float), with the
// names json uses for the non-finite values.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return pyfmt.FloatRepr(f)
}

var idRe = regexp.MustCompile(`(adk-|e-)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`)

// normalizeIDs replaces generated ids by placeholders in order of first
// appearance, per category (FORMAT.md §2.7).
func normalizeIDs(text []byte, eventIDs map[string]bool) []byte {
	tables := map[string]map[string]string{"adk": {}, "inv": {}, "evt": {}, "uuid": {}}
	return idRe.ReplaceAllFunc(text, func(m []byte) []byte {
		sub := idRe.FindSubmatch(m)
		prefix, u := string(sub[1]), string(sub[2])
		var kind string
		switch {
		case prefix == "adk-":
			kind = "adk"
		case prefix == "e-":
			kind = "inv"
		case eventIDs[u]:
			kind = "evt"
		default:
			kind = "uuid"
		}
		t := tables[kind]
		p, ok := t[u]
		if !ok {
			p = fmt.Sprintf("%s-%d", kind, len(t)+1)
			t[u] = p
		}
		return []byte(p)
	})
}
