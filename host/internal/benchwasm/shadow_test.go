package benchwasm

import (
	"testing"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/tool"
)

// BenchmarkTurnShadowC separates what a Wasm call costs a turn from what
// the tool's result costs it: "shadow" is the Go tool's turn with the C
// guest's get_weather called inside it and its result thrown away, so the
// engine does exactly the Go turn's work. shadow minus go is the price of
// one call inside a turn; compare it with BenchmarkToolCallC, the same call
// in a loop, where the guest's code and memory stay in the caches.
//
//	go test -run '^$' -bench TurnShadowC -count 6 ./host/internal/benchwasm/
func BenchmarkTurnShadowC(b *testing.B) {
	rt, _ := benchRuntime(b)
	guestTool, goTool, closeTools := turnTools(b, rt, buildCWeather(b))
	defer closeTools()
	shadow, err := tool.NewFunction(tool.FunctionConfig{
		Name:        goTool.Name(),
		Description: goTool.Description(),
		Parameters:  goTool.Declaration().ParametersJsonSchema.(map[string]any),
		Fn: func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
			if _, err := guestTool.Run(ctx, args); err != nil {
				return nil, err
			}
			return goTool.Run(ctx, args)
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("shadow", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(shadow)) })
	b.Run("wasm", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(guestTool)) })
	b.Run("go", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(goTool)) })
}
