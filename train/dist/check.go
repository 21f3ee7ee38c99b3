package dist

// Agreement checks: every rank must train the same model on the same data
// and keep the same parameters. A disagreement found at start (a different
// model or data) or during training (parameters that drifted apart) is an
// error on every rank, naming what differs and where.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/geluproject/gelu/graph"
	"gorgonia.org/tensor"
)

// fact is one thing the ranks must agree on.
type fact struct{ Key, Value string }

// maxListed is how many differences an error lists.
const maxListed = 5

// CheckModel fails unless every rank has the same parameters in the same
// order: names, dtypes and shapes. Run it before training, on every rank.
func CheckModel(c Comm, params []graph.NamedTensor) error {
	facts := []fact{{"number of parameters", strconv.Itoa(len(params))}}
	for i, p := range params {
		v := "no value"
		if p.Value != nil {
			v = fmt.Sprintf("%v %v", p.Value.Dtype(), p.Value.Shape())
		}
		facts = append(facts, fact{fmt.Sprintf("parameter %d", i), fmt.Sprintf("%q %s", p.Name, v)})
	}
	return agree(c, "the model", facts)
}

// CheckSame fails unless every rank passes the same facts, such as the
// data's sizes and seeds: what names them in the error ("the data").
func CheckSame(c Comm, what string, facts map[string]string) error {
	var fs []fact
	for _, k := range slices.Sorted(maps.Keys(facts)) {
		fs = append(fs, fact{k, facts[k]})
	}
	return agree(c, what, fs)
}

