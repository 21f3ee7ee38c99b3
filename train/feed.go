package train

// Binding a batch's named fields to the graph's inputs: ids converted to
// the input's float dtype once, here, and an evaluation batch of any
// number of rows cut into (padded) chunks of the graph's rows.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/geluproject/gelu/datasets"
	"github.com/geluproject/gelu/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// feed binds the batch field of one name to one graph input.
type feed struct {
	field string
	node  *G.Node
	buf   *tensor.Dense // the node's dtype and shape: converted ids, chunked rows
}

// feeds are a model's inputs in binding order: Input ("x"), Target ("y"),
// then Model.Inputs by name. rows is the graph's batch size, the first
// dimension of every input; train the rows of a training batch: rows, or
// in data-parallel training the global batch this rank takes a share of.
type feeds struct {
	list  []feed
	rows  int
	train int
}

func newFeeds(m Model) (*feeds, error) {
	f := &feeds{}
	add := func(field string, n *G.Node) error {
		if n == nil {
			return fmt.Errorf("Model.Inputs[%q] is nil", field)
		}
		if n.Dims() == 0 || (n.Dtype() != tensor.Float32 && n.Dtype() != tensor.Float64) {
			return fmt.Errorf("input %q for the field %q is %v%v, want a float32 or float64 node with rows first", n.Name(), field, n.Dtype(), n.Shape())
		}
		for _, o := range f.list {
			if o.node == n {
				return fmt.Errorf("input %q is bound to both the fields %q and %q", n.Name(), o.field, field)
			}
		}
		if len(f.list) > 0 && n.Shape()[0] != f.rows {
			return fmt.Errorf("input %q has %d rows but %q has %d: every input needs the batch's rows first", n.Name(), n.Shape()[0], f.list[0].node.Name(), f.rows)
		}
		f.rows = n.Shape()[0]
		f.list = append(f.list, feed{field: field, node: n})
		return nil
	}
	if m.Input != nil {
		if err := add("x", m.Input); err != nil {
			return nil, err
		}
	}
	if m.Target != nil {
		if err := add("y", m.Target); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Inputs)) {
		if (name == "x" && m.Input != nil) || (name == "y" && m.Target != nil) {
			return nil, fmt.Errorf("Model.Inputs[%q] repeats the field Model.%s binds", name, map[string]string{"x": "Input", "y": "Target"}[name])
		}
		if err := add(name, m.Inputs[name]); err != nil {
			return nil, err
		}
	}
	if len(f.list) == 0 {
		return nil, fmt.Errorf("the model has no inputs: set Model.Input (and Target) or Model.Inputs")
	}
	f.train = f.rows
	return f, nil
}

// check reports a field of b that is missing or does not fit its input.
// Training batches must have exactly the rows of a training batch
// (exact); evaluation batches any number.
func (f *feeds) check(b datasets.Batch, exact bool) error {
	rows := -1
	for _, fd := range f.list {
		field, ok := b.Field(fd.field)
		if !ok {
			return fmt.Errorf("batches have no field %q for input %q (they have %s)", fd.field, fd.node.Name(), fieldNames(b))
		}
		shape := fd.node.Shape()
		if len(field.Shape) != len(shape) || !slices.Equal(field.Shape[1:], []int(shape[1:])) || (exact && field.Shape[0] != f.train) {
			if f.train != f.rows && len(field.Shape) == len(shape) {
				return fmt.Errorf("field %q is %s, want global batches of %d rows, of which input %q %v%v takes this rank's share", fd.field, describe(field), f.train, fd.node.Name(), fd.node.Dtype(), shape)
			}
			return fmt.Errorf("field %q is %s, input %q expects %v%v", fd.field, describe(field), fd.node.Name(), fd.node.Dtype(), shape)
		}
		if rows >= 0 && field.Shape[0] != rows {
			return fmt.Errorf("field %q has %d rows, the batch's other fields %d", fd.field, field.Shape[0], rows)
		}
		rows = field.Shape[0]
		switch {
		case field.IDs == nil && field.Values == nil:
			return fmt.Errorf("field %q holds neither ids nor values", fd.field)
		case field.IDs != nil && len(field.IDs) != product(field.Shape):
			return fmt.Errorf("field %q has %d ids for shape %v", fd.field, len(field.IDs), field.Shape)
		case field.IDs == nil && (field.Values.Dtype() != fd.node.Dtype() || !graph.SameShape(field.Values.Shape(), tensor.Shape(field.Shape))):
			return fmt.Errorf("field %q is %v%v, input %q expects %v%v", fd.field, field.Values.Dtype(), field.Values.Shape(), fd.node.Name(), fd.node.Dtype(), shape)
		}
	}
	if b.Size < 1 || b.Size > rows {
		return fmt.Errorf("batch has %d real rows of %d", b.Size, rows)
	}
	return nil
}

