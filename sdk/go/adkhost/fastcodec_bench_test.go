package adkhost

import (
	"reflect"
	"testing"
)

// The tool_call path's pieces, with the plans and with encoding/json. Run
// them in a guest too, where the difference is what matters:
//
//	GOOS=wasip1 GOARCH=wasm go test -c -o sdk.wasm ./sdk/go/adkhost/
//
// then run sdk.wasm -test.bench . under a WASI runtime that provides the
// "adkhost" imports (sandbox's host module).

type benchArgs struct {
	City string `json:"city"`
	Days int    `json:"days,omitempty"`
}

type benchDay struct {
	Summary string  `json:"summary"`
	HighC   float64 `json:"highC"`
}

type benchForecast struct {
	City string     `json:"city"`
	Days []benchDay `json:"days"`
}

func BenchmarkArgs(b *testing.B) {
	raw := []byte(`{"city":"Paris","days":3}`)
	for _, bc := range []struct {
		name string
		dec  *argsDecoder
	}{{"plan", newArgsDecoder(reflect.TypeFor[benchArgs]())}, {"encoding-json", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var a benchArgs
				if err := decodeArgs(bc.dec, &inputStrings{data: raw}, raw, &a); err != nil || a.Days != 3 {
					b.Fatal(a, err)
				}
			}
		})
	}
}

func BenchmarkResult(b *testing.B) {
	f := &benchForecast{City: "Paris", Days: []benchDay{{"sunny", 21}, {"sunny", 22.5}, {"sunny", 23}}}
	for _, bc := range []struct {
		name string
		enc  encodeFunc
	}{{"plan", newEncoder(reflect.TypeFor[*benchForecast]())}, {"encoding-json", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte // reused, as the exports reuse the output buffer
			for b.Loop() {
				var err error
				if buf, err = appendResult(bc.enc, buf[:0], &f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkToolCallEnvelope(b *testing.B) {
	in := []byte(`{"abiVersion":1,"context":{"appName":"weather_app","userId":"u","sessionId":"s1","invocationId":"e-1","agentName":"root","userContent":{"role":"user","parts":[{"text":"Weather in Paris?"}]},"functionCallId":"adk-1"},"tool":"get_weather","args":{"city":"Paris","days":3}}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var tc toolCallInput
			if err := decodeToolCallInput(in, &tc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var tc toolCallInput
			if err := decode(in, &tc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
