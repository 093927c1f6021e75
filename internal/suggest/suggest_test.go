package suggest

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"before_model", "after_model", "before_tool", "weather"}
	for _, tc := range []struct{ got, want string }{
		{"befor_model", "before_model"},
		{"AFTER_MODEL", "after_model"},
		{"after_model", ""}, // the same name is never a suggestion
		{"wether", "weather"},
		{"xyz", ""},
		{"", ""},
	} {
		if got := Nearest(tc.got, names); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.got, got, tc.want)
		}
	}
	if got, want := DidYouMean("wether", names), " (did you mean weather?)"; got != want {
		t.Errorf("DidYouMean = %q, want %q", got, want)
	}
}
