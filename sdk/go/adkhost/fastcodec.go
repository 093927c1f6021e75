package adkhost

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Tool arguments and results without encoding/json. Compiled to
// WebAssembly, encoding/json's scanner and reflection made decoding a
// two-field argument struct and encoding a small result most of a warm
// tool call. At registration, Tool builds a plan for its argument and
// result types from reflection once; each call then reads and writes
// fields at fixed offsets.
//
// The plans cover the common shapes: arguments that are a struct of
// strings, numbers and booleans; results built from structs, pointers,
// slices, strings, numbers and booleans. A type outside them (embedded
// fields, maps, interfaces, []byte, a custom (Un)marshaler, the ",string"
// or ",omitzero" options, ...) has no plan and goes to encoding/json. So
// does any input the decoder is unsure of (an escape in a string, a key
// that is not exactly a field name, a value of the wrong type), and any
// value the encoder cannot write as encoding/json would (NaN, infinity):
// the result, errors included, is the same as encoding/json's.

var (
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// customJSON reports whether encoding/json would call a method of t or *t.
func customJSON(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, i := range []reflect.Type{jsonMarshaler, textMarshaler, jsonUnmarshaler, textUnmarshaler} {
		if t.Implements(i) || pt.Implements(i) {
			return true
		}
	}
	return false
}

// jsonField is an exported field as encoding/json sees it.
type jsonField struct {
	name      string
	index     int
	omitEmpty bool
}

// plainJSONFields returns the fields encoding/json encodes and decodes for the
// struct type t, or false if the plans do not cover t: embedded fields,
// options other than omitempty, names that are not plain ASCII, or two
// names that encoding/json could confuse.
func plainJSONFields(t reflect.Type) ([]jsonField, bool) {
	var fields []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, false
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		jf := jsonField{name: name, index: i}
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "":
			case "omitempty":
				jf.omitEmpty = true
			default:
				return nil, false
			}
		}
		if jf.name == "" {
			jf.name = f.Name
		}
		if !plainName(jf.name) {
			return nil, false
		}
		for _, o := range fields {
			if strings.EqualFold(o.name, jf.name) {
				return nil, false
			}
		}
		fields = append(fields, jf)
	}
	return fields, true
}

// plainName reports whether a field name is letters, digits, '_' and '-'
// in ASCII: encoding/json takes such a tag as is, and matches it against
// keys by ASCII case folding only.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return s != ""
}

// argsDecoder decodes a JSON object into a struct of scalars.
type argsDecoder struct {
	fields []argsField
}

type argsField struct {
	name string
	off  uintptr
	kind reflect.Kind
}

// newArgsDecoder returns the decoder of the struct type t, or nil if t is
// not a struct of strings, numbers and booleans.
func newArgsDecoder(t reflect.Type) *argsDecoder {
	if t.Kind() != reflect.Struct || customJSON(t) {
		return nil
	}
	fields, ok := plainJSONFields(t)
	if !ok {
		return nil
	}
	d := &argsDecoder{}
	for _, jf := range fields {
		f := t.Field(jf.index)
		if !scalarKind(f.Type.Kind()) || customJSON(f.Type) {
			return nil
		}
		d.fields = append(d.fields, argsField{name: jf.name, off: f.Offset, kind: f.Type.Kind()})
	}
	return d
}

func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// decode decodes raw into the zero struct at p and reports success, and
// which fields it set to a value other than null (bit i: fields[i], for
// the first 64). On false, p holds partial values: the caller zeroes it
// and uses encoding/json. Strings are taken from strs.
func (d *argsDecoder) decode(strs *inputStrings, raw []byte, p unsafe.Pointer) (set uint64, ok bool) {
	obj, ok := readObject(raw, 0)
	if !ok {
		return 0, false
	}
	for {
		key, done, ok := obj.next()
		if !ok {
			return 0, false
		}
		if done {
			return set, skipSpace(raw, obj.i) == len(raw)
		}
		v, ok := obj.value()
		if !ok {
			return 0, false
		}
		i := d.field(key)
		if i < 0 {
			return 0, false // unknown, or a case-insensitive match
		}
		if string(v) == "null" {
			continue
		}
		f := &d.fields[i]
		if !f.set(strs, unsafe.Add(p, f.off), v) {
			return 0, false
		}
		set |= 1 << (i & 63)
	}
}

// field returns the index of the field named key, or -1.
func (d *argsDecoder) field(key []byte) int {
	for i := range d.fields {
		if d.fields[i].name == string(key) {
			return i
		}
	}
	return -1
}

// fieldsOf returns the index of the field of each of names, or nil if d
// is nil, has more fields than decode's set reports, or lacks one of them.
func (d *argsDecoder) fieldsOf(names []string) []int {
	if d == nil || len(d.fields) > 64 {
		return nil
	}
	idx := make([]int, len(names))
	for i, n := range names {
		if idx[i] = d.field([]byte(n)); idx[i] < 0 {
			return nil
		}
	}
	return idx
}

