package contents

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// withIDs gives events without an ID a unique one, as a session would.
func withIDs(events []*session.Event) []*session.Event {
	for i, e := range events {
		if e.ID == "" {
			e.ID = "e" + strconv.Itoa(i)
		}
	}
	return events
}

// mustJSON encodes v or fails the test.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkCached compares c.Build with Build on events and checks the
// result's capacity.
func checkCached(t testing.TB, c *Cache, key string, events []*session.Event, opt Options) []*genai.Content {
	t.Helper()
	got := c.Build(key, events, opt)
	want := Build(events, opt)
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Fatalf("Cache.Build(%q, %d events, %+v) differs from Build\n got: %s\nwant: %s", key, len(events), opt, g, w)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Cache.Build(%q, %d events, %+v) not DeepEqual to Build", key, len(events), opt)
	}
	if got == nil || cap(got) != len(got) {
		t.Fatalf("result nil or cap %d != len %d", cap(got), len(got))
	}
	return got
}

// cachedState returns the contents cached for key and opt, or nil.
func cachedState(c *Cache, key string, opt Options) *prefixState {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.keys[key]
	if !ok {
		return nil
	}
	for _, v := range el.Value.(*cacheKey).variants {
		if v.opt == opt {
			v.mu.Lock()
			defer v.mu.Unlock()
			return v.st
		}
	}
	return nil
}

// scribbleFresh modifies, as an owner may, the contents of got that the
// cache does not hold: those built afresh by the call.
func scribbleFresh(c *Cache, key string, opt Options, got []*genai.Content) {
	held := map[*genai.Content]bool{}
	if st := cachedState(c, key, opt); st != nil {
		for _, x := range st.contents {
			held[x] = true
		}
	}
	var fresh []*genai.Content
	for _, x := range got {
		if !held[x] {
			fresh = append(fresh, x)
		}
	}
	scribble(fresh)
}

// TestCacheCases feeds every growing prefix of the Build table through
// one cache per case, under both commit policies.
func TestCacheCases(t *testing.T) {
	for _, eager := range []bool{false, true} {
		for _, tc := range cases() {
			if tc.opt.CurrentTurnOnly {
				continue
			}
			t.Run(fmt.Sprintf("eager=%v/%s", eager, tc.name), func(t *testing.T) {
				events := withIDs(tc.events)
				prepare(events)
				c := NewCache(4)
				c.eager = eager
				for i := 0; i <= len(events); i++ {
					checkCached(t, c, "s", events[:i], tc.opt)
				}
			})
		}
	}
}

func TestCacheCurrentTurnOnly(t *testing.T) {
	c := NewCache(4)
	for _, tc := range cases() {
		if !tc.opt.CurrentTurnOnly {
			continue
		}
		events := withIDs(tc.events)
		prepare(events)
		for i := 0; i <= len(events); i++ {
			checkCached(t, c, tc.name, events[:i], tc.opt)
		}
	}
	if c.Len() != 0 {
		t.Fatalf("CurrentTurnOnly calls cached %d keys", c.Len())
	}
}

func TestCacheNil(t *testing.T) {
	var c *Cache
	events := withIDs([]*session.Event{evt("user", "i1", u("hi"))})
	checkCached(t, c, "s", events, Options{AgentName: "agent"})
	checkCached(t, c, "s", nil, Options{AgentName: "agent"})
}

// digest encodes events, NaN compaction bounds included.
func digest(t testing.TB, events []*session.Event) string {
	var out []string
	for _, e := range events {
		cp := *e
		if c := e.Actions.Compaction; c != nil {
			cc := *c
			cc.StartTimestamp, cc.EndTimestamp = 0, 0
			cp.Actions.Compaction = &cc
			out = append(out, fmt.Sprint(math.Float64bits(c.StartTimestamp), math.Float64bits(c.EndTimestamp)))
		}
		out = append(out, mustJSON(t, &cp))
	}
	return mustJSON(t, out)
}

