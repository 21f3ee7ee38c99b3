package graph

import "sync/atomic"

// paramsVersion counts the changes of parameter values in this process.
var paramsVersion atomic.Uint64

// MarkParamsChanged records that some parameter's values have changed. Code
// that writes into parameter tensors calls it after writing: loading weights,
// an optimizer step, an edit by hand. Caches of values computed from the
// parameters (nn.KVCache) compare ParamsVersion with the version they were
// computed at, which costs one atomic load instead of reading the weights.
// The counter is process-wide, not per graph: a change in one model makes
// every cache start again, which is correct, only sometimes unnecessary.
func MarkParamsChanged() { paramsVersion.Add(1) }

// ParamsVersion returns the number of MarkParamsChanged calls so far: two
// equal results mean no parameter was marked changed in between.
func ParamsVersion() uint64 { return paramsVersion.Load() }
