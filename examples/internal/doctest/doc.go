// Package doctest checks that the Go code shown in the documentation is
// real: every Go block of the README and every Go sketch in a package's
// doc.go is, line for line, the body of an Example function of that
// package, so `go test` compiles it and, where the Example has an Output
// comment, runs it and checks what it prints. It has no code of its own;
// the check is its test.
//
// A README block names the function it is the body of in a comment on the
// line before it (an Example, or a helper of that package's tests that a
// test calls), optionally followed by ": " and a description:
//
//	<!-- snippet: ops/activation ExampleActivation_Apply -->
//
// A doc.go sketch is found by content: an indented block of the package
// comment that reads as Go (it has ":=", "func " or a call of a package
// function) must equal some Example's body. A sketch of test code, which
// uses the test's t (the helpers of the test packages take a testing.TB,
// which an Example does not have), may equal a Test's body instead: go
// test runs it too. Other indented blocks (formulas, tables, file lists)
// are left alone.
package doctest
