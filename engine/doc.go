// Package engine is the ADK runtime: the Runner that turns a user message
// into events, the agents it runs (LlmAgent and the workflow agents), and the
// LLM flow whose ReAct loop lives in flow.go. It knows nothing of Wasm: tools,
// callbacks and plugins are Go interfaces.
package engine
