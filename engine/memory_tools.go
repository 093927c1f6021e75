package engine

import (
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/tool"
)

// LoadMemoryTool is google-adk's load_memory: the model calls it with a
// query and gets the user's matching memories, and the system instruction
// tells the model it has memory. It needs RunnerConfig.Memory.
type LoadMemoryTool struct{}

// loadMemoryInstruction is what google-adk appends to the system
// instruction for load_memory.
const loadMemoryInstruction = "\nYou have memory. You can use it to answer questions. If any questions need\nyou to look up the memory, you should call load_memory function with a query.\n"

func (LoadMemoryTool) Name() string { return "load_memory" }
func (LoadMemoryTool) Description() string {
	return "Loads the memory for the current user.\n\nArgs:\n  query: The query to load the memory for.\n\nReturns:\n  A list of memory results."
}
func (LoadMemoryTool) IsLongRunning() bool { return false }

func (t LoadMemoryTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        t.Name(),
		Description: t.Description(),
		ParametersJsonSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"query": map[string]any{"type": "string"}},
			"required":   []any{"query"},
		},
	}
}

// ProcessRequest appends the memory instruction (the flow adds the
// declaration).
func (LoadMemoryTool) ProcessRequest(_ callbacks.ToolContext, req *model.Request) error {
	req.AppendInstructions(loadMemoryInstruction)
	return nil
}

// Run searches the memory. google-adk's function returns a pydantic
// LoadMemoryResponse, which, not being a dict, is sent as
// {"result": {"memories": [...]}}; each memory is its model_dump.
func (t LoadMemoryTool) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	query, ok := args["query"].(string)
	if !ok {
		// google-adk's FunctionTool reports a missing mandatory argument to
		// the model instead of calling the function.
		if _, present := args["query"]; !present {
			return tool.MissingArgumentsResult("load_memory", "query"), nil
		}
		// google-adk passes it on to the memory service, whose
		// unicodedata.normalize refuses it.
		return nil, &ArgumentTypeError{Message: "normalize() argument 2 must be str, not " + pyTypeName(args["query"])}
	}
	resp, err := ctx.SearchMemory(query)
	if err != nil {
		return nil, err
	}
	memories := make([]any, 0, len(resp.Memories))
	for _, m := range resp.Memories {
		memories = append(memories, entryValue(m))
	}
	return map[string]any{"result": map[string]any{"memories": memories}}, nil
}

// entryValue is a memory as google-adk's model_dump(exclude_none) of a
// MemoryEntry: content and custom_metadata always, the optional fields
// when set.
func entryValue(m memory.Entry) map[string]any {
	md := m.CustomMetadata
	if md == nil {
		md = map[string]any{}
	}
	v := map[string]any{"content": m.Content, "custom_metadata": md}
	if m.ID != "" {
		v["id"] = m.ID
	}
	if m.Author != "" {
		v["author"] = m.Author
	}
	if m.Timestamp != "" {
		v["timestamp"] = m.Timestamp
	}
	return v
}

// PreloadMemoryTool is google-adk's preload_memory: never declared to the
// model, it searches the memory with the text of the user's message before
// every model request and puts what it finds into the request as a user
// content at the current-turn boundary. It needs RunnerConfig.Memory; a
// failed search is logged and leaves the request as it was.
type PreloadMemoryTool struct{}

func (PreloadMemoryTool) Name() string                            { return "preload_memory" }
func (PreloadMemoryTool) Description() string                     { return "preload_memory" }
func (PreloadMemoryTool) IsLongRunning() bool                     { return false }
func (PreloadMemoryTool) Declaration() *genai.FunctionDeclaration { return nil }

// Run is never called: the model is not told of the tool.
func (PreloadMemoryTool) Run(callbacks.ToolContext, map[string]any) (any, error) {
	return nil, fmt.Errorf("preload_memory is not a callable tool")
}

// ProcessRequest adds the past conversations matching the user's message.
func (PreloadMemoryTool) ProcessRequest(ctx callbacks.ToolContext, req *model.Request) error {
	var texts []string
	if uc := ctx.UserContent(); uc != nil {
		for _, p := range uc.Parts {
			if p != nil && p.Text != "" && !p.Thought {
				texts = append(texts, p.Text)
			}
		}
	}
	query := strings.Join(texts, " ")
	if query == "" {
		return nil
	}
	resp, err := ctx.SearchMemory(query)
	if err != nil {
		logger(ctx).Warn("Failed to preload memory", "query_length", len(query), "err", err)
		return nil
	}
	var lines []string
	for _, m := range resp.Memories {
		if m.Timestamp != "" {
			lines = append(lines, "Time: "+m.Timestamp)
		}
		if text := m.Text(" "); text != "" {
			if m.Author != "" {
				text = m.Author + ": " + text
			}
			lines = append(lines, text)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	text := "The following content is from your previous conversations with the user.\nThey may be useful for answering the user's current query.\n<PAST_CONVERSATIONS>\n" +
		strings.Join(lines, "\n") + "\n</PAST_CONVERSATIONS>\n"
	insertTransientUserContent(req, []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: text}}}})
	return nil
}

// logger is the runner's logger when ctx is the engine's, else a discarding
// one (a tool context built outside a runner).
func logger(ctx callbacks.ReadonlyContext) *slog.Logger {
	if l, ok := ctx.(interface{ Logger() *slog.Logger }); ok && l.Logger() != nil {
		return l.Logger()
	}
	return slog.New(slog.DiscardHandler)
}

var (
	_ tool.Tool             = LoadMemoryTool{}
	_ tool.RequestProcessor = LoadMemoryTool{}
	_ tool.Tool             = PreloadMemoryTool{}
	_ tool.RequestProcessor = PreloadMemoryTool{}
)
