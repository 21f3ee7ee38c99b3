package experiment

// A finished run on disk: curve.csv (the evaluations, full precision) and
// run.json (the fingerprint, the step count, the values and vectors),
// written in that order, so that run.json vouches for a complete run.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/geluproject/gelu/train/report"
)

const runFile, curveFile = "run.json", "curve.csv"

type stored struct {
	Fingerprint string                `json:"fingerprint"`
	Steps       int                   `json:"steps"`
	Diverged    string                `json:"diverged,omitempty"`
	Values      map[string]jsonFloat  `json:"values,omitempty"`
	Vectors     map[string]jsonFloats `json:"vectors,omitempty"`
}

// jsonFloat is a float64 that survives JSON exactly, NaN and ±Inf as the
// strings "NaN", "+Inf", "-Inf".
type jsonFloat float64

type jsonFloats []jsonFloat

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte(`"` + report.FormatDigits(v, 1) + `"`), nil
	}
	return []byte(strconv.FormatFloat(v, 'g', -1, 64)), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	*f = jsonFloat(v)
	return err
}

func (r *Run[S]) save(fingerprint string) error {
	rows := make([][]any, len(r.Curve.Steps))
	for i, s := range r.Curve.Steps {
		rows[i] = []any{s}
		for k := range r.Curve.Metrics {
			rows[i] = append(rows[i], r.Curve.Values[k][i])
		}
	}
	if err := report.WriteCSV(filepath.Join(r.Dir, curveFile), append([]string{"step"}, r.Curve.Metrics...), rows); err != nil {
		return err
	}
	st := stored{Fingerprint: fingerprint, Steps: r.Steps, Diverged: r.Diverged,
		Values: map[string]jsonFloat{}, Vectors: map[string]jsonFloats{}}
	for k, v := range r.Values {
		st.Values[k] = jsonFloat(v)
	}
	for k, v := range r.Vectors {
		st.Vectors[k] = make(jsonFloats, len(v))
		for i, x := range v {
			st.Vectors[k][i] = jsonFloat(x)
		}
	}
	return report.WriteFileAtomic(filepath.Join(r.Dir, runFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(st)
	})
}

// storedFingerprint returns the fingerprint of the finished run in dir;
// ok is false when there is none.
func storedFingerprint(dir string) (fp string, ok bool) {
	raw, err := os.ReadFile(filepath.Join(dir, runFile))
	if err != nil {
		return "", false
	}
	var st stored
	if json.Unmarshal(raw, &st) != nil {
		return "", false
	}
	return st.Fingerprint, true
}

// load reads the run back when r.Dir holds a finished run with this
// fingerprint: ok is false (and err nil) when there is none, or it was
// made with other settings. A matching run whose files cannot be read is
// an error: it should not be silently trained again.
func (r *Run[S]) load(fingerprint string, metrics []string) (ok bool, err error) {
	raw, err := os.ReadFile(filepath.Join(r.Dir, runFile))
	if err != nil {
		return false, nil
	}
	var st stored
	if json.Unmarshal(raw, &st) != nil || st.Fingerprint != fingerprint {
		return false, nil
	}
	bad := func(err error) (bool, error) {
		return false, fmt.Errorf("resume: %s matches this run but %s cannot be read: %w", filepath.Join(r.Dir, runFile), curveFile, err)
	}
	f, err := os.Open(filepath.Join(r.Dir, curveFile))
	if err != nil {
		return bad(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return bad(err)
	}
	if want := append([]string{"step"}, metrics...); len(recs) == 0 || !slices.Equal(recs[0], want) {
		return bad(fmt.Errorf("no header %v", want))
	}
	c := NewCurve(metrics...)
	for _, rec := range recs[1:] {
		step, err := strconv.Atoi(rec[0])
		if err != nil {
			return bad(err)
		}
		v := make([]float64, len(metrics))
		for k := range v {
			if v[k], err = strconv.ParseFloat(rec[k+1], 64); err != nil {
				return bad(err)
			}
		}
		if err := c.Add(step, v...); err != nil {
			return bad(err)
		}
	}
	r.Curve, r.Steps, r.Diverged, r.Resumed = c, st.Steps, st.Diverged, true
	r.Values, r.Vectors = map[string]float64{}, map[string][]float64{}
	for k, v := range st.Values {
		r.Values[k] = float64(v)
	}
	for k, v := range st.Vectors {
		r.Vectors[k] = make([]float64, len(v))
		for i, x := range v {
			r.Vectors[k][i] = float64(x)
		}
	}
	return true, nil
}