// describe says what a field holds: "ids (32, 8)" or "float32(32, 4)".
func describe(f datasets.Field) string {
	if f.Values != nil {
		return fmt.Sprint(f.Values.Dtype(), tensor.Shape(f.Shape))
	}
	return fmt.Sprint("ids ", tensor.Shape(f.Shape))
}

func fieldNames(b datasets.Batch) string {
	var names []string
	for _, f := range b.Fields {
		names = append(names, fmt.Sprintf("%q", f.Name))
	}
	if names == nil {
		return "none"
	}
	return fmt.Sprint(names)
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// set binds rows [start, start+n) of every field of b to m's inputs; the
// graph's rows past n repeat those rows cyclically (real examples, never
// scored). A whole batch of float values is bound in place, uncopied.
func (f *feeds) set(m *graph.Machine, b datasets.Batch, start, n int) error {
	for i := range f.list {
		fd := &f.list[i]
		field, _ := b.Field(fd.field)
		if field.Values != nil && start == 0 && n == f.rows && field.Shape[0] == f.rows {
			if err := m.Set(fd.node, field.Values); err != nil {
				return err
			}
			continue
		}
		if fd.buf == nil {
			fd.buf = tensor.New(tensor.Of(fd.node.Dtype()), tensor.WithShape(fd.node.Shape().Clone()...))
		}
		width := product(field.Shape[1:])
		var err error
		switch dst := fd.buf.Data().(type) {
		case []float32:
			err = fillRows(dst, field, width, start, n, f.rows)
		case []float64:
			err = fillRows(dst, field, width, start, n, f.rows)
		}
		if err != nil {
			return fmt.Errorf("field %q: %w", fd.field, err)
		}
		if err := m.Set(fd.node, fd.buf); err != nil {
			return err
		}
	}
	return nil
}

// maxExactID is the largest id magnitude each float dtype holds exactly,
// with room to spare: ids are below it (2²⁴ for float32, 2⁵³ for float64).
func maxExactID[T float32 | float64]() int64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 1 << 24
	}
	return 1 << 53
}

// fillRows writes rows [start, start+n) of field into the first n rows of
// dst (rows of width elements) and repeats them over the rest.
func fillRows[T float32 | float64](dst []T, field datasets.Field, width, start, n, rows int) error {
	limit := maxExactID[T]()
	for r := range rows {
		src := start + r%n
		out := dst[r*width : (r+1)*width]
		if field.IDs != nil {
			for j, id := range field.IDs[src*width : (src+1)*width] {
				if int64(id) >= limit || int64(id) <= -limit {
					return fmt.Errorf("id %d at row %d is not exactly representable in %T (want |id| < %d)", id, src, out[0], limit)
				}
				out[j] = T(id)
			}
			continue
		}
		switch v := field.Values.Data().(type) {
		case []float32:
			for j, x := range v[src*width : (src+1)*width] {
				out[j] = T(x)
			}
		case []float64:
			for j, x := range v[src*width : (src+1)*width] {
				out[j] = T(x)
			}
		}
	}
	return nil
}
