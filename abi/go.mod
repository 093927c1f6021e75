module github.com/adkhost/adkhost/abi

go 1.24