// ---- random sessions ----

// sessionGen writes random but realistic session histories.
type sessionGen struct {
	r        *rand.Rand
	events   []*session.Event
	ts       float64
	nextID   int
	invs     []string
	inv      string
	branches bool
	pending  []pendingCall // long-running calls not answered yet
	usedIDs  []string
}

type pendingCall struct{ id, name, inv, author string }

func (g *sessionGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *sessionGen) newID(prefix string) string {
	g.nextID++
	return prefix + strconv.Itoa(g.nextID)
}

func (g *sessionGen) branchOf(author string) string {
	if !g.branches {
		return ""
	}
	switch author {
	case "agent":
		return "root.agent"
	case "helper":
		return "root.helper"
	case "root":
		return "root"
	}
	return ""
}

// add appends an event, one second (sometimes zero, rarely minus half a
// second) after the previous one.
func (g *sessionGen) add(author string, c *genai.Content, opts ...evOpt) *session.Event {
	switch x := g.r.Float64(); {
	case x < 0.03:
		g.ts -= 0.5
	case x < 0.12:
	default:
		g.ts++
	}
	e := evt(author, g.inv, c, opts...)
	e.ID = g.newID("ev")
	e.Timestamp = session.FloatToTime(g.ts)
	if e.Branch == "" && author != "user" {
		e.Branch = g.branchOf(author)
	}
	g.events = append(g.events, e)
	return e
}

func (g *sessionGen) startInvocation() {
	g.inv = g.newID("inv")
	g.invs = append(g.invs, g.inv)
}

func (g *sessionGen) callID() string {
	switch x := g.r.Float64(); {
	case x < 0.04 && len(g.usedIDs) > 0:
		return g.usedIDs[g.r.IntN(len(g.usedIDs))] // a reused id
	case x < 0.12:
		return ""
	case x < 0.45:
		return g.newID("call_")
	default:
		return g.newID("adk-")
	}
}

func (g *sessionGen) args() map[string]any {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return map[string]any{"q": "x" + strconv.Itoa(g.r.IntN(9)), "n": float64(g.r.IntN(5))}
	default:
		return map[string]any{"nested": map[string]any{"l": []any{"a", 1.5, true}}}
	}
}

func (g *sessionGen) agentText(author string) {
	switch g.r.IntN(6) {
	case 0:
		g.add(author, ct("model", thought("thinking"), txt("answer "+strconv.Itoa(g.nextID))))
	case 1:
		g.add(author, ct("model", thought("only thinking")))
	case 2:
		g.add(author, ct("model", &genai.Part{ThoughtSignature: []byte("sig")}, txt("signed")))
	default:
		g.add(author, m("reply "+strconv.Itoa(g.nextID)))
	}
}

// toolStep has author call one to three tools and (mostly) answers them.
func (g *sessionGen) toolStep(author string) {
	n := 1 + g.r.IntN(3)
	if g.chance(0.6) {
		n = 1
	}
	var calls, responses []*genai.Part
	var lr []string
	names := []string{"lookup", "search", "fetch"}
	for i := 0; i < n; i++ {
		id := g.callID()
		name := names[g.r.IntN(len(names))]
		if g.chance(0.03) {
			name = requestConfirmationName
		}
		calls = append(calls, call(id, name, g.args()))
		if id != "" {
			g.usedIDs = append(g.usedIDs, id)
		}
		if id != "" && g.chance(0.15) {
			lr = append(lr, id)
			g.pending = append(g.pending, pendingCall{id, name, g.inv, author})
			if g.chance(0.5) {
				responses = append(responses, resp(id, name, map[string]any{"status": "pending"}))
			}
			continue
		}
		if g.chance(0.05) {
			continue // never answered
		}
		responses = append(responses, resp(id, name, map[string]any{"result": "r" + strconv.Itoa(g.nextID)}))
	}
	var opts []evOpt
	if len(lr) > 0 {
		opts = append(opts, longRunning(lr...))
	}
	callParts := calls
	if g.chance(0.2) {
		callParts = append([]*genai.Part{txt("let me check")}, calls...)
	}
	g.add(author, ct("model", callParts...), opts...)
	if g.chance(0.1) && len(calls) > 0 {
		// A tool publishing on its own sub-branch.
		fc := calls[0].FunctionCall
		b := fc.Name + "@" + fc.ID
		if base := g.branchOf(author); base != "" {
			b = base + "." + b
		}
		g.add(author, m("tool progress"), onBranch(b))
	}
	if len(responses) == 0 {
		return
	}
	if len(responses) > 1 && g.chance(0.3) {
		// Responses arriving in separate events.
		for _, p := range responses {
			g.add(author, ct("user", p))
		}
		return
	}
	g.add(author, ct("user", responses...))
}

