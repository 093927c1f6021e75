package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Diff describes the first difference between a golden trace and adkhost's.
type Diff struct {
	Path     string // JSON path, e.g. turns[0].events[1].content.parts[0].text
	Expected string // golden value (compact JSON), or <missing>
	Got      string // adkhost value, or <missing>
	Context  string // a few lines of both texts around the first differing line
}

func (d *Diff) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at %s\n", d.Path)
	fmt.Fprintf(&b, "  expected (google-adk): %s\n", d.Expected)
	fmt.Fprintf(&b, "  got      (adkhost):    %s\n", d.Got)
	if d.Context != "" {
		b.WriteString(d.Context)
	}
	return b.String()
}

// CompareOptions tune Compare. IgnoreKeys drops object keys by name at every
// level before comparing (for exploring differences hidden behind a known
// one, e.g. node_info); the byte-exact check is skipped when set.
type CompareOptions struct {
	IgnoreKeys []string
	// Wasm, when set, makes CheckFile and CheckAgainst run the scenario in
	// Wasm mode (RunOptions.Wasm); Compare ignores it.
	Wasm *Wasm
}

// Compare returns nil when got matches the golden byte for byte, else the
// first difference in document order (keys are sorted, so this is the
// order of the text).
func Compare(golden, got []byte, opt CompareOptions) *Diff {
	if len(opt.IgnoreKeys) == 0 && bytes.Equal(golden, got) {
		return nil
	}
	got = alignConcurrency(golden, got)
	if len(opt.IgnoreKeys) == 0 && bytes.Equal(golden, got) {
		return nil
	}
	var want, have any
	if err := decodeJSON(golden, &want); err != nil {
		return &Diff{Path: "$", Expected: "<golden is not valid JSON: " + err.Error() + ">", Got: "", Context: lineContext(golden, got)}
	}
	if err := decodeJSON(got, &have); err != nil {
		return &Diff{Path: "$", Expected: "", Got: "<not valid JSON: " + err.Error() + ">"}
	}
	if len(opt.IgnoreKeys) > 0 {
		want = dropKeys(want, opt.IgnoreKeys)
		have = dropKeys(have, opt.IgnoreKeys)
	}
	if d := firstDiff("", want, have); d != nil {
		if len(opt.IgnoreKeys) == 0 {
			d.Context = lineContext(golden, got)
		} else {
			w, _ := pyJSON(want)
			h, _ := pyJSON(have)
			d.Context = lineContext(w, h)
		}
		return d
	}
	if len(opt.IgnoreKeys) > 0 {
		return nil
	}
	// Same values, different bytes (number formatting, escaping, ...).
	return &Diff{Path: "$ (text)", Expected: "same JSON value", Got: "different text", Context: lineContext(golden, got)}
}

func decodeJSON(data []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

func dropKeys(v any, keys []string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			drop := false
			for _, ik := range keys {
				drop = drop || k == ik
			}
			if !drop {
				out[k] = dropKeys(val, keys)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = dropKeys(it, keys)
		}
		return out
	}
	return v
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

func joinPath(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}

func firstDiff(path string, want, have any) *Diff {
	p := path
	if p == "" {
		p = "$"
	}
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return &Diff{Path: p, Expected: compact(want), Got: compact(have)}
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range h {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, wok := w[k]
			hv, hok := h[k]
			kp := joinPath(path, k)
			switch {
			case !hok:
				return &Diff{Path: kp, Expected: compact(wv), Got: "<missing>"}
			case !wok:
				return &Diff{Path: kp, Expected: "<missing>", Got: compact(hv)}
			}
			if d := firstDiff(kp, wv, hv); d != nil {
				return d
			}
		}
		return nil
	case []any:
		h, ok := have.([]any)
		if !ok {
			return &Diff{Path: p, Expected: compact(want), Got: compact(have)}
		}
		for i := 0; i < len(w) || i < len(h); i++ {
			ip := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(h):
				return &Diff{Path: ip, Expected: compact(w[i]), Got: fmt.Sprintf("<missing: adkhost has %d items, google-adk %d>", len(h), len(w))}
			case i >= len(w):
				return &Diff{Path: ip, Expected: fmt.Sprintf("<missing: google-adk has %d items, adkhost %d>", len(w), len(h)), Got: compact(h[i])}
			}
			if d := firstDiff(ip, w[i], h[i]); d != nil {
				return d
			}
		}
		return nil
	}
	// Scalars: compare their JSON text (keeps 21 and 21.0 apart).
	if compact(want) != compact(have) {
		return &Diff{Path: p, Expected: compact(want), Got: compact(have)}
	}
	return nil
}

