package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// The compaction measurement: a long session of the weather scenario with
// token-threshold compaction on, where the request size must stay bounded
// instead of growing with every turn.
const (
	compactionTurns     = 50
	compactionThreshold = 400 // tokens, estimated at 4 characters each
	compactionRetention = 4   // events: the latest turn
)

// summaryText is the scripted summary, the same size every time.
var summaryText = "Conversation Language: English. The user keeps asking about the weather in Paris; " +
	"get_weather was called each time and returned sunny, 21 degrees. No open questions."

// compactionModel answers agent requests like the weather scenario (a
// get_weather call for a user message, the final text after the tool's
// response) and summarizer requests, which carry no system instruction,
// with summaryText. It records the JSON size of every agent request.
type compactionModel struct {
	mu    sync.Mutex
	sizes []int // agent request sizes in bytes, in call order
	turn  []int // the turn of each recorded request
	cur   int
}

func (m *compactionModel) Name() string { return modelName }

func (m *compactionModel) GenerateContent(_ context.Context, req *model.Request, _ bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		if req.Config == nil || req.Config.SystemInstruction == nil {
			yield(&model.Response{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: summaryText}}}}, nil)
			return
		}
		raw, err := json.Marshal(req)
		if err != nil {
			yield(nil, err)
			return
		}
		m.mu.Lock()
		m.sizes = append(m.sizes, len(raw))
		m.turn = append(m.turn, m.cur)
		m.mu.Unlock()
		last := req.Contents[len(req.Contents)-1]
		content := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: finalText}}}
		if last.Parts[0].FunctionResponse == nil {
			content = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{
				FunctionCall: &genai.FunctionCall{Name: toolName, Args: map[string]any{"city": "Paris"}},
			}}}
		}
		yield(&model.Response{Content: content, TurnComplete: true}, nil)
	}
}

// increasingTimestamps gives appended events strictly increasing
// timestamps: compaction ranges are timestamp ranges, and a scripted turn
// can create two events within one microsecond.
type increasingTimestamps struct {
	session.Service
	mu   sync.Mutex
	last time.Time
}

func (s *increasingTimestamps) AppendEvent(ctx context.Context, sess *session.Session, e *session.Event) error {
	s.mu.Lock()
	if !e.Timestamp.After(s.last) {
		e.Timestamp = s.last.Add(time.Microsecond)
	}
	s.last = e.Timestamp
	s.mu.Unlock()
	return s.Service.AppendEvent(ctx, sess, e)
}

// compactionRequestSizes runs turns turns of the weather scenario with
// compaction on and returns, for each turn, the size in bytes of its
// largest model request.
func compactionRequestSizes(ctx context.Context, turns int) ([]int, error) {
	getWeather, err := tool.NewFunction(tool.FunctionConfig{
		Name:        toolName,
		Description: "Returns the current weather in a city.",
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
		Fn: func(_ callbacks.ToolContext, args map[string]any) (any, error) {
			city, _ := args["city"].(string)
			return weather(city), nil
		},
	})
	if err != nil {
		return nil, err
	}
	m := &compactionModel{}
	a, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: agentName, Model: m, Instruction: instruction, Tools: []tool.Tool{getWeather}})
	if err != nil {
		return nil, err
	}
	sessions := &increasingTimestamps{Service: session.NewInMemoryService()}
	r, err := engine.NewRunner(engine.RunnerConfig{
		AppName: appName, Agent: a, Sessions: sessions, AutoCreateSession: true,
		Compaction: &engine.CompactionConfig{TokenThreshold: new(compactionThreshold), EventRetentionSize: new(compactionRetention)},
	})
	if err != nil {
		return nil, err
	}
	for turn := range turns {
		m.mu.Lock()
		m.cur = turn
		m.mu.Unlock()
		for _, err := range r.Run(ctx, userID, "long", userMessage(), engine.RunConfig{}) {
			if err != nil {
				return nil, fmt.Errorf("turn %d: %w", turn+1, err)
			}
		}
	}
	sizes := make([]int, turns)
	for i, s := range m.sizes {
		sizes[m.turn[i]] = max(sizes[m.turn[i]], s)
	}
	return sizes, nil
}

// TestCompactionRequestSizeBounded checks that with compaction on the
// request of turn 50 is at most 1.5 times that of turn 10, and prints the
// ratio for cmd/turnratio.
func TestCompactionRequestSizeBounded(t *testing.T) {
	sizes, err := compactionRequestSizes(context.Background(), compactionTurns)
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(sizes[49]) / float64(sizes[9])
	var b strings.Builder
	for i, s := range sizes {
		fmt.Fprintf(&b, " %d:%d", i+1, s)
	}
	t.Logf("largest request bytes per turn:%s", b.String())
	fmt.Printf("compaction_request_ratio_50_vs_10=%.2f\n", ratio)
	if ratio > 1.5 {
		t.Errorf("request bytes at turn 50 / turn 10 = %d / %d = %.2f, want <= 1.5", sizes[49], sizes[9], ratio)
	}
	// Bounded, not only at the two turns measured.
	if peak := maxOf(sizes[9:]); float64(peak) > 2*float64(sizes[9]) {
		t.Errorf("largest request after turn 10 is %d bytes, more than twice turn 10's %d", peak, sizes[9])
	}
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
