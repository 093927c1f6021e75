package memory

import (
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// MaxSearchResults is how many memories a search returns at most
// (google-adk _MAX_SEARCH_RESULTS).
const MaxSearchResults = 10

// Record is an ingested event as google-adk's in-memory service matches
// it: a copy of what a search compares and returns. NewRecord builds one
// and Rank ranks them, so that a service keeping records elsewhere (a
// file) searches exactly as InMemoryService does.
type Record struct {
	ID, Author string
	Time       time.Time
	// Content is the event's content as JSON, decoded by Entry.
	Content []byte
	// Words are the searchable words of the event's text
	// (google-adk _extract_searchable_words), sorted, each once.
	Words []string
	// TextLower is the event's text, NFC-normalized and lowercased, in
	// which a non-ASCII query word also matches as a substring.
	TextLower string
}

// NewRecord copies what a search needs of an event; nil for an event
// without content parts, which google-adk does not ingest.
func NewRecord(e *session.Event) (*Record, error) {
	if e == nil || e.Content == nil || len(e.Content.Parts) == 0 {
		return nil, nil
	}
	data, err := json.Marshal(e.Content)
	if err != nil {
		return nil, fmt.Errorf("memory: encode content of event %s: %w", e.ID, err)
	}
	text := partsText(e.Content.Parts, " ")
	return &Record{
		ID: e.ID, Author: e.Author, Time: e.Timestamp, Content: data,
		Words: slices.Sorted(maps.Keys(searchableWords(text))), TextLower: pyLower(normNFC(text)),
	}, nil
}

// score is how many of queryWords r contains (google-adk: any() per query
// word over the event's words, then a substring test for non-ASCII ones).
func (r *Record) score(queryWords []string) int {
	if len(r.Words) == 0 {
		return 0
	}
	n := 0
	for _, q := range queryWords {
		if _, ok := slices.BinarySearch(r.Words, q); ok || !isASCII(q) && strings.Contains(r.TextLower, q) {
			n++
		}
	}
	return n
}

// Rank returns the records of recs that share a word with query, the
// MaxSearchResults best, best first, equal scores in the order recs
// yields them (google-adk's stable sort over its ingestion order).
func Rank(query string, recs iter.Seq[*Record]) []*Record {
	queryWords := slices.Sorted(maps.Keys(wordsLower(query)))
	type scored struct {
		score int
		rec   *Record
	}
	var hits []scored
	for r := range recs {
		if n := r.score(queryWords); n > 0 {
			hits = append(hits, scored{n, r})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	out := make([]*Record, 0, min(len(hits), MaxSearchResults))
	for _, h := range hits[:min(len(hits), MaxSearchResults)] {
		out = append(out, h.rec)
	}
	return out
}

// Entry returns the memory r stands for, with a content of its own.
func (r *Record) Entry() (Entry, error) {
	c := new(genai.Content)
	if err := json.Unmarshal(r.Content, c); err != nil {
		return Entry{}, fmt.Errorf("memory: decode content of event %s: %w", r.ID, err)
	}
	return Entry{
		Content: c, CustomMetadata: map[string]any{}, ID: r.ID, Author: r.Author,
		Timestamp: FormatTimestamp(r.Time),
	}, nil
}

// Response returns the search response for ranked records.
func Response(recs []*Record) (*SearchResponse, error) {
	resp := &SearchResponse{Memories: []Entry{}}
	for _, r := range recs {
		e, err := r.Entry()
		if err != nil {
			return nil, err
		}
		resp.Memories = append(resp.Memories, e)
	}
	return resp, nil
}
