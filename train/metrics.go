package train

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/geluproject/gelu/train/internal/atomicfile"
)

// metricsFiles appends per-step and per-evaluation rows to CSV and JSON
// Lines files. Numbers use Go's shortest exact formatting and no wall-clock
// time is recorded, so reruns write identical bytes.
type metricsFiles struct {
	files []*os.File
	bufs  []*bufio.Writer
}

var (
	stepCols = []string{"step", "epoch", "batch", "loss", "lr", "grad_norm"}
	evalCols = []string{"step", "epoch", "train_loss", "val_loss", "val_accuracy"}
)

// openMetrics starts the four files, or, when resuming at step > 0, keeps
// the rows a crash may have left beyond the checkpoint out: step rows up to
// step and evaluation rows up to evalsUpTo (the checkpoint's last
// evaluation). The kept rows are rewritten atomically, so a crash while
// resuming cannot lose them, and later rows are appended.
func openMetrics(dir string, step, evalsUpTo int) (*metricsFiles, error) {
	m := &metricsFiles{}
	for _, spec := range []struct {
		name string
		cols []string
		upTo int
	}{{"steps.csv", stepCols, step}, {"steps.jsonl", stepCols, step},
		{"evals.csv", evalCols, evalsUpTo}, {"evals.jsonl", evalCols, evalsUpTo}} {
		path := filepath.Join(dir, spec.name)
		var keep []byte
		if strings.HasSuffix(spec.name, ".csv") {
			keep = []byte(strings.Join(spec.cols, ",") + "\n")
		}
		if step > 0 {
			var err error
			if keep, err = rowsUpTo(path, spec.upTo, keep); err != nil {
				m.close()
				return nil, err
			}
		}
		err := atomicfile.WriteFile(path, func(w io.Writer) error { _, err := w.Write(keep); return err })
		if err != nil {
			m.close()
			return nil, fmt.Errorf("train: metrics: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("train: metrics: %w", err)
		}
		m.files, m.bufs = append(m.files, f), append(m.bufs, bufio.NewWriter(f))
	}
	return m, nil
}

// rowsUpTo returns the header (if any) and the rows of an existing metrics
// file whose step is at most step. A last line without its newline is what
// a kill in the middle of a write leaves; it is dropped unread.
func rowsUpTo(path string, step int, header []byte) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return header, nil
	}
	if err != nil {
		return nil, fmt.Errorf("train: metrics: %w", err)
	}
	out := append([]byte(nil), header...)
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || !bytes.HasSuffix(line, []byte("\n")) || (len(header) > 0 && s+"\n" == string(header)) {
			continue
		}
		var v int
		if strings.HasPrefix(s, "{") {
			_, err = fmt.Sscanf(s, `{"step":%d`, &v)
		} else {
			v, err = strconv.Atoi(s[:strings.IndexByte(s+",", ',')])
		}
		if err != nil {
			return nil, fmt.Errorf("train: metrics file %s: unreadable row %q", path, s)
		}
		if v <= step {
			out = append(out, line...)
		}
	}
	return out, nil
}

// cell is one value of a metrics row; a value not measured is an empty CSV
// cell and a JSON null. A measured value that is not finite is written
// as NaN, +Inf or -Inf in CSV and as null in JSON, which has no such
// numbers.
type cell struct {
	v        float64
	measured bool
	count    bool // an integer (step, epoch, batch), written as one
}

func (c cell) csv() string {
	switch {
	case c.count:
		return strconv.Itoa(int(c.v))
	case !c.measured:
		return ""
	case math.IsNaN(c.v):
		return "NaN"
	case math.IsInf(c.v, 0):
		return strconv.FormatFloat(c.v, 'g', -1, 64) // +Inf, -Inf
	}
	return strconv.FormatFloat(c.v, 'g', -1, 64)
}

func (c cell) json() string {
	if c.count {
		return strconv.Itoa(int(c.v))
	}
	if !c.measured || math.IsNaN(c.v) || math.IsInf(c.v, 0) {
		return "null"
	}
	return strconv.FormatFloat(c.v, 'g', -1, 64)
}

func (m *metricsFiles) write(csvIdx int, cols []string, vals []cell) error {
	var c, j strings.Builder
	j.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			c.WriteByte(',')
			j.WriteByte(',')
		}
		c.WriteString(v.csv())
		fmt.Fprintf(&j, "%q:%s", cols[i], v.json())
	}
	c.WriteByte('\n')
	j.WriteString("}\n")
	if _, err := m.bufs[csvIdx].WriteString(c.String()); err != nil {
		return err
	}
	_, err := m.bufs[csvIdx+1].WriteString(j.String())
	return err
}

// counted is an integer cell. Written as a float, 'g' would turn step
// 1000000 into "1e+06", which no reader of a step column expects.
func counted(n int) cell { return cell{float64(n), true, true} }

func (m *metricsFiles) step(s StepInfo) error {
	return m.write(0, stepCols, []cell{counted(s.Step), counted(s.Epoch), counted(s.Batch), {s.Loss, true, false}, {s.LR, true, false}, {s.GradNorm, true, false}})
}

// eval writes an evaluation's row: the train loss is measured when steps
// were taken since the previous evaluation; valLoss and valAccuracy say
// whether the validation values were.
func (m *metricsFiles) eval(e EvalInfo, valLoss, valAccuracy bool) error {
	if err := m.write(2, evalCols, []cell{counted(e.Step), counted(e.Epoch), {e.TrainLoss, e.TrainSteps > 0, false}, {e.ValLoss, valLoss, false}, {e.ValAccuracy, valAccuracy, false}}); err != nil {
		return err
	}
	return m.flush()
}

func (m *metricsFiles) flush() error {
	for i, b := range m.bufs {
		if err := b.Flush(); err != nil {
			return fmt.Errorf("train: metrics: %w", err)
		}
		if err := m.files[i].Sync(); err != nil {
			return fmt.Errorf("train: metrics: %w", err)
		}
	}
	return nil
}

func (m *metricsFiles) close() error {
	if m == nil {
		return nil
	}
	err := m.flush()
	for _, f := range m.files {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	return err
}