// answerPending answers, updates or leaves a long-running call.
func (g *sessionGen) answerPending(author string) bool {
	if len(g.pending) == 0 {
		return false
	}
	i := g.r.IntN(len(g.pending))
	p := g.pending[i]
	if g.chance(0.5) {
		// An update from the tool, with an interim reply.
		g.add(author, ct("user", resp(p.id, p.name, map[string]any{"status": "progress " + strconv.Itoa(g.nextID)})))
		if g.chance(0.7) {
			g.add(author, m("still working"))
		}
		return true
	}
	g.pending = append(g.pending[:i], g.pending[i+1:]...)
	parts := []*genai.Part{resp(p.id, p.name, map[string]any{"status": "done"})}
	if g.chance(0.2) {
		parts = append(parts, txt("note"))
	}
	g.add("user", ct("user", parts...))
	return true
}

func (g *sessionGen) compaction() {
	if len(g.events) < 2 {
		return
	}
	a := g.events[g.r.IntN(len(g.events))]
	b := g.events[g.r.IntN(len(g.events))]
	start, end := session.TimeToFloat(a.Timestamp), session.TimeToFloat(b.Timestamp)
	if start > end && g.chance(0.8) {
		start, end = end, start
	}
	var summary *genai.Content
	switch x := g.r.Float64(); {
	case x < 0.1:
	case x < 0.2:
		summary = ct("model", txt("summary"), call("", "lookup", nil))
	default:
		summary = m("summary up to " + strconv.Itoa(g.nextID))
	}
	if g.chance(0.03) {
		end = math.NaN()
	}
	inv := ""
	if g.chance(0.5) {
		inv = g.newID("inv")
	}
	saved := g.inv
	g.inv = inv
	g.add("user", nil, compacted(start, end, summary))
	g.inv = saved
}

