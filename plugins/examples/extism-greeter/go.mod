module github.com/adkhost/adkhost/plugins/examples/extism-greeter

go 1.24

require github.com/extism/go-pdk v1.1.3