// agree gathers every rank's facts and reports, identically on every rank,
// the keys on which they differ.
func agree(c Comm, what string, facts []fact) error {
	mine, err := json.Marshal(facts)
	if err != nil {
		return fmt.Errorf("dist: checking %s: %w", what, err)
	}
	all, err := allgatherBytes(c, mine)
	if err != nil {
		return fmt.Errorf("dist: checking %s: %w", what, err)
	}
	ranks := make([]map[string]string, len(all))
	var keys []string
	seen := map[string]bool{}
	for r, b := range all {
		var fs []fact
		if err := json.Unmarshal(b, &fs); err != nil {
			return fmt.Errorf("dist: checking %s: rank %d sent unreadable facts: %w", what, r, err)
		}
		ranks[r] = map[string]string{}
		for _, f := range fs {
			ranks[r][f.Key] = f.Value
			if !seen[f.Key] {
				seen[f.Key] = true
				keys = append(keys, f.Key)
			}
		}
	}
	var diffs []string
	for _, k := range keys {
		vals := make([]string, len(ranks))
		for r := range ranks {
			v, ok := ranks[r][k]
			if !ok {
				v = "nothing"
			}
			vals[r] = v
		}
		if d := describe(vals); d != "" {
			diffs = append(diffs, k+": "+d)
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	more := ""
	if len(diffs) > maxListed {
		more = fmt.Sprintf("; and %d more", len(diffs)-maxListed)
		diffs = diffs[:maxListed]
	}
	return fmt.Errorf("dist: ranks disagree on %s: %s%s", what, strings.Join(diffs, "; "), more)
}

// describe says which ranks hold which value ("rank 0 has a, ranks 1, 2
// have b"), or "" when all agree.
func describe(vals []string) string {
	var order []string
	who := map[string][]string{}
	for r, v := range vals {
		if who[v] == nil {
			order = append(order, v)
		}
		who[v] = append(who[v], strconv.Itoa(r))
	}
	if len(order) < 2 {
		return ""
	}
	parts := make([]string, len(order))
	for i, v := range order {
		rs := who[v]
		if len(rs) == 1 {
			parts[i] = "rank " + rs[0] + " has " + v
		} else {
			parts[i] = "ranks " + strings.Join(rs, ", ") + " have " + v
		}
	}
	return strings.Join(parts, ", ")
}

// allgatherBytes gathers a byte string of any length from every rank.
func allgatherBytes(c Comm, b []byte) ([][]byte, error) {
	n := c.Size()
	lens := make([]int64, n)
	if err := c.Allgather([]int64{int64(len(b))}, lens); err != nil {
		return nil, err
	}
	m := slices.Max(lens)
	if m > math.MaxInt32/int64(n) {
		return nil, fmt.Errorf("dist: gathering %d bytes from each of %d ranks: too large", m, n)
	}
	send := make([]byte, m)
	copy(send, b)
	recv := make([]byte, int(m)*n)
	if err := c.Allgather(send, recv); err != nil {
		return nil, err
	}
	out := make([][]byte, n)
	for r := range out {
		out[r] = recv[int64(r)*m : int64(r)*m+lens[r]]
	}
	return out, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// valueBytes is a tensor's memory, nil unless it is a contiguous float32
// or float64 tensor.
func valueBytes(t *tensor.Dense) []byte {
	if t.RequiresIterator() || t.DataSize() != t.Shape().TotalSize() {
		return nil
	}
	switch t.Dtype() {
	case tensor.Float32:
		s := t.Float32s()
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
	case tensor.Float64:
		s := t.Float64s()
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 8*len(s))
	}
	return nil
}

// CheckParams fails unless every rank holds bit-identical parameter
// values: ranks compare a CRC-32C of each parameter (a random difference
// escapes it with probability 2⁻³²), and on a mismatch the error, the same
// on every rank, names the first parameter that differs, its first
// differing element and each rank's value there. Call it every K steps
// (it reads every parameter once); the parameters must already have
// passed CheckModel.
func CheckParams(c Comm, params []graph.NamedTensor) error {
	for i, p := range params {
		if p.Value == nil || valueBytes(p.Value) == nil {
			return fmt.Errorf("dist.CheckParams: parameter %d (%q) is not a contiguous float32 or float64 tensor", i, p.Name)
		}
	}
	n := c.Size()
	mine := make([]int64, len(params))
	for i, p := range params {
		mine[i] = int64(crc32.Checksum(valueBytes(p.Value), castagnoli))
	}
	all := make([]int64, n*len(params))
	if err := c.Allgather(mine, all); err != nil {
		return fmt.Errorf("dist.CheckParams: %w", err)
	}
	for i, p := range params {
		same := true
		for r := 1; r < n; r++ {
			same = same && all[r*len(params)+i] == all[i]
		}
		if !same {
			return firstDifference(c, i, len(params), p)
		}
	}
	return nil
}

// firstDifference finds where parameter i differs from rank 0's.
func firstDifference(c Comm, i, of int, p graph.NamedTensor) error {
	v := p.Value
	mine := valueBytes(v)
	theirs := make([]byte, len(mine))
	if c.Rank() == 0 {
		copy(theirs, mine)
	}
	if err := c.Bcast(theirs, 0); err != nil {
		return fmt.Errorf("dist.CheckParams: parameter %q differs across ranks (finding where: %w)", p.Name, err)
	}
	size := len(mine) / v.Shape().TotalSize()
	first := int64(-1)
	for j := 0; j < len(mine); j += size {
		if string(mine[j:j+size]) != string(theirs[j:j+size]) {
			first = int64(j / size)
			break
		}
	}
	firsts := make([]int64, c.Size())
	if err := c.Allgather([]int64{first}, firsts); err != nil {
		return fmt.Errorf("dist.CheckParams: parameter %q differs across ranks (finding where: %w)", p.Name, err)
	}
	// The first element any rank differs at; every rank reports its value
	// there, read as bits so that every rank formats the same numbers.
	at := int64(-1)
	for _, f := range firsts {
		if f >= 0 && (at < 0 || f < at) {
			at = f
		}
	}
	if at < 0 {
		return fmt.Errorf("dist.CheckParams: parameter %q (%d of %d) has different checksums but equal values across ranks", p.Name, i+1, of)
	}
	bits := make([]int64, c.Size())
	var b [8]byte
	copy(b[:], mine[int(at)*size:int(at+1)*size])
	if err := c.Allgather([]int64{int64(binary.LittleEndian.Uint64(b[:]))}, bits); err != nil {
		return fmt.Errorf("dist.CheckParams: parameter %q differs across ranks (finding where: %w)", p.Name, err)
	}
	vals := make([]string, len(bits))
	for r, x := range bits {
		if size == 4 {
			vals[r] = strconv.FormatFloat(float64(math.Float32frombits(uint32(x))), 'g', -1, 32)
		} else {
			vals[r] = strconv.FormatFloat(math.Float64frombits(uint64(x)), 'g', -1, 64)
		}
	}
	return fmt.Errorf("dist: parameters differ across ranks: first at %q (parameter %d of %d), element %v: %s",
		p.Name, i+1, of, unravel(v.Shape(), int(at)), describe(vals))
}

// unravel turns a flat index into a row-major index.
func unravel(shape tensor.Shape, j int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = j % shape[d]
		j /= shape[d]
	}
	return idx
}

// Broadcast copies root's parameter values to every rank (as DDP does when
// it wraps a model), so that the ranks start from the same state whatever
// they loaded or initialized. The parameters must already have passed
// CheckModel.
func Broadcast(c Comm, params []graph.NamedTensor, root int) error {
	for i, p := range params {
		if p.Value == nil || valueBytes(p.Value) == nil {
			return fmt.Errorf("dist.Broadcast: parameter %d (%q) is not a contiguous float32 or float64 tensor", i, p.Name)
		}
		if err := c.Bcast(valueBytes(p.Value), root); err != nil {
			return fmt.Errorf("dist.Broadcast: parameter %q: %w", p.Name, err)
		}
	}
	return nil
}

// Agree is the collective end of something each rank did on its own (a
// file written by rank 0, a batch read): every rank passes its own outcome
// and gets nil when every rank passed nil, and otherwise an error naming
// each rank that failed with its message, the same text on every rank (on
// a rank that failed it also wraps that rank's own error, for errors.Is).
// So one rank's failure stops all of them at the same point, instead of
// leaving the others waiting in their next collective. It costs one
// 8-byte all-reduce when all succeeded.
func Agree(c Comm, err error) error {
	failed := []int64{0}
	if err != nil {
		failed[0] = 1
	}
	if cerr := c.Allreduce(failed, Max); cerr != nil {
		return errors.Join(err, fmt.Errorf("dist.Agree: %w", cerr))
	}
	if failed[0] == 0 {
		return nil
	}
	var msg []byte
	if err != nil {
		if msg = []byte(err.Error()); len(msg) == 0 {
			msg = []byte("failed (an error without a message)")
		}
	}
	all, cerr := allgatherBytes(c, msg)
	if cerr != nil {
		return errors.Join(err, fmt.Errorf("dist.Agree: %w", cerr))
	}
	var parts []string
	for r, m := range all {
		if len(m) > 0 {
			parts = append(parts, fmt.Sprintf("rank %d: %s", r, m))
		}
	}
	return &rankError{msg: strings.Join(parts, "; "), own: err}
}

// rankError is Agree's error: the same text on every rank, wrapping this
// rank's own error where it failed.
type rankError struct {
	msg string
	own error
}

func (e *rankError) Error() string { return e.msg }
func (e *rankError) Unwrap() error { return e.own }