// session writes a random history.
func (g *sessionGen) session() []*session.Event {
	g.branches = g.chance(0.4)
	turns := 3 + g.r.IntN(10)
	for turn := 0; turn < turns; turn++ {
		g.startInvocation()
		switch x := g.r.Float64(); {
		case x < 0.06 && len(g.invs) > 1:
			target := g.invs[g.r.IntN(len(g.invs)-1)]
			if g.chance(0.1) {
				target = "missing"
			}
			g.add("user", nil, rewindTo(target))
			g.startInvocation()
			g.add("user", u("after rewind"))
		case x < 0.12:
			g.compaction()
			g.add("user", u("after compaction"))
		case x < 0.22 && len(g.pending) > 0:
			g.answerPending("user")
		case x < 0.28:
			for k := g.r.IntN(3); k >= 0; k-- {
				g.add("user", nil, inTr("spoken "+strconv.Itoa(k)))
			}
			if g.chance(0.3) {
				g.add("user", u("typed"), inTr("also spoken"))
			}
		case x < 0.32:
			e := g.add("user", nil)
			e.Actions.StateDelta = map[string]any{"k": 1.0}
		default:
			g.add("user", u("question "+strconv.Itoa(turn)))
		}
		author := "agent"
		if g.chance(0.25) {
			// The root agent transfers to agent or helper.
			target := "agent"
			if g.chance(0.4) {
				target = "helper"
			}
			id := g.callID()
			g.add("root", ct("model", call(id, "transfer_to_agent", map[string]any{"agent_name": target})))
			g.add("root", ct("user", resp(id, "transfer_to_agent", map[string]any{"result": nil})), transferTo(target))
			author = target
		}
		for steps := 1 + g.r.IntN(4); steps > 0; steps-- {
			switch x := g.r.Float64(); {
			case x < 0.35:
				g.toolStep(author)
			case x < 0.45:
				g.answerPending(author)
			case x < 0.52:
				for k := g.r.IntN(3); k >= 0; k-- {
					g.add(author, nil, outTr("said "+strconv.Itoa(k)))
				}
				if g.chance(0.3) {
					g.add(author, m("written"), outTr("also said"))
				}
			case x < 0.56:
				g.add(author, ct("model"))
			case x < 0.58:
				g.add(author, ct("user", resp(g.newID("orphan"), "f", nil)))
			case x < 0.62:
				g.add("helper", m("helper aside"))
			default:
				g.agentText(author)
			}
		}
		if g.chance(0.1) {
			e := g.add(author, nil)
			e.Actions.StateDelta = map[string]any{"done": true}
		}
		if g.chance(0.08) {
			g.compaction()
		}
	}
	return g.events
}

var randomOptions = []Options{
	{AgentName: "agent"},
	{AgentName: "agent", Branch: "root.agent"},
	{AgentName: "helper", Branch: "root.helper", IncludeThoughtsFromOtherAgents: true},
	{AgentName: "agent", PreserveFunctionCallIDs: true},
	{},
	{AgentName: "root", Branch: "root", IncludeThoughtsFromOtherAgents: true},
}

// TestCacheRandomSessions feeds growing prefixes of random sessions, as a
// live session's model calls would see them, to one cache, alternating
// two agents' options, and compares every result with Build. The eager
// run caches every suffix, trying the reuse conditions at every boundary.
func TestCacheRandomSessions(t *testing.T) {
	for _, eager := range []bool{false, true} {
		t.Run(fmt.Sprintf("eager=%v", eager), func(t *testing.T) {
			r := rand.New(rand.NewPCG(20240611, 7))
			c := NewCache(16)
			c.eager = eager
			calls := 0
			sequences := 300
			if eager {
				sequences = 100
			}
			for seq := 0; seq < sequences; seq++ {
				g := &sessionGen{r: r}
				events := g.session()
				before := digest(t, events)
				key := "session-" + strconv.Itoa(seq)
				opts := []Options{randomOptions[r.IntN(len(randomOptions))], randomOptions[r.IntN(len(randomOptions))]}
				for i := 0; i <= len(events); i++ {
					if i > 0 && r.IntN(4) == 0 {
						continue // no model call at this point
					}
					for _, opt := range opts {
						got := checkCached(t, c, key, events[:i], opt)
						scribbleFresh(c, key, opt, got)
						calls++
					}
				}
				if after := digest(t, events); after != before {
					t.Fatalf("sequence %d: events changed", seq)
				}
			}
			ext, fresh, conf := c.stats.extended.Load(), c.stats.fresh.Load(), c.stats.conflicts.Load()
			t.Logf("%d calls: %d extended a cached prefix, %d built afresh, %d conflicts", calls, ext, fresh, conf)
			if ext < int64(calls)/2 {
				t.Errorf("only %d of %d calls reused a prefix", ext, calls)
			}
		})
	}
}

