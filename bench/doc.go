// Package bench compares the cost of one user turn in adkhost's engine with
// the same turn in google.golang.org/adk/v2 (adk-go). It is a separate module
// so the main module never depends on adk-go; everything lives in the test
// files:
//
//	go test -run '^$' -bench BenchmarkTurn -benchmem
//	go run ./cmd/turnratio
//
// The scenario, identical for both runtimes: one LlmAgent with one Go
// function tool get_weather(city), a scripted model that answers its first
// call of a turn with a function call and its second with text, an in-memory
// session service and one user message. A timed iteration is Runner.Run on a
// session that already holds 0 or 10 earlier turns, iterated to its end.
package bench
