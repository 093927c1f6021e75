// Package gosdktest runs the Go SDK's guests (sdk/go, a module of its own)
// end to end in the real sandbox: they are built for wasip1 from the SDK's
// module, loaded by sandbox.Runtime and called through every hook.
package gosdktest
