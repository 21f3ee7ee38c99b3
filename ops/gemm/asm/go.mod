module github.com/geluproject/gelu/ops/gemm/asm

go 1.26

require github.com/mmcloughlin/avo v0.6.0

// golang.org/x/tools is raised from avo's v0.16.1, which does not build with
// Go 1.26.
require (
	golang.org/x/mod v0.29.0 // indirect
	golang.org/x/sync v0.17.0 // indirect
	golang.org/x/tools v0.38.0 // indirect
)
