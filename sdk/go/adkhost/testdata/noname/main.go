// Command noname registers a tool but forgets adkhost.Module: loading it
// fails, and the host's error says why.
package main

import "github.com/adkhost/adkhost/sdk/go/adkhost"

func main() {}

func init() {
	adkhost.Tool("t", "A tool.", func(adkhost.ToolContext, struct{}) (string, error) { return "", nil })
}