// TestCacheSharesPrefix checks that a clean session reuses the prefix:
// the same content pointers, results with cap == len, and that callers
// replacing and appending do not disturb later results.
func TestCacheSharesPrefix(t *testing.T) {
	events := benchSession(3)
	opt := Options{AgentName: "agent"}
	c := NewCache(4)
	checkCached(t, c, "s", events[:7], opt)          // turn 2's second call
	first := checkCached(t, c, "s", events[:9], opt) // turn 3's first call
	first[0] = u("replaced")
	_ = append(first, u("appended"))
	second := checkCached(t, c, "s", events[:11], opt)
	// The 7 contents cached by the first call are shared; the 2 built by
	// the second are its caller's, and the third shares the cache's copies.
	for i := 1; i < len(first); i++ {
		if same := first[i] == second[i]; same != (i < 7) {
			t.Fatalf("content %d shared: %v", i, same)
		}
	}
	if s := &c.stats; s.conflicts.Load() != 0 || s.extended.Load() != 2 {
		t.Fatalf("stats: extended %d, fresh %d, conflicts %d", s.extended.Load(), s.fresh.Load(), s.conflicts.Load())
	}
	// A later turn extends the prefix again without conflicts.
	checkCached(t, c, "s", events, opt)
	if n := c.stats.conflicts.Load(); n != 0 {
		t.Fatalf("%d conflicts", n)
	}
}

// TestCacheLongRunningAnsweredLater checks the boundary cases around a
// long-running call answered in a later turn.
func TestCacheLongRunningAnsweredLater(t *testing.T) {
	events := withIDs([]*session.Event{
		evt("user", "i1", u("start")),
		evt("agent", "i1", ct("model", call("c1", "approve", nil)), longRunning("c1")),
		evt("agent", "i1", ct("user", resp("c1", "approve", map[string]any{"status": "pending"}))),
		evt("agent", "i1", m("waiting")),
		evt("user", "i2", u("how is it going")),
		evt("agent", "i2", m("still waiting")),
		evt("user", "i3", ct("user", resp("c1", "approve", map[string]any{"status": "done"}))),
		evt("agent", "i3", m("approved")),
		evt("user", "i4", u("thanks")),
	})
	prepare(events)
	for _, eager := range []bool{false, true} {
		c := NewCache(1)
		c.eager = eager
		for i := 1; i <= len(events); i++ {
			checkCached(t, c, "s", events[:i], Options{AgentName: "agent"})
		}
	}
}

// TestCacheBoundaryCases covers interactions across the cached boundary
// that random sessions seldom produce.
func TestCacheBoundaryCases(t *testing.T) {
	me := Options{AgentName: "agent"}
	for _, tc := range []testCase{
		{
			name: "a tool sub-branch names a call made later",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", m("early"), onBranch("node@x1")),
				evt("agent", "i1", m("answer")),
				evt("user", "i2", u("q2")),
				evt("agent", "i2", ct("model", call("x1", "f", nil))),
				evt("agent", "i2", ct("user", resp("x1", "f", nil))),
			},
		},
		{
			name: "an id-less response with no call event before it takes a later id-less call",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", call("id1", "g", nil))),
				evt("agent", "i1", ct("model", call("", "f", nil), resp("id1", "g", nil))),
				evt("agent", "i1", ct("user", resp("", "f", map[string]any{"r": 1.0}))),
				evt("agent", "i1", m("answer")),
				evt("user", "i2", u("q2")),
				evt("agent", "i2", ct("model", call("", "h", nil))),
				evt("agent", "i2", m("done")),
			},
		},
		{
			name: "output transcription keeps accumulating past an event with content",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", nil, outTr("a")),
				evt("agent", "i1", m("written"), outTr("b")),
				evt("user", "i2", u("q2")),
				evt("agent", "i2", nil, outTr("c")),
			},
		},
		{
			name: "a long-running call updated across turns with interim replies",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("run")),
				evt("agent", "i1", ct("model", call("s1", "slow", nil)), longRunning("s1")),
				evt("agent", "i1", ct("user", resp("s1", "slow", map[string]any{"p": 10.0}))),
				evt("agent", "i1", m("progress 10")),
				evt("user", "i2", u("and?")),
				evt("agent", "i2", m("wait")),
				evt("agent", "i1", ct("user", resp("s1", "slow", map[string]any{"p": 50.0}))),
				evt("agent", "i1", m("progress 50")),
				evt("user", "i3", ct("user", resp("s1", "slow", map[string]any{"p": 100.0}))),
				evt("agent", "i3", m("done")),
			},
		},
		{
			name: "a later event marks an unanswered earlier call long-running",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", txt("calling"), call("x", "f", nil))),
				evt("agent", "i1", m("answer")),
				evt("user", "i2", u("q2")),
				evt("agent", "i2", m("noted"), longRunning("x")),
			},
		},
		{
			name: "a compaction summary's own call is answered later",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("a"), at(1)),
				evt("agent", "i1", m("A"), at(2)),
				evt("user", "", nil, at(3), compacted(1, 2, ct("model", call("k1", "f", nil)))),
				evt("user", "i2", u("b"), at(4)),
				evt("agent", "i2", ct("user", resp("k1", "f", nil)), at(5)),
			},
		},
	} {
		for _, eager := range []bool{false, true} {
			t.Run(fmt.Sprintf("eager=%v/%s", eager, tc.name), func(t *testing.T) {
				events := withIDs(tc.events)
				prepare(events)
				c := NewCache(1)
				c.eager = eager
				for i := 0; i <= len(events); i++ {
					checkCached(t, c, "s", events[:i], tc.opt)
				}
			})
		}
	}
}

