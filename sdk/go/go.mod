module github.com/adkhost/adkhost/sdk/go

go 1.24

require github.com/adkhost/adkhost/abi v0.0.0

// Inside this repository the SDK builds against the abi beside it. A guest
// outside the repository that depends on an unpublished checkout adds the
// same two replace lines (see README.md).
replace github.com/adkhost/adkhost/abi => ../../abi