func (f *argsField) set(strs *inputStrings, p unsafe.Pointer, v []byte) bool {
	switch f.kind {
	case reflect.String:
		if end, plain := scanString(v, 0); v[0] == '"' && plain && end == len(v) {
			*(*string)(p) = strs.sub(v) // ASCII without escapes
			return true
		}
		s, ok := strs.plain(v) // false for invalid UTF-8, which encoding/json replaces
		if !ok {
			return false
		}
		*(*string)(p) = s
		return true
	case reflect.Bool:
		switch string(v) {
		case "true":
			*(*bool)(p) = true
		case "false":
			*(*bool)(p) = false
		default:
			return false
		}
		return true
	}
	if !jsonNumber(v) {
		return false
	}
	switch f.kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := parseInt(v, intBits(f.kind))
		if !ok {
			return false
		}
		switch f.kind {
		case reflect.Int:
			*(*int)(p) = int(n)
		case reflect.Int8:
			*(*int8)(p) = int8(n)
		case reflect.Int16:
			*(*int16)(p) = int16(n)
		case reflect.Int32:
			*(*int32)(p) = int32(n)
		default:
			*(*int64)(p) = n
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := parseUint(v, intBits(f.kind))
		if !ok {
			return false
		}
		switch f.kind {
		case reflect.Uint:
			*(*uint)(p) = uint(n)
		case reflect.Uint8:
			*(*uint8)(p) = uint8(n)
		case reflect.Uint16:
			*(*uint16)(p) = uint16(n)
		case reflect.Uint32:
			*(*uint32)(p) = uint32(n)
		default:
			*(*uint64)(p) = n
		}
	case reflect.Float32:
		x, err := strconv.ParseFloat(string(v), 32)
		if err != nil {
			return false
		}
		*(*float32)(p) = float32(x)
	case reflect.Float64:
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return false
		}
		*(*float64)(p) = x
	default:
		return false
	}
	return true
}

// parseInt is strconv.ParseInt(string(v), 10, bits) for a JSON number v,
// reporting false where it fails. Up to 18 digits it reads them itself:
// strconv is more code to run, and the string an allocation.
func parseInt(v []byte, bits int) (int64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	u, ok := smallUint(digits)
	if !ok {
		n, err := strconv.ParseInt(string(v), 10, bits)
		return n, err == nil
	}
	n := int64(u)
	if neg {
		n = -n
	}
	if bits < 64 && (n < -1<<(bits-1) || n >= 1<<(bits-1)) {
		return 0, false
	}
	return n, true
}

// parseUint is parseInt for strconv.ParseUint.
func parseUint(v []byte, bits int) (uint64, bool) {
	u, ok := smallUint(v)
	if !ok {
		n, err := strconv.ParseUint(string(v), 10, bits)
		return n, err == nil
	}
	if bits < 64 && u >= 1<<bits {
		return 0, false
	}
	return u, true
}

// smallUint reads 1 to 18 decimal digits.
func smallUint(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

func intBits(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	case reflect.Int, reflect.Uint:
		return strconv.IntSize
	}
	return 64
}

// jsonNumber reports whether b is a JSON number literal.
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

// encodeFunc appends the JSON of the value at p; false means encoding/json
// must do it (it would fail, or write something else).
type encodeFunc func(b []byte, p unsafe.Pointer) ([]byte, bool)

// newEncoder returns the encoder of type t, or nil if the plans do not
// cover t.
func newEncoder(t reflect.Type) encodeFunc {
	return encoderOf(t, map[reflect.Type]bool{})
}

// encoderOf builds the encoder of t; visiting holds the types being built,
// so a recursive type has no plan.
func encoderOf(t reflect.Type, visiting map[reflect.Type]bool) encodeFunc {
	if visiting[t] || customJSON(t) {
		return nil
	}
	visiting[t] = true
	defer delete(visiting, t)
	switch t.Kind() {
	case reflect.String:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return appendJSONString(b, *(*string)(p)), true
		}
	case reflect.Bool:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return strconv.AppendBool(b, *(*bool)(p)), true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		k := t.Kind()
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return appendInt(b, loadInt(k, p)), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		k := t.Kind()
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return appendUint(b, loadUint(k, p)), true
		}
	case reflect.Float32:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return appendJSONFloat(b, float64(*(*float32)(p)), 32)
		}
	case reflect.Float64:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return appendJSONFloat(b, *(*float64)(p), 64)
		}
	case reflect.Pointer:
		elem := encoderOf(t.Elem(), visiting)
		if elem == nil {
			return nil
		}
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			q := *(*unsafe.Pointer)(p)
			if q == nil {
				return append(b, "null"...), true
			}
			return elem(b, q)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64, or a named byte type's own encoding
		}
		elem := encoderOf(t.Elem(), visiting)
		if elem == nil {
			return nil
		}
		size := t.Elem().Size()
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			h := (*sliceHeader)(p)
			if h.data == nil {
				return append(b, "null"...), true
			}
			b = append(b, '[')
			for i := range h.len {
				if i > 0 {
					b = append(b, ',')
				}
				var ok bool
				if b, ok = elem(b, unsafe.Add(h.data, uintptr(i)*size)); !ok {
					return b, false
				}
			}
			return append(b, ']'), true
		}
	case reflect.Struct:
		return structEncoder(t, visiting)
	}
	return nil
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