// TestCacheOtherHistory checks that a key's cache is not used for a
// history that does not start with the cached prefix.
func TestCacheOtherHistory(t *testing.T) {
	a, b := benchSession(2), benchSession(3)
	for _, e := range b {
		e.ID = "b-" + e.ID
	}
	b[0].Content = u("a different start")
	c := NewCache(1)
	c.eager = true
	opt := Options{AgentName: "agent"}
	checkCached(t, c, "s", a[:6], opt)
	checkCached(t, c, "s", b[:8], opt)
	// Same first event, a different event at the end of the prefix.
	b2 := append(append([]*session.Event(nil), b[:7]...), evt("helper", "i1", m("other"), func(e *session.Event) { e.ID = "other" }))
	b2 = append(b2, b[8:]...)
	prepare(b2)
	checkCached(t, c, "s", b2, opt)
	// Shorter than the prefix.
	checkCached(t, c, "s", b2[:3], opt)
}

// TestCacheKeysIndependent interleaves two sessions and two agents of one
// session.
func TestCacheKeysIndependent(t *testing.T) {
	a := benchSession(4)
	b := withIDs([]*session.Event{
		evt("user", "j1", u("other session")),
		evt("agent", "j1", m("other answer")),
		evt("user", "j2", u("more")),
		evt("helper", "j2", m("helper answer")),
	})
	prepare(b)
	// Give b the same event IDs as a so that only the key tells them apart.
	for i := range b {
		b[i].ID = a[i].ID
	}
	c := NewCache(4)
	opt, other := Options{AgentName: "agent"}, Options{AgentName: "helper"}
	for i := 1; i <= len(a); i++ {
		checkCached(t, c, "a", a[:i], opt)
		checkCached(t, c, "a", a[:i], other)
		if i <= len(b) {
			checkCached(t, c, "b", b[:i], opt)
		}
	}
}

func TestCacheEviction(t *testing.T) {
	c := NewCache(2)
	events := benchSession(2)
	opt := Options{AgentName: "agent"}
	for _, key := range []string{"a", "b", "c"} {
		checkCached(t, c, key, events, opt)
	}
	if c.Len() != 2 || cachedState(c, "a", opt) != nil || cachedState(c, "c", opt) == nil {
		t.Fatalf("after three keys in a cache of two: len %d", c.Len())
	}
	checkCached(t, c, "b", events, opt) // b is now the most recent
	checkCached(t, c, "d", events, opt)
	if cachedState(c, "b", opt) == nil || cachedState(c, "c", opt) != nil {
		t.Fatal("least recently used key not evicted")
	}
	c.Forget("b")
	if c.Len() != 1 || cachedState(c, "b", opt) != nil {
		t.Fatal("Forget kept the key")
	}

	// Options variants per key are bounded too.
	for i := 0; i < 2*maxVariantsPerKey; i++ {
		checkCached(t, c, "d", events, Options{AgentName: "agent" + strconv.Itoa(i)})
	}
	c.mu.Lock()
	n := len(c.keys["d"].Value.(*cacheKey).variants)
	c.mu.Unlock()
	if n != maxVariantsPerKey {
		t.Fatalf("%d variants kept", n)
	}
}