// lineContext shows the first differing line of the two texts with a few
// lines around it.
func lineContext(golden, got []byte) string {
	gl := strings.Split(string(golden), "\n")
	hl := strings.Split(string(got), "\n")
	i := 0
	for i < len(gl) && i < len(hl) && gl[i] == hl[i] {
		i++
	}
	const before, after = 3, 3
	from := max(0, i-before)
	var b strings.Builder
	show := func(label string, lines []string) {
		fmt.Fprintf(&b, "  --- %s, lines %d-%d:\n", label, from+1, min(len(lines), i+after+1))
		for j := from; j < len(lines) && j <= i+after; j++ {
			mark := "  "
			if j == i {
				mark = "> "
			}
			fmt.Fprintf(&b, "  %s%5d %s\n", mark, j+1, lines[j])
		}
	}
	show("golden", gl)
	show("adkhost", hl)
	return b.String()
}

// toolPhase are the callback_log hooks of one function call.
var toolPhase = map[string]bool{"before_tool": true, "tool": true, "after_tool": true, "on_tool_error": true}

// alignConcurrency puts what adkhost runs concurrently (tool calls of one
// response, ParallelAgent branches) in the golden's order where only the
// order differs, and returns got re-encoded, or got itself when nothing
// moved.
func alignConcurrency(golden, got []byte) []byte {
	var w, h any
	if decodeJSON(golden, &w) != nil || decodeJSON(got, &h) != nil {
		return got
	}
	want, _ := w.(map[string]any)
	have, _ := h.(map[string]any)
	if want == nil || have == nil {
		return got
	}
	calls := alignParallelToolCalls(want, have)
	have, branches := alignParallelBranches(want, have)
	if !calls && !branches {
		return got
	}
	out, err := pyJSON(have)
	if err != nil {
		return got
	}
	if bytes.HasSuffix(got, []byte("\n")) && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// alignParallelToolCalls puts adkhost's callback_log entries of concurrent
// tool calls in the golden's order. adkhost runs the calls of one model
// response concurrently, so the interleaving of their callbacks and bodies
// varies; google-adk, with synchronous tools, runs them one after another.
// A run of tool-phase entries that holds the same entries as the golden's
// run at the same place is reordered to match; anything else is left for
// Compare to report.
func alignParallelToolCalls(want, have map[string]any) (changed bool) {
	wl, _ := want["callback_log"].([]any)
	hl, _ := have["callback_log"].([]any)
	if len(wl) != len(hl) {
		return false
	}
	for i := 0; i < len(wl); {
		if !isToolPhase(wl[i]) || !isToolPhase(hl[i]) {
			i++
			continue
		}
		j := i
		for j < len(wl) && isToolPhase(wl[j]) && isToolPhase(hl[j]) {
			j++
		}
		if sameMultiset(wl[i:j], hl[i:j]) {
			for k := i; k < j; k++ {
				if !jsonEqual(hl[k], wl[k]) {
					changed = true
				}
				hl[k] = wl[k]
			}
		}
		i = j
	}
	return changed
}

func isToolPhase(e any) bool {
	m, _ := e.(map[string]any)
	hook, _ := m["hook"].(string)
	return toolPhase[hook]
}

func sameMultiset(a, b []any) bool {
	count := map[string]int{}
	for _, e := range a {
		k, _ := pyJSON(e)
		count[string(k)]++
	}
	for _, e := range b {
		k, _ := pyJSON(e)
		count[string(k)]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

func jsonEqual(a, b any) bool {
	x, _ := pyJSON(a)
	y, _ := pyJSON(b)
	return bytes.Equal(x, y)
}

// alignParallelBranches puts adkhost's events of concurrent ParallelAgent
// branches in the golden's interleaving. adkhost promises the order of each
// branch's events, not how branches interleave (they run concurrently);
// google-adk's interleaving follows its event loop's scheduling. Where a
// session's events differ from the golden's only in interleaving (same
// length, each branch's events equal and in the same order, ids aside),
// they are reordered to the golden's order, the "evt-N" placeholders
// renamed to follow, and each turn's events reordered the same way.
func alignParallelBranches(want, have map[string]any) (map[string]any, bool) {
	ws, _ := want["sessions"].([]any)
	hs, _ := have["sessions"].([]any)
	if len(ws) != len(hs) {
		return have, false
	}
	rename := map[string]string{}
	for i := range ws {
		we, _ := ws[i].(map[string]any)["events"].([]any)
		he, _ := hs[i].(map[string]any)["events"].([]any)
		order, ok := interleaving(we, he)
		if !ok {
			continue
		}
		for k, j := range order {
			if hid, _ := he[j].(map[string]any)["id"].(string); hid != "" {
				if wid, _ := we[k].(map[string]any)["id"].(string); wid != "" {
					rename[hid] = wid
				}
			}
		}
	}
	if len(rename) == 0 {
		return have, false
	}
	have = renameIDs(have, rename).(map[string]any)
	hs, _ = have["sessions"].([]any)
	for i := range ws {
		we, _ := ws[i].(map[string]any)["events"].([]any)
		he, _ := hs[i].(map[string]any)["events"].([]any)
		if order, ok := interleaving(we, he); ok {
			hs[i].(map[string]any)["events"] = pick(he, order)
		}
	}
	wt, _ := want["turns"].([]any)
	ht, _ := have["turns"].([]any)
	for i := range min(len(wt), len(ht)) {
		we, _ := wt[i].(map[string]any)["events"].([]any)
		he, _ := ht[i].(map[string]any)["events"].([]any)
		if order, ok := interleaving(we, he); ok {
			ht[i].(map[string]any)["events"] = pick(he, order)
		}
	}
	return have, true
}

// interleaving returns, for each of want's events, the index of the event
// of have in its place, when have is want with branches interleaved
// differently; ok is false when it is not, or is in the same order.
func interleaving(want, have []any) (order []int, ok bool) {
	if len(want) != len(have) || len(want) == 0 {
		return nil, false
	}
	queues := map[string][]int{}
	for j, e := range have {
		b := branchOf(e)
		queues[b] = append(queues[b], j)
	}
	same := true
	for k, e := range want {
		b := branchOf(e)
		q := queues[b]
		if len(q) == 0 || !jsonEqual(withoutID(e), withoutID(have[q[0]])) {
			return nil, false
		}
		order = append(order, q[0])
		same = same && q[0] == k
		queues[b] = q[1:]
	}
	return order, !same
}

func branchOf(e any) string {
	b, _ := e.(map[string]any)["branch"].(string)
	return b
}

// withoutID is e without its id and with every "evt-N" masked: events are
// matched before their placeholders are renamed (Compare then checks them).
func withoutID(e any) any {
	m, _ := e.(map[string]any)
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "id" {
			out[k] = maskEventIDs(v)
		}
	}
	return out
}

var eventIDPlaceholder = regexp.MustCompile(`^evt-[0-9]+$`)

func maskEventIDs(v any) any {
	return mapStrings(v, func(s string) string {
		if eventIDPlaceholder.MatchString(s) {
			return "evt-?"
		}
		return s
	})
}

func pick(s []any, order []int) []any {
	out := make([]any, len(order))
	for k, j := range order {
		out[k] = s[j]
	}
	return out
}

// renameIDs returns v with every string that is a key of rename replaced.
func renameIDs(v any, rename map[string]string) any {
	return mapStrings(v, func(s string) string {
		if r, ok := rename[s]; ok {
			return r
		}
		return s
	})
}

// mapStrings returns a copy of the decoded JSON value v with f applied to
// every string value (not to keys).
func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mapStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapStrings(e, f)
		}
		return out
	case string:
		return f(x)
	}
	return v
}