type encField struct {
	key       []byte // `"name":`
	off       uintptr
	enc       encodeFunc
	omitEmpty bool
	kind      reflect.Kind
}

func structEncoder(t reflect.Type, visiting map[reflect.Type]bool) encodeFunc {
	fields, ok := plainJSONFields(t)
	if !ok {
		return nil
	}
	efs := make([]encField, len(fields))
	for i, jf := range fields {
		f := t.Field(jf.index)
		enc := encoderOf(f.Type, visiting)
		if enc == nil {
			return nil
		}
		efs[i] = encField{
			key:       append(appendJSONString(nil, jf.name), ':'),
			off:       f.Offset,
			enc:       enc,
			omitEmpty: jf.omitEmpty,
			kind:      f.Type.Kind(),
		}
	}
	return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
		b = append(b, '{')
		first := true
		for i := range efs {
			f := &efs[i]
			fp := unsafe.Add(p, f.off)
			if f.omitEmpty && isEmpty(f.kind, fp) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, f.key...)
			var ok bool
			if b, ok = f.enc(b, fp); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
}

// isEmpty is encoding/json's omitempty test for the kinds encoderOf
// covers; a struct is never empty.
func isEmpty(k reflect.Kind, p unsafe.Pointer) bool {
	switch k {
	case reflect.String:
		return len(*(*string)(p)) == 0
	case reflect.Bool:
		return !*(*bool)(p)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return loadInt(k, p) == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return loadUint(k, p) == 0
	case reflect.Float32:
		return *(*float32)(p) == 0
	case reflect.Float64:
		return *(*float64)(p) == 0
	case reflect.Pointer:
		return *(*unsafe.Pointer)(p) == nil
	case reflect.Slice:
		return (*sliceHeader)(p).len == 0
	}
	return false
}

func loadInt(k reflect.Kind, p unsafe.Pointer) int64 {
	switch k {
	case reflect.Int:
		return int64(*(*int)(p))
	case reflect.Int8:
		return int64(*(*int8)(p))
	case reflect.Int16:
		return int64(*(*int16)(p))
	case reflect.Int32:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

func loadUint(k reflect.Kind, p unsafe.Pointer) uint64 {
	switch k {
	case reflect.Uint:
		return uint64(*(*uint)(p))
	case reflect.Uint8:
		return uint64(*(*uint8)(p))
	case reflect.Uint16:
		return uint64(*(*uint16)(p))
	case reflect.Uint32:
		return uint64(*(*uint32)(p))
	case reflect.Uintptr:
		return uint64(*(*uintptr)(p))
	}
	return *(*uint64)(p)
}

// appendJSONFloat writes f as encoding/json does; false for NaN and the
// infinities, which it refuses.
func appendJSONFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	if abs >= 1 && abs < 1<<24 && f == math.Trunc(f) {
		// An integer, which 'f' would write with the same digits: a
		// shortcut, as float formatting is slow in a guest.
		return appendInt(b, int64(f)), true
	}
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 to e-9, as encoding/json writes it.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendInt is strconv.AppendInt(b, n, 10) in less code.
func appendInt(b []byte, n int64) []byte {
	if n < 0 {
		b = append(b, '-')
		return appendUint(b, uint64(-n)) // -MinInt64 is MinInt64: as uint64, its magnitude
	}
	return appendUint(b, uint64(n))
}

// appendUint is strconv.AppendUint(b, n, 10) in less code.
func appendUint(b []byte, n uint64) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as json.Marshal does: HTML characters escaped,
// invalid UTF-8 replaced, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	// Most strings need none of that: checked eight bytes at a time, they
	// are copied as they are, without running (in a guest, without
	// fetching into the CPU's caches) the code below.
	i := 0
	for i+8 <= len(s) && !escapedByte(load64String(s, i)) {
		i += 8
	}
	for i < len(s) && plainJSONByte(s[i]) {
		i++
	}
	if i == len(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return appendEscapedJSONString(b, s)
}

// plainJSONByte reports whether json.Marshal writes c as it is.
func plainJSONByte(c byte) bool {
	return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// escapedByte reports whether one of the eight bytes of x is not a
// plainJSONByte (specialByte, and '<', '>', '&').
func escapedByte(x uint64) bool {
	return specialByte(x) || zeroByte(x^(swarOnes*'<'))|zeroByte(x^(swarOnes*'>'))|zeroByte(x^(swarOnes*'&')) != 0
}

// load64String is load64 of a string.
func load64String(s string, i int) uint64 {
	_ = s[i+7]
	return *(*uint64)(unsafe.Pointer(unsafe.StringData(s[i:])))
}

// appendEscapedJSONString is appendJSONString for a string that needs
// escapes.
func appendEscapedJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
