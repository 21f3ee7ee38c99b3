//go:build !amd64 || noasm

package activation

// exact64 is false: without the amd64 assembly every activation runs the
// portable loops.
const exact64 = false
