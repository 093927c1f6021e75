package benchwasm

import "testing"

// TestPythonFloorBench is the Python floor row of make bench-wasm: a
// get_weather that does no work (no context, no state, a constant result
// the turn accepts), so what remains is the runtime's and the SDK's cost
// of any Python tool call: the interpreter entering dispatch, the input's
// decoding, the call and the output's encoding. The Python row minus this
// one is the cost of the tool's own body (its state write, its result).
func TestPythonFloorBench(t *testing.T) {
	enabled(t)
	sourceRow(t, "pyfloor", "weather.py", `from adkhost import tool


@tool
def get_weather(city: str, days: int = 1) -> dict:
    """Returns the weather forecast of a city."""
    return {"days": []}
`)
}