// TestCacheConcurrent runs sessions in parallel, several goroutines on
// each, for the race detector.
func TestCacheConcurrent(t *testing.T) {
	c := NewCache(3)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			events := benchSession(5)
			key := "s" + strconv.Itoa(g%4)
			opt := Options{AgentName: []string{"agent", "helper"}[g%2]}
			for i := 1; i <= len(events); i++ {
				got := c.Build(key, events[:i], opt)
				if mustJSON(t, got) != mustJSON(t, Build(events[:i], opt)) {
					t.Error("concurrent result differs")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// ---- benchmarks ----

// benchSession is a session of turns (user, call, response, text) plus
// one more turn: 4*(turns+1) events.
func benchSession(turns int) []*session.Event {
	var events []*session.Event
	for i := 0; i <= turns; i++ {
		inv := "i" + strconv.Itoa(i)
		id := "adk-" + strconv.Itoa(i)
		events = append(events,
			evt("user", inv, u("question "+strconv.Itoa(i))),
			evt("agent", inv, ct("model", call(id, "f", map[string]any{"q": "x", "n": 1.0}))),
			evt("agent", inv, ct("user", resp(id, "f", map[string]any{"result": []any{"a", "b"}}))),
			evt("agent", inv, m("an answer")),
		)
	}
	for i, e := range events {
		e.ID = "ev" + strconv.Itoa(i)
	}
	prepare(events)
	return events
}

// cloneState copies a prefix state so that a benchmark can restore it.
func cloneState(st *prefixState) *prefixState {
	cp := *st
	cp.contents = append(make([]*genai.Content, 0, cap(st.contents)), st.contents...)
	cp.ids = maps.Clone(st.ids)
	cp.branchIDs = maps.Clone(st.branchIDs)
	return &cp
}

// BenchmarkTurn measures the two model calls of the turn after a given
// number of turns (user, call, response, text): the first sees the new
// user message, the second the call and its response. "cached" runs them
// through a Cache that served every earlier model call of the session.
func BenchmarkTurn(b *testing.B) {
	opt := Options{AgentName: "agent"}
	for _, turns := range []int{0, 10, 50} {
		events := benchSession(turns)
		n := 4 * turns
		call1, call2 := events[:n+1], events[:n+3]
		b.Run(fmt.Sprintf("turns=%d/uncached", turns), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Build(call1, opt)
				Build(call2, opt)
			}
		})
		b.Run(fmt.Sprintf("turns=%d/cached", turns), func(b *testing.B) {
			c := NewCache(1)
			for k := 0; k < turns; k++ {
				c.Build("s", events[:4*k+1], opt)
				c.Build("s", events[:4*k+3], opt)
			}
			var warm *prefixState
			if st := cachedState(c, "s", opt); st != nil {
				warm = cloneState(st)
			}
			v := c.variant("s", opt)
			// Each iteration starts from the warm state: restore a copy,
			// made in batches outside the timer (stopping the timer reads
			// the memory statistics, too slow to do every iteration).
			states := make([]*prefixState, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%len(states) == 0 {
					b.StopTimer()
					for j := range states {
						states[j] = nil
						if warm != nil {
							states[j] = cloneState(warm)
						}
					}
					b.StartTimer()
				}
				v.st = states[i%len(states)]
				c.Build("s", call1, opt)
				c.Build("s", call2, opt)
			}
		})
	}
}
