package engine

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// DefaultSummaryPromptTemplate is google-adk LlmEventSummarizer's default
// prompt; {conversation_history} is replaced by the formatted events.
const DefaultSummaryPromptTemplate = "The following is a conversation history between a user and an AI agent." +
	" It may or may not start from a compacted history. Please identify and" +
	" reiterate the user request, summarize the context so far, focusing on" +
	" key decisions made and information obtained, as well as any unresolved" +
	" questions or tasks. " +
	"CRITICAL INSTRUCTIONS: " +
	"1. Explicitly identify and state the primary language used by the user " +
	"at the top of your summary (e.g., \"Conversation Language: English\"). " +
	"2. If the agent called any tools, accurately list the exact tool names " +
	"used to maintain tool grounding. " +
	"The rest of the summary should be concise and capture the" +
	" essence of the interaction.\n\n{conversation_history}"

// maxToolContentChars caps each tool call's args and each tool response in
// the prompt, so compaction does not inflate the context it shrinks.
const maxToolContentChars = 2000

// LLMSummarizer summarizes events with a model (google-adk
// LlmEventSummarizer): the events are written out as text lines, put into
// the prompt template, and the model's answer becomes the summary.
type LLMSummarizer struct {
	model    model.Model
	template string
}

var _ Summarizer = (*LLMSummarizer)(nil)

// NewLLMSummarizer returns a summarizer asking m. promptTemplate must hold
// {conversation_history} and may escape braces as {{ and }} (Python's
// str.format); "" means DefaultSummaryPromptTemplate.
func NewLLMSummarizer(m model.Model, promptTemplate string) *LLMSummarizer {
	if promptTemplate == "" {
		promptTemplate = DefaultSummaryPromptTemplate
	}
	return &LLMSummarizer{model: m, template: promptTemplate}
}

// Summarize asks the model to summarize events and returns the compaction
// event: authored "user", with a new invocation id, the usage of the
// summary call, and Actions.Compaction spanning the first to the last
// event's timestamp with the model's first content (role "model"). It
// returns nil, nil for no events or an answer without content.
func (s *LLMSummarizer) Summarize(ctx context.Context, events []*session.Event) (*session.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	prompt, err := formatSummaryPrompt(s.template, formatEventsForPrompt(events))
	if err != nil {
		return nil, err
	}
	req := &model.Request{
		Model:    s.model.Name(),
		Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: prompt}}}},
		Config:   &genai.GenerateContentConfig{},
	}
	var summary *model.Response
	for resp, err := range s.model.GenerateContent(ctx, req, false) {
		if err != nil {
			return nil, fmt.Errorf("summarizer: %w", err)
		}
		if resp != nil && resp.Content != nil {
			summary = resp
			break
		}
	}
	if summary == nil {
		return nil, nil
	}
	content := *summary.Content // the model's response is not changed
	content.Role = "model"
	ev := session.NewEvent(session.NewEventID(), "user", "")
	ev.UsageMetadata = summary.UsageMetadata
	ev.Actions.Compaction = &session.EventCompaction{
		StartTimestamp:   session.TimeToFloat(events[0].Timestamp),
		EndTimestamp:     session.TimeToFloat(events[len(events)-1].Timestamp),
		CompactedContent: &content,
	}
	return ev, nil
}

// formatEventsForPrompt writes one line per text, thought, tool call and
// tool response. Thoughts of a compaction event (a previous summary's
// reasoning) and credential requests (the user's secrets) are left out.
func formatEventsForPrompt(events []*session.Event) string {
	var lines []string
	for _, e := range events {
		if e.Content == nil || len(e.Content.Parts) == 0 || isCredentialEvent(e) {
			continue
		}
		compaction := e.Actions.Compaction != nil
		for i, p := range e.Content.Parts {
			if p == nil {
				continue
			}
			switch {
			case p.Thought && p.Text != "":
				if !compaction {
					lines = append(lines, e.Author+" (thought): "+p.Text)
				}
			case p.Text != "":
				lines = append(lines, e.Author+": "+p.Text)
			}
			if fc := p.FunctionCall; fc != nil {
				lines = append(lines, fmt.Sprintf("%s called tool: %s(%s)", e.Author, fc.Name, truncateToolContent(pyfmt.StrOrdered(fc.Args, e.PartKeyOrder(i)))))
			}
			if fr := p.FunctionResponse; fr != nil {
				lines = append(lines, fmt.Sprintf("Tool response from %s: %s", fr.Name, truncateToolContent(pyfmt.StrOrdered(fr.Response, e.PartKeyOrder(i)))))
			}
		}
	}
	return strings.Join(lines, "\n")
}

func isCredentialEvent(e *session.Event) bool {
	for _, p := range e.Content.Parts {
		if p == nil {
			continue
		}
		if fc := p.FunctionCall; fc != nil && fc.Name == "adk_request_credential" {
			return true
		}
		if fr := p.FunctionResponse; fr != nil && fr.Name == "adk_request_credential" {
			return true
		}
	}
	return false
}

// truncateToolContent caps text at maxToolContentChars characters and says
// how many were dropped.
func truncateToolContent(text string) string {
	n := utf8.RuneCountInString(text)
	if n <= maxToolContentChars {
		return text
	}
	cut := 0
	for i := range text {
		if cut == maxToolContentChars {
			return fmt.Sprintf("%s... [truncated %d chars]", text[:i], n-maxToolContentChars)
		}
		cut++
	}
	return text
}

// formatSummaryPrompt is template.format(conversation_history=history):
// {conversation_history} is replaced, {{ and }} are literal braces, and any
// other replacement field is an error, as it is for Python.
func formatSummaryPrompt(template, history string) (string, error) {
	const field = "conversation_history"
	var b strings.Builder
	for i := 0; i < len(template); i++ {
		c := template[i]
		switch {
		case c == '{' && i+1 < len(template) && template[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(template) && template[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '}':
			return "", fmt.Errorf("summary prompt template: single '}' at byte %d", i)
		case c == '{':
			end := strings.IndexByte(template[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("summary prompt template: single '{' at byte %d", i)
			}
			if name := template[i+1 : i+end]; name != field {
				return "", fmt.Errorf("summary prompt template: unknown field {%s}; only {%s} is available", name, field)
			}
			b.WriteString(history)
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
